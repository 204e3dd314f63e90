import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A mock of pCloud's HTTP JSON API (docs/services/pcloud.md), held to the real service by the `pcloud` client
/// library from PyPI. Two region hosts (the account lives in one; its token is refused with 2094 on the other),
/// every failure HTTP 200 with a `result` code, items by ID with root `folderid=0`, case-sensitive names,
/// `listfolder` (recursive too), folders, `uploadfile` by PUT or multipart overwriting in place (the old contents
/// kept as a revision), upload sessions, `getfilelink` with expiring links served by a content host that refuses
/// stale ones, `checksumfile` per region, deletes to the trash, the `diff` feed, and pCloud's OAuth: authorize on
/// the US host redirecting with `hostname` and `locationid`, `oauth2_token` on the region's host, no refresh.
public final class MockPCloudServer: Sendable, MockOAuthService {
    public struct Settings: Sendable {
        public enum Region: String, Sendable { case us, eu }
        /// Where the account lives: its tokens work only on that region's host.
        public var region: Region = .us
        public var quotaBytes: Int64 = 10 * 1024 * 1024 * 1024
        public var clientId = "llvsMockPCloudClient"
        public var clientSecret = "llvs-mock-pcloud-secret"
        /// How long a `getfilelink` link lives.
        public var linkLifetime: TimeInterval = 4 * 3600
        /// The account's user name and password, for pCloud's sign-in without OAuth (`getauth`, `username`).
        public var username = "llvs-mock@example.com"
        public var password = "llvs-mock-password"
        public init() {}
    }

    public let settings: Settings
    /// The US API host (`api.pcloud.com`), which also serves the authorize page (`my.pcloud.com`).
    public let server: MockHTTPServer
    /// The European API host (`eapi.pcloud.com`).
    public let euServer: MockHTTPServer
    /// The download host `getfilelink` names, under two names (two "hosts" a client may try in turn).
    public let contentHost: MockContentHost
    public let oauth: MockOAuthServer
    let passwords: MockPCloudPasswordSignIn
    let state: Mutex<MockPCloudState>
    let storage: URL
    let stateDirectory: MockStateDirectory?

    /// `state`: a folder to keep the account (and the issued tokens) in between runs, loaded now and written after
    /// every change.
    public init(
        settings: Settings = Settings(), port: UInt16 = 0, faults: MockFaults = MockFaults(),
        state saved: MockStateDirectory? = nil
    ) throws {
        self.settings = settings
        passwords = MockPCloudPasswordSignIn(username: settings.username, password: settings.password)
        stateDirectory = saved
        var account = MockPCloudState()
        var tokens: MockOAuthServer.Tokens?
        if let loaded = try saved?.loadTree(
            into: &account.tree, counter: UInt64.self, attach: { $0.content = .spooled($1, size: $0.size) })
        {
            account.counter = loaded.counter
            tokens = loaded.tokens
        }
        state = Mutex(account)
        storage = try MockStorageFolder.make("pcloud")
        let box = MockBackReference<MockPCloudServer>()
        server = try MockHTTPServer(
            port: port, faults: faults, faultBody: Self.faultBody, faultCatalogue: Self.namedFaults
        ) { request in
            box.answer { $0.handle(request, host: .us) }
        }
        euServer = try MockHTTPServer(
            port: port == 0 ? 0 : port &+ 1, faults: faults, faultBody: Self.faultBody, faultCatalogue: Self.namedFaults
        ) {
            request in box.answer { $0.handle(request, host: .eu) }
        }
        contentHost = try MockContentHost(namedFaultsFrom: faults, hostName: "127.0.0.1")
        var oauthSettings = MockOAuthServer.Settings()
        oauthSettings.clientId = settings.clientId
        oauthSettings.clientSecret = settings.clientSecret
        oauthSettings.issuesRefreshTokens = false
        oauthSettings.supportsDeviceFlow = false
        oauthSettings.requiresPKCE = false
        oauthSettings.authorizePath = "/oauth2/authorize"
        oauthSettings.tokenPath = "/oauth2_token"
        oauthSettings.scope = ""
        let home = settings.region == .us ? server : euServer
        oauthSettings.extraRedirectFields = [
            ("locationid", settings.region == .us ? "1" : "2"), ("hostname", "127.0.0.1:\(home.port)"),
        ]
        oauth = MockOAuthServer(settings: oauthSettings)
        if let tokens { oauth.restore(tokens) }
        box.attach(self)
    }

    deinit { stop() }

    public func stop() {
        longPoll.stop()
        MockStorageFolder.stop([server, euServer, contentHost], removing: storage)
    }

    /// What `diff?block=1` waits on; rung after every request served.
    public let longPoll = MockLongPoll()

    /// The US API host; `llvs` and the connector are pointed here (`--endpoint`), and learn the account's region at
    /// sign-in.
    /// The API host of the account's region.
    public var homeEndpoint: URL { settings.region == .us ? server.baseURL : euServer.baseURL }
    public var log: [MockLogEntry] { server.log + euServer.log }
    var locationID: Int { settings.region == .us ? 1 : 2 }

    // MARK: For tests

    /// A token as a finished sign-in leaves it: the access token, `hostname` and `locationid` of the account's region.
    public func issueToken() -> OAuthToken {
        var token = oauth.issueToken()
        token.expiresAt = nil
        token.refreshToken = nil
        token.scope = nil
        for (name, value) in oauth.settings.extraRedirectFields { token.extras[name] = value }
        return token
    }

    /// Revokes every token, as a user removing the app's access would: later calls answer 2094.
    public func revokeTokens() { oauth.revokeAccessTokens() }
    /// The next `count` calls fail with `result` (HTTP 200), as pCloud answers 5000 when it cannot serve one.
    public func failNextCalls(_ count: Int, result: Int = 5000) {
        state.withLock { $0.failingResults += Array(repeating: result, count: count) }
    }
    /// A share of calls fail with `result` (HTTP 200).
    public func failCallsRandomly(rate: Double, result: Int = 5000, seed: UInt64 = 1) {
        state.withLock { $0.randomResult = (result, rate, SeededGenerator(seed: seed)) }
    }
    /// Makes every download link issued so far stale.
    public func expireDownloadLinks() { contentHost.expireAll() }
    /// Refuses every `diffid` handed out so far.
    public func expireChangeCursors() { state.withLock { $0.diffBase += 1_000_000_000 } }
    public func expireUploadSessions(afterWrites count: Int) {
        state.withLock { $0.sessions.piecesUntilExpiry = count }
    }
    /// Bytes written to each upload session, repeats included.
    public var uploadSessionBytes: [Int64] { state.withLock { $0.sessions.bytesSent } }
    /// Live paths (not in the trash).
    public var paths: [String] { state.withLock { $0.tree.livePaths } }
    /// Revisions an overwrite kept for the file at `path`.
    public func revisions(of path: String) -> Int {
        state.withLock { state in
            state.tree.items.values.first { state.tree.path(of: $0.id) == path && !state.tree.isTrashed($0.id) }?
                .revisions.count ?? 0
        }
    }

    // MARK: Answers

    /// pCloud's envelope for a failure: always HTTP 200.
    static func failure(_ code: Int, _ message: String) -> MockResponse {
        .json(200, ["result": code, "error": message])
    }

    /// Status faults injected at the HTTP level carry pCloud's envelope.
    static let faultBody: MockHTTPServer.FaultBody = { status in
        .json(status, ["result": 5000, "error": "Internal error. Try again later."])
    }

    // MARK: Serving

    enum Host { case us, eu }

    /// Writes the account, its ID counter and the tokens issued to the `--state` folder.
    func persist() {
        guard let directory = stateDirectory else { return }
        let tokens = oauth.tokens
        state.withLock { state in
            directory.saveTree(
                state.tree, counter: state.counter, tokens: tokens, order: { ($0.created, $0.id) < ($1.created, $1.id) }
            ) { "\($0.id)-\($0.hash)" }
        }
    }

    func handle(_ request: IncomingRequest, host: Host) -> MockResponse {
        let answer = answer(request, host: host)
        if stateDirectory != nil, answer.status == 200,
            MockPCloudCall.changingMethods.contains(String(request.path.dropFirst()))
        {
            persist()
        }
        longPoll.ring()
        return answer
    }

    private func answer(_ request: IncomingRequest, host: Host) -> MockResponse {
        if host == .us, request.method == "GET", request.path == oauth.authorizePath {
            return oauth.handle(request) ?? .empty(404)
        }
        let call: MockPCloudCall
        do {
            call = try MockPCloudCall(request)
        } catch {
            return .json(400, ["result": 1000, "error": "Malformed request: \(error)"])
        }
        if call.method == "oauth2_token" { return exchange(call, host: host) }
        if call.method == "getdigest" { return .json(200, passwords.digestAnswer()) }
        let accountHost: Host = settings.region == .us ? .us : .eu
        var issued: String?
        switch passwords.check(call.parameters) {
        case .failed:
            return Self.failure(2000, "Log in failed.")
        case .signedIn(let token):
            guard host == accountHost else { return Self.failure(2000, "Log in failed.") }
            issued = token
        case .none:
            guard let token = call.accessToken else { return Self.failure(1000, "Log in required.") }
            guard oauth.isLive(token), host == accountHost else {
                return Self.failure(2094, "Invalid 'access_token' provided.")
            }
        }
        if call.method == "logout" { return .json(200, passwords.logout(call.parameters)) }
        guard let issued else { return served(call, request) }
        return Self.adding(["auth": issued], to: served(call, request))
    }

    /// A successful JSON answer with more fields (the `auth` a `getauth` asked for).
    static func adding(_ fields: [String: Any], to response: MockResponse) -> MockResponse {
        guard case .data(let data) = response.body,
            var object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any],
            object["result"] as? Int == 0
        else { return response }
        object.merge(fields) { _, new in new }
        return .json(response.status, object)
    }

    private func served(_ call: MockPCloudCall, _ request: IncomingRequest) -> MockResponse {
        if let code = state.withLock({ $0.injectedResult() }) {
            return Self.failure(code, MockPCloudError.message(for: code))
        }
        do {
            return try serve(call, request)
        } catch let failure as MockPCloudError {
            return Self.failure(failure.code, failure.message)
        } catch {
            return Self.failure(5000, "Internal error. \(error)")
        }
    }

    /// `oauth2_token` on the region's host: the code for a token that never expires, in the result envelope.
    private func exchange(_ call: MockPCloudCall, host: Host) -> MockResponse {
        guard call.parameters["client_id"] == settings.clientId else {
            return Self.failure(2011, "Invalid 'client_id' provided.")
        }
        guard call.parameters["client_secret"] == settings.clientSecret else {
            return Self.failure(2012, "Invalid 'client_secret' provided.")
        }
        guard let code = call.parameters["code"], !code.isEmpty else {
            return Self.failure(1022, "Please provide 'code'.")
        }
        guard host == (settings.region == .us ? .us : .eu) else {
            return Self.failure(2012, "Invalid 'code' provided.")
        }
        guard let access = oauth.redeem(code: code) else { return Self.failure(2012, "Invalid 'code' provided.") }
        return .json(
            200, ["result": 0, "access_token": access, "token_type": "bearer", "uid": 4242, "locationid": locationID])
    }
}

/// A call refused in pCloud's envelope.
struct MockPCloudError: Error {
    var code: Int
    var message: String
    init(_ code: Int, _ message: String) {
        self.code = code
        self.message = message
    }

    /// pCloud's words for the codes tests inject.
    static func message(for code: Int) -> String {
        switch code {
        case 2094: "Invalid 'access_token' provided."
        case 4000: "Too many login tries from this IP address."
        case 5001: "Internal upload error."
        case 5002: "Internal error, no servers available. Try again later."
        default: "Internal error. Try again later."
        }
    }

    static let noFolder = MockPCloudError(1002, "No full path or folderid provided.")
    static let noFile = MockPCloudError(1004, "No fileid or path provided.")
    /// A `diffid` older than the mock keeps. pCloud's own code for this is not in the reference, so the mock picks
    /// one of the parameter errors' range and a client can rely only on "a final refusal of diff".
    static let diffTooOld = MockPCloudError(1005, "Invalid 'diffid' provided.")
    static let invalidName = MockPCloudError(2001, "Invalid file/folder name.")
    static let parentMissing = MockPCloudError(2002, "A component of parent directory does not exist.")
    static let exists = MockPCloudError(2004, "File or folder alredy exists.")
    static let folderMissing = MockPCloudError(2005, "Directory does not exist.")
    static let notEmpty = MockPCloudError(2006, "Folder is not empty.")
    static let root = MockPCloudError(2007, "Cannot delete the root folder.")
    static let overQuota = MockPCloudError(2008, "User is over quota.")
    static let fileMissing = MockPCloudError(2009, "File not found.")
    static let invalidPath = MockPCloudError(2010, "Invalid path.")
    static let uploadMissing = MockPCloudError(2067, "Upload not found.")
}

/// A call as pCloud reads it: the method is the path; parameters come from the query, a urlencoded body or the
/// fields of a multipart body (file parts apart); the token from `Authorization: Bearer` or `access_token`.
struct MockPCloudCall {
    var method: String
    var parameters: [String: String]
    var files: [(name: String, data: Data)] = []
    var accessToken: String?

    /// Methods after which a `--state` mock writes what it holds.
    static let changingMethods: Set<String> = [
        "createfolder", "createfolderifnotexists", "uploadfile", "upload_save", "deletefile",
        "renamefile", "renamefolder", "copyfile", "trash_restore", "trash_clear", "deletefolder",
        "deletefolderrecursive", "oauth2_token",
    ]

    init(_ request: IncomingRequest) throws {
        method = String(request.path.dropFirst())
        parameters = request.query
        let contentType = request.headers["Content-Type"] ?? ""
        if request.method == "POST", contentType.lowercased().hasPrefix("application/x-www-form-urlencoded") {
            parameters.merge(FormEncoding.decode(String(decoding: request.bodyData, as: UTF8.self))) { query, _ in query
            }
        } else if request.method == "POST", contentType.lowercased().hasPrefix("multipart/form-data") {
            guard let parts = MultipartParts.parse(request.bodyData, contentType: contentType) else {
                throw MockPCloudError(1000, "the multipart body is malformed")
            }
            for part in parts {
                if let filename = part.dispositionParameter("filename") {
                    files.append((filename, part.data))
                } else if let name = part.dispositionParameter("name") {
                    parameters[name] = String(decoding: part.data, as: UTF8.self)
                }
            }
        }
        if let header = request.headers["Authorization"], header.lowercased().hasPrefix("bearer ") {
            accessToken = String(header.dropFirst(7))
        } else {
            accessToken = parameters["access_token"]
        }
    }

    var timestamps: Bool { parameters["timeformat"] == "timestamp" }

    func flag(_ name: String) -> Bool { parameters[name].map { !["", "0", "false"].contains($0) } ?? false }

    func number(_ name: String) throws -> UInt64? {
        guard let text = parameters[name] else { return nil }
        guard let value = UInt64(text) else { throw MockPCloudError(1000, "Invalid '\(name)' provided.") }
        return value
    }
}
