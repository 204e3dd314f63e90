import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A mock of Box API 2.0 (docs/services/box.md), held to the real service by Box's own Python SDK
/// (box-sdk-gen): the API at `/2.0`, the upload host at `/api/2.0` (as the SDK lays out `api.box.com` and
/// `upload.box.com/api`), IDs with root "0", case-insensitive unique names, marker and offset paging, `fields`,
/// folder creation with 409 conflicts, multipart uploads (attributes before the file), new versions, preflight,
/// chunked upload sessions (part size, Content-Range and Digest checked, parts listing, commit with 202 while
/// processing, abort, expiry), downloads as a 302 to a second listener, trash and recursive delete, the event
/// stream, Box's error bodies, a rate limit, and OAuth with single-use refresh tokens.
public final class MockBoxServer: Sendable, MockOAuthService, MockAPIService {
    public struct Settings: Sendable {
        public var quotaBytes: Int64 = 10 * 1024 * 1024 * 1024
        /// Box accepts upload sessions only for files of this size and more, and direct uploads up to `directUploadLimit`.
        public var minimumSessionSize: Int64 = 20_000_000
        public var directUploadLimit: Int64 = 50 * 1024 * 1024
        /// The part size sessions ask for (Box: 8 MiB for files under 500 MB).
        public var partSize: Int64 = 8 * 1024 * 1024
        public var sessionLifetime: TimeInterval = 7 * 24 * 3600
        /// Requests allowed per window before 429 `rate_limit_exceeded` (nil: no limit).
        public var requestsPerWindow: Int?
        public var rateWindow: TimeInterval = 60
        /// The clock the rate window counts on; a test gives one it moves, so a window passes without waiting.
        public var now: @Sendable () -> Date = { Date() }
        public var oauth = MockOAuthServer.Settings.box
        public init() {}
    }

    public let settings: Settings
    public let server: MockHTTPServer
    /// dl.boxcloud.com: where downloads redirect, another host by name, reached without the token.
    public let contentHost: MockContentHost
    public let oauth: MockOAuthServer
    let state: Mutex<MockBoxState>
    let storage: URL
    private let window = Mutex<[Date]>([])

    let stateDirectory: MockStateDirectory?

    /// `state`: a folder to keep the account (and the issued tokens) in between runs, loaded now and written after
    /// every change.
    public init(
        settings: Settings = Settings(), port: UInt16 = 0, faults: MockFaults = MockFaults(),
        state saved: MockStateDirectory? = nil
    ) throws {
        self.settings = settings
        oauth = MockOAuthServer(settings: settings.oauth)
        stateDirectory = saved
        var account = MockBoxState()
        if let loaded = try saved?.loadTree(
            into: &account.tree, counter: Int.self, attach: { $0.content = .spooled($1, size: $0.size) })
        {
            account.counter = loaded.counter
            oauth.restore(loaded.tokens)
        }
        state = Mutex(account)
        storage = try MockStorageFolder.make("box")
        let box = MockBackReference<MockBoxServer>()
        contentHost = try MockContentHost(namedFaultsFrom: faults, hostName: "localhost")
        server = try box.apiServer(port: port, faults: faults)
        box.attach(self)
    }

    deinit { stop() }

    public func stop() {
        longPoll.stop()
        MockStorageFolder.stop([server, contentHost], removing: storage)
    }

    /// What the event stream's long poll waits on; rung after every request served.
    public let longPoll = MockLongPoll()

    // MARK: For tests

    public func issueToken() -> OAuthToken { oauth.issueToken() }
    /// The next `count` API requests answer 401, as for a revoked token, whatever token they carry.
    public func rejectNextRequests(_ count: Int) { state.withLock { $0.rejectRemaining += count } }
    /// The next `count` downloads answer 202 + Retry-After (the file is not ready yet).
    public func delayDownloads(_ count: Int) { state.withLock { $0.downloadsNotReady += count } }
    /// Commits of sessions opened from now on answer 202 + Retry-After `count` times before they succeed.
    public func keepProcessingCommits(_ count: Int) { state.withLock { $0.processingCommits = count } }
    public func expireUploadSessions(afterParts count: Int) { state.withLock { $0.sessions.piecesUntilExpiry = count } }
    /// Refuses every stream position handed out so far.
    public func expireChangeCursors() { state.withLock { $0.eventBase += 1_000_000_000 } }
    /// Bytes sent to each upload session, repeats included.
    public var uploadSessionBytes: [Int64] { state.withLock { $0.sessions.bytesSent } }
    /// Live paths (not in the trash).
    public var paths: [String] { state.withLock { $0.tree.livePaths } }
    /// Versions kept before the current one, for the file at `path`.
    public func earlierVersions(of path: String) -> Int {
        state.withLock { state in
            state.tree.items.values.first { state.tree.path(of: $0.id) == path && !state.tree.isTrashed($0.id) }?
                .earlierVersions ?? 0
        }
    }

    // MARK: Errors

    static func error(
        _ status: Int, _ code: String, _ message: String, context: [String: Any]? = nil, headers: HTTPHeaders = [:]
    ) -> MockResponse {
        var object: [String: Any] = [
            "type": "error", "status": status, "code": code, "message": message,
            "help_url": "http://developers.box.com/docs/#errors",
            "request_id": String(UUID().uuidString.prefix(13)).lowercased(),
        ]
        if let context { object["context_info"] = context }
        var response = MockResponse.json(status, object)
        for field in headers { response.headers[field.name] = field.value }
        return response
    }

    static let faultBody: MockHTTPServer.FaultBody = { status in
        switch status {
        case 429: error(429, "rate_limit_exceeded", "Request rate limit exceeded, please try again later")
        case 503: error(503, "unavailable", "Unavailable")
        case 401: MockResponse(status: 401, headers: unauthorizedHeaders)
        default: error(status, "internal_server_error", "Internal Server Error")
        }
    }

    static let unauthorizedHeaders: HTTPHeaders = [
        "WWW-Authenticate":
            #"Bearer realm="Service", error="invalid_token", error_description="The access token provided is invalid.""#
    ]

    // MARK: Serving

    /// Writes the account, its ID counter and the tokens issued to the `--state` folder.
    func persist() {
        guard let directory = stateDirectory else { return }
        let tokens = oauth.tokens
        state.withLock { state in
            directory.saveTree(
                state.tree, counter: state.counter, tokens: tokens, order: { ($0.created, $0.id) < ($1.created, $1.id) }
            ) { "\($0.id)-\($0.versionID)" }
        }
    }

    func handle(_ request: IncomingRequest) -> MockResponse {
        let answer = respond(request)
        // Anything that changed the account, or issued tokens, is written out when a state folder is kept.
        if stateDirectory != nil, request.method != "GET", request.method != "OPTIONS", answer.status < 300 {
            persist()
        }
        longPoll.ring()
        return answer
    }

    private func respond(_ request: IncomingRequest) -> MockResponse {
        var oauthRequest = request
        if request.path == "/api/oauth2/token" { oauthRequest.target = "/oauth2/token" }  // where older clients send it
        if let answer = oauth.handle(oauthRequest) { return answer }
        if let limit = settings.requestsPerWindow, !admit(limit) {
            return Self.error(
                429, "rate_limit_exceeded", "Request rate limit exceeded, please try again later",
                headers: ["retry-after": String(Int(settings.rateWindow.rounded(.up)))])
        }
        let rejected = state.withLock { state -> Bool in
            guard state.rejectRemaining > 0 else { return false }
            state.rejectRemaining -= 1
            return true
        }
        guard !rejected, oauth.isAuthorized(request.headers["Authorization"]) else {
            return MockResponse(status: 401, headers: Self.unauthorizedHeaders)
        }
        let path = request.path
        do {
            if path.hasPrefix("/api/2.0/") {
                return try upload(
                    request, Array(path.dropFirst("/api/2.0/".count).split(separator: "/").map(String.init)))
            }
            if path.hasPrefix("/2.0/") {
                return try api(request, Array(path.dropFirst("/2.0/".count).split(separator: "/").map(String.init)))
            }
            throw MockBoxError.notFound
        } catch let failure as MockBoxError {
            return Self.error(failure.status, failure.code, failure.message, context: failure.context)
        } catch {
            return Self.error(500, "internal_server_error", "\(error)")
        }
    }

    /// A rolling window of request times: more than `limit` in `rateWindow` is refused.
    private func admit(_ limit: Int) -> Bool {
        let now = settings.now()
        return window.withLock { times in
            times.removeAll { now.timeIntervalSince($0) >= settings.rateWindow }
            guard times.count < limit else { return false }
            times.append(now)
            return true
        }
    }

    private func api(_ request: IncomingRequest, _ parts: [String]) throws -> MockResponse {
        switch (request.method, parts.first ?? "", parts.count) {
        case ("GET", "users", 2) where parts[1] == "me": return userInfo()
        case ("POST", "folders", 1): return try createFolder(request)
        case ("GET", "folders", 3) where parts[1] == "trash" && parts[2] == "items": return try trashItems(request)
        case ("GET", "folders", 2): return try folder(parts[1], request)
        case ("PUT", "folders", 2): return try updateItem(parts[1], folder: true, request)
        case ("PUT", "files", 2): return try updateItem(parts[1], folder: false, request)
        case ("POST", "folders", 3) where parts[2] == "copy": return try copyItem(parts[1], folder: true, request)
        case ("POST", "files", 3) where parts[2] == "copy": return try copyItem(parts[1], folder: false, request)
        case ("POST", "folders", 2): return try restore(parts[1], folder: true, request)
        case ("POST", "files", 2): return try restore(parts[1], folder: false, request)
        case ("GET", "folders", 3) where parts[2] == "trash": return try trashedInfo(parts[1], folder: true, request)
        case ("GET", "files", 3) where parts[2] == "trash": return try trashedInfo(parts[1], folder: false, request)
        case ("DELETE", "folders", 3) where parts[2] == "trash": return try purge(parts[1], folder: true)
        case ("DELETE", "files", 3) where parts[2] == "trash": return try purge(parts[1], folder: false)
        case ("GET", "folders", 3) where parts[2] == "items": return try items(parts[1], request)
        case ("DELETE", "folders", 2): return try deleteFolder(parts[1], request)
        case ("OPTIONS", "files", 2) where parts[1] == "content": return try preflight(request)
        case ("GET", "files", 2): return try file(parts[1], request)
        case ("GET", "files", 3) where parts[2] == "content": return try download(parts[1], request)
        case ("DELETE", "files", 2): return try deleteFile(parts[1])
        case ("GET", "events", 1): return try events(request)
        case ("OPTIONS", "events", 1): return longPollURL()
        case ("GET", "events", 2) where parts[1] == "subscribe": return try subscribe(request)
        default: throw MockBoxError(405, "method_not_allowed", "Method Not Allowed")
        }
    }

    private func upload(_ request: IncomingRequest, _ parts: [String]) throws -> MockResponse {
        guard parts.first == "files" else { throw MockBoxError.notFound }
        switch (request.method, Array(parts.dropFirst())) {
        case ("POST", ["content"]): return try uploadFile(request, existing: nil)
        case ("POST", let rest) where rest.count == 2 && rest[1] == "content":
            return try uploadFile(request, existing: rest[0])
        case ("POST", ["upload_sessions"]): return try openSession(request, existing: nil)
        case ("POST", let rest) where rest.count == 2 && rest[1] == "upload_sessions":
            return try openSession(request, existing: rest[0])
        case ("PUT", let rest) where rest.count == 2 && rest[0] == "upload_sessions":
            return try uploadPart(rest[1], request)
        case ("GET", let rest) where rest.count == 2 && rest[0] == "upload_sessions": return try sessionStatus(rest[1])
        case ("GET", let rest) where rest.count == 3 && rest[0] == "upload_sessions" && rest[2] == "parts":
            return try listParts(rest[1], request)
        case ("POST", let rest) where rest.count == 3 && rest[0] == "upload_sessions" && rest[2] == "commit":
            return try commit(rest[1], request)
        case ("DELETE", let rest) where rest.count == 2 && rest[0] == "upload_sessions": return try abort(rest[1])
        default: throw MockBoxError(405, "method_not_allowed", "Method Not Allowed")
        }
    }
}

/// An answer Box refuses with, in its error body.
struct MockBoxError: Error {
    var status: Int
    var code: String
    var message: String
    /// The body's `context_info`, kept as JSON: an error crosses tasks, and a dictionary of `Any` is not Sendable.
    private var contextJSON: Data?

    init(_ status: Int, _ code: String, _ message: String, context: [String: Any]? = nil) {
        self.status = status
        self.code = code
        self.message = message
        self.contextJSON = context.flatMap { try? JSONSerialization.data(withJSONObject: $0) }
    }

    var context: [String: Any]? {
        contextJSON.flatMap { try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }
    }

    static let notFound = MockBoxError(404, "not_found", "Not Found")
}

extension MockOAuthServer.Settings {
    /// Box's OAuth 2: a confidential client, no PKCE and no device flow, 60-minute access tokens, and refresh tokens
    /// that work once (every refresh returns a new one; the old one answers invalid_grant).
    public static var box: MockOAuthServer.Settings {
        var settings = MockOAuthServer.Settings()
        settings.clientId = "llvsmockboxclient0000000000000000"
        settings.clientSecret = "llvs-mock-box-secret"
        settings.authorizePath = "/api/oauth2/authorize"
        settings.tokenPath = "/oauth2/token"
        settings.tokenType = "bearer"
        settings.accessTokenLifetime = 3600
        settings.rotatesRefreshTokens = true
        settings.singleUseRefreshTokens = true
        settings.supportsDeviceFlow = false
        settings.requiresPKCE = false
        settings.scope = "root_readwrite"
        settings.invalidGrantDescription = "Invalid refresh token"
        settings.codeLifetime = 30
        settings.unauthorizedBody = ""
        return settings
    }
}
