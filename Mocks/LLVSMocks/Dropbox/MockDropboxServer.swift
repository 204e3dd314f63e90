import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A mock of Dropbox API v2 (docs/services/dropbox.md), held to the real service by Dropbox's own Python SDK: the
/// routes of the API, content and notify hosts on one port under `/2/` (RPC calls with JSON bodies, uploads and
/// downloads with `Dropbox-API-Arg`, which must be header-safe ASCII, downloads answering `Dropbox-API-Result`),
/// paths compared without regard to case, parents made by a write, write modes and conflicts, upload sessions with
/// `incorrect_offset` and `correct_offset`, `content_hash` computed and checked, `list_folder` cursors over a journal
/// of changes (`reset` when let go), the long poll, Dropbox's error bodies (`error_summary` and the tagged `error`),
/// a full account, and OAuth with PKCE, offline refresh tokens and short-lived access tokens.
public final class MockDropboxServer: Sendable, MockOAuthService, MockAPIService {
    public struct Settings: Sendable {
        public var quotaBytes: Int64 = 2 * 1024 * 1024 * 1024 * 1024
        /// The most bytes one upload request may carry (Dropbox: 150 MiB).
        public var requestLimit: Int64 = 150 * 1024 * 1024
        /// Sent as `backoff` with every long-poll answer (nil: none), for clients that must honour it.
        public var longpollBackoff: Int?
        public var oauth = MockOAuthServer.Settings.dropbox
        public init() {}
    }

    public let settings: Settings
    public let server: MockHTTPServer
    public let oauth: MockOAuthServer
    let state: Mutex<MockDropboxState>
    let storage: URL
    let stateDirectory: MockStateDirectory?
    /// What `list_folder/longpoll` waits on; rung after every request served.
    public let longPoll = MockLongPoll()

    /// `state`: a folder to keep the account (and the issued tokens) in between runs, loaded now and written after
    /// every change. Cursors handed out before a restart are let go (`reset`).
    public init(
        settings: Settings = Settings(), port: UInt16 = 0, faults: MockFaults = MockFaults(),
        state saved: MockStateDirectory? = nil
    ) throws {
        self.settings = settings
        oauth = MockOAuthServer(settings: settings.oauth)
        stateDirectory = saved
        var account = MockDropboxState()
        if let loaded = try saved?.loadTree(
            into: &account.tree, counter: Int.self, attach: { $0.content = .spooled($1, size: $0.size) })
        {
            account.counter = loaded.counter
            oauth.restore(loaded.tokens)
        }
        state = Mutex(account)
        storage = try MockStorageFolder.make("dropbox")
        let box = MockBackReference<MockDropboxServer>()
        server = try box.apiServer(port: port, faults: faults)
        box.attach(self)
    }

    deinit { stop() }

    public func stop() {
        longPoll.stop()
        MockStorageFolder.stop([server], removing: storage)
    }

    /// The account's ID: `dbid:` and 35 characters, 40 in all, as Dropbox's SDK checks.
    public static let accountID = "dbid:AADllvsmockaccount00000000000000000"

    // MARK: For tests

    public func issueToken() -> OAuthToken { oauth.issueToken() }
    /// The next `count` requests answer 401 `invalid_access_token`, as for a revoked token, whatever they carry.
    public func rejectNextRequests(_ count: Int) { state.withLock { $0.rejectRemaining += count } }
    /// Lets go of every cursor handed out so far: `list_folder/continue` and the long poll answer `reset`.
    public func expireChangeCursors() {
        state.withLock { $0.journalBase += 1_000_000_000 }
    }
    public func expireUploadSessions() { state.withLock { $0.sessions.expireAll() } }
    public func expireUploadSessions(afterAppends count: Int) {
        state.withLock { $0.sessions.piecesUntilExpiry = count }
    }
    /// Bytes sent to each upload session, repeats included.
    public var uploadSessionBytes: [Int64] { state.withLock { $0.sessions.bytesSent } }
    /// Live paths, as stored (display case).
    public var paths: [String] { state.withLock { $0.tree.livePaths } }
    /// The content hash the mock computed for the file at `path`.
    public func contentHash(of path: String) -> String? {
        state.withLock { state in
            state.item(at: path.split(separator: "/").map(String.init))?.contentHash
        }
    }

    // MARK: Serving

    /// Writes the account, its counter and the tokens issued to the `--state` folder.
    func persist() {
        guard let directory = stateDirectory else { return }
        let tokens = oauth.tokens
        state.withLock { state in
            directory.saveTree(
                state.tree, counter: state.counter, tokens: tokens,
                order: { ($0.serverModified, $0.id) < ($1.serverModified, $1.id) }
            ) { "\($0.id.dropFirst(3))-\($0.rev)" }
        }
    }

    func handle(_ request: IncomingRequest) -> MockResponse {
        var answer = respond(request)
        // Dropbox types its JSON answers exactly so, and its SDK checks the header as a whole.
        if answer.headers["Content-Type"] == "application/json; charset=utf-8" {
            answer.headers["Content-Type"] = "application/json"
        }
        if stateDirectory != nil, answer.status < 300, !Self.readOnlyRoutes.contains(request.path) { persist() }
        longPoll.ring()
        return answer
    }

    static let readOnlyRoutes: Set<String> = [
        "/2/files/get_metadata", "/2/files/list_folder", "/2/files/list_folder/continue",
        "/2/files/list_folder/get_latest_cursor", "/2/files/list_folder/longpoll", "/2/files/download",
        "/2/users/get_current_account", "/2/users/get_space_usage",
    ]

    private func respond(_ request: IncomingRequest) -> MockResponse {
        if let answer = oauth.handle(request) { return answer }
        let path = request.path
        guard path.hasPrefix("/2/") else { return .text(404, "Unknown API host path \(path)") }
        let route = String(path.dropFirst("/2/".count))
        guard request.method == "POST" || (request.method == "GET" && route == "files/download") else {
            return .text(405, "Error in call to API function \"\(route)\": Only POST is allowed")
        }
        do {
            // The notify host's long poll takes no token: the cursor is the credential.
            if route == "files/list_folder/longpoll" { return try longpoll(try rpcArgument(request, route)) }
            try authorize(request, route)
            if server.faults.fires("write-contention", method: request.method, path: request.path) {
                throw Self.writeError(route, ["too_many_write_operations"])
            }
            if server.faults.fires("insufficient-space", method: request.method, path: request.path) {
                throw Self.writeError(route, ["insufficient_space"])
            }
            switch route {
            case "files/upload": return try upload(request, try contentArgument(request, route))
            case "files/upload_session/start": return try startSession(request, try contentArgument(request, route))
            case "files/upload_session/append_v2":
                return try appendSession(request, try contentArgument(request, route))
            case "files/upload_session/finish": return try finishSession(request, try contentArgument(request, route))
            case "files/download": return try download(request, try contentArgument(request, route, download: true))
            default: return try rpc(route, try rpcArgument(request, route))
            }
        } catch let failure as MockDropboxError {
            return failure.response
        } catch {
            return .text(500, "Internal Server Error: \(error)")
        }
    }

    /// A write refused (`tags` of a `WriteError`) in the shape of the route's own error union.
    static func writeError(_ route: String, _ tags: [String]) -> MockDropboxError {
        switch route {
        case "files/upload": uploadError(tags)
        case "files/upload_session/finish" where tags == ["too_many_write_operations"]: .route(tags)
        case "files/delete_v2": .route(["path_write"] + tags)
        case "files/move_v2", "files/copy_v2": .route(tags == ["too_many_write_operations"] ? tags : ["to"] + tags)
        default: .route(["path"] + tags)
        }
    }

    private func rpc(_ route: String, _ argument: [String: Any]) throws -> MockResponse {
        switch route {
        case "files/get_metadata": return try getMetadata(argument)
        case "files/list_folder": return try listFolder(argument)
        case "files/list_folder/continue": return try continueListing(argument)
        case "files/list_folder/get_latest_cursor": return try latestCursor(argument)
        case "files/create_folder_v2": return try createFolder(argument)
        case "files/delete_v2": return try delete(argument)
        case "files/move_v2": return try relocate(argument, copying: false)
        case "files/copy_v2": return try relocate(argument, copying: true)
        case "users/get_current_account": return currentAccount()
        case "users/get_space_usage": return spaceUsage()
        default: throw MockDropboxError.text(400, "Unknown API function: \"\(route)\"")
        }
    }

    /// A valid bearer token, or 401 with Dropbox's auth error.
    private func authorize(_ request: IncomingRequest, _ route: String) throws {
        let rejected = state.withLock { state -> Bool in
            guard state.rejectRemaining > 0 else { return false }
            state.rejectRemaining -= 1
            return true
        }
        guard let header = request.headers["Authorization"] else {
            throw MockDropboxError.text(
                400,
                "Error in call to API function \"\(route)\": Must provide HTTP header \"Authorization\" or URL parameter \"authorization\"."
            )
        }
        if rejected { throw MockDropboxError.auth("invalid_access_token") }
        guard oauth.isAuthorized(header) else { throw MockDropboxError.auth("expired_access_token") }
    }

    /// An RPC argument: a JSON body sent as `application/json` (a void argument as `null` or nothing).
    private func rpcArgument(_ request: IncomingRequest, _ route: String) throws -> [String: Any] {
        let type = request.headers["Content-Type"]?.lowercased() ?? ""
        let data = request.bodyData
        guard
            type.hasPrefix("application/json") || type == "text/plain; charset=dropbox-cors-hack"
                || (data.isEmpty && type.isEmpty)
        else {
            throw MockDropboxError.text(
                400,
                "Error in call to API function \"\(route)\": Bad HTTP \"Content-Type\" header: \"\(type)\".  Expecting one of \"application/json\", \"application/json; charset=utf-8\", \"text/plain; charset=dropbox-cors-hack\"."
            )
        }
        if data.isEmpty || data == Data("null".utf8) { return [:] }
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw MockDropboxError.text(
                400, "Error in call to API function \"\(route)\": request body: could not decode input as JSON")
        }
        return object
    }

    /// A content route's argument: the `Dropbox-API-Arg` header (printable ASCII only: anything else must be sent as
    /// `\uXXXX`) or the `arg` URL parameter. The body is bytes, sent as `application/octet-stream` (a download may
    /// send no type at all).
    private func contentArgument(
        _ request: IncomingRequest, _ route: String, download: Bool = false
    ) throws -> [String: Any] {
        let type = request.headers["Content-Type"]?.lowercased() ?? ""
        let accepted = [
            "application/octet-stream", "application/octet-stream; charset=utf-8", "text/plain",
            "text/plain; charset=utf-8",
        ]
        guard accepted.contains(type) || (download && type.isEmpty) else {
            throw MockDropboxError.text(
                400,
                "Error in call to API function \"\(route)\": Bad HTTP \"Content-Type\" header: \"\(type)\".  Expecting one of \"application/octet-stream\", \"text/plain; charset=dropbox-cors-hack\"."
            )
        }
        let text: String
        if let header = request.headers["Dropbox-API-Arg"] {
            guard HeaderSafeJSON.isSafe(header) else {
                throw MockDropboxError.text(
                    400,
                    "Error in call to API function \"\(route)\": HTTP header \"Dropbox-API-Arg\": could not decode input as JSON: characters outside ASCII must be escaped"
                )
            }
            text = header
        } else if let query = request.query["arg"] {
            text = query
        } else {
            throw MockDropboxError.text(
                400,
                "Error in call to API function \"\(route)\": Must provide HTTP header \"Dropbox-API-Arg\" or URL parameter \"arg\"."
            )
        }
        guard let object = try? JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
            throw MockDropboxError.text(
                400,
                "Error in call to API function \"\(route)\": HTTP header \"Dropbox-API-Arg\": could not decode input as JSON"
            )
        }
        return object
    }

    private func currentAccount() -> MockResponse {
        .json(
            200,
            [
                "account_id": MockDropboxServer.accountID, "email": "llvs@example.com",
                "email_verified": true, "disabled": false, "locale": "en", "referral_link": "https://db.tt/llvsmock",
                "is_paired": false, "country": "US",
                "name": [
                    "given_name": "LLVS", "surname": "Mock", "familiar_name": "LLVS", "display_name": "LLVS Mock",
                    "abbreviated_name": "LM",
                ],
                "account_type": [".tag": "basic"],
                "root_info": [
                    ".tag": "user", "root_namespace_id": "3235641", "home_namespace_id": "3235641",
                ],
            ])
    }

    private func spaceUsage() -> MockResponse {
        let used = state.withLock { $0.tree.usage }
        return .json(
            200, ["used": used, "allocation": [".tag": "individual", "allocated": settings.quotaBytes]])
    }

    static let faultBody: MockHTTPServer.FaultBody = { status in
        switch status {
        case 429:
            MockDropboxError.rateLimited("too_many_requests", retryAfter: 1).response
        case 401: MockDropboxError.auth("expired_access_token").response
        default: .text(status, "Internal Server Error")
        }
    }
}

extension MockOAuthServer.Settings {
    /// Dropbox's OAuth 2: `/oauth2/authorize` (www.dropbox.com) and `/oauth2/token` (the API host), PKCE for apps
    /// without a secret, a refresh token only with `token_access_type=offline`, four-hour access tokens, the refresh
    /// token kept (never rotated), `uid` and `account_id` in the token answer.
    public static var dropbox: MockOAuthServer.Settings {
        var settings = MockOAuthServer.Settings()
        settings.clientId = "llvsmockdropboxkey"
        settings.clientSecret = nil
        settings.authorizePath = "/oauth2/authorize"
        settings.tokenPath = "/oauth2/token"
        settings.tokenType = "bearer"
        settings.accessTokenLifetime = 14_400
        settings.rotatesRefreshTokens = false
        settings.supportsDeviceFlow = false
        settings.requiresPKCE = false
        settings.exchangeNeedsRedirectURI = true
        settings.refreshTokenNeedsOfflineAccess = true
        settings.offlineAccessParameter = "token_access_type"
        settings.scope = "files.content.read files.content.write files.metadata.read files.metadata.write"
        settings.extraTokenFields = ["uid": "12345678", "account_id": MockDropboxServer.accountID]
        settings.invalidGrantDescription = "refresh token is invalid or revoked"
        settings.unauthorizedBody =
            #"{"error_summary": "expired_access_token/..", "error": {".tag": "expired_access_token"}}"#
        return settings
    }
}
