import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A mock of OneDrive through Microsoft Graph v1.0 (docs/services/onedrive.md), held to the real service by
/// Microsoft's own Graph SDK: drives, items addressed by path (`root:/a/b:`, encoded `%3A`/`%2F` accepted) or by ID,
/// children pages with an absolute `@odata.nextLink`, folders with conflictBehavior, simple PUT, upload sessions
/// (320 KiB fragments, 202 + nextExpectedRanges, 416 on overlap, status and cancel) and downloads as a 302 — both on
/// a second listener that refuses an Authorization header — delete to the recycle bin, the delta feed,
/// QuickXorHash (and SHA-1 on personal drives), Graph's error bodies, and the Microsoft identity platform's
/// authorize/token/devicecode endpoints with rotating refresh tokens.
public final class MockOneDriveServer: Sendable, MockOAuthService, MockAPIService {
    public struct Settings: Sendable {
        public enum DriveType: String, Sendable { case personal, business }
        public var driveType: DriveType = .personal
        public var driveId = "b!llvsmockdrive0000"
        public var quotaBytes: Int64 = 5 * 1024 * 1024 * 1024 * 1024
        public var oauth = MockOAuthServer.Settings.microsoft
        public init() {}
    }

    public let settings: Settings
    public let server: MockHTTPServer
    /// Where upload sessions and download redirects point: another host, which refuses the account's token.
    public let contentHost: MockContentHost
    public let oauth: MockOAuthServer
    let state: Mutex<MockOneDriveState>
    let storage: URL
    let stateDirectory: MockStateDirectory?
    static let fragmentGranularity: Int64 = 320 * 1024

    /// `state`: a folder to keep the drive (and the issued tokens) in between runs, loaded now and written after
    /// every change.
    public init(
        settings: Settings = Settings(), port: UInt16 = 0, faults: MockFaults = MockFaults(),
        state saved: MockStateDirectory? = nil
    ) throws {
        self.settings = settings
        oauth = MockOAuthServer(settings: settings.oauth)
        stateDirectory = saved
        var drive = MockOneDriveState()
        if let loaded = try saved?.loadTree(
            into: &drive.tree, counter: Int.self, attach: { $0.content = .spooled($1, size: $0.size) })
        {
            drive.counter = loaded.counter
            oauth.restore(loaded.tokens)
        }
        state = Mutex(drive)
        storage = try MockStorageFolder.make("onedrive")
        let box = MockBackReference<MockOneDriveServer>()
        contentHost = try MockContentHost(namedFaultsFrom: faults, hostName: "localhost", refusesCredentials: true) {
            request in box.answer { $0.answerUploadHost(request) }
        }
        server = try box.apiServer(port: port, faults: faults)
        box.attach(self)
    }

    deinit { stop() }

    public func stop() {
        MockStorageFolder.stop([server, contentHost], removing: storage)
    }

    // MARK: For tests

    public func issueToken() -> OAuthToken { oauth.issueToken() }
    public func expireUploadSessions() { state.withLock { $0.sessions.expireAll() } }
    /// Refuses every delta link handed out so far with 410 `resyncRequired`, as Graph does when it lets one go.
    public func expireChangeCursors() { state.withLock { $0.tree.forgetChanges() } }
    public func expireUploadSessions(afterFragments count: Int) {
        state.withLock { $0.sessions.piecesUntilExpiry = count }
    }
    /// Bytes sent to each upload session, repeats included.
    public var uploadSessionBytes: [Int64] { state.withLock { $0.sessions.bytesSent } }
    /// Live paths (not in the recycle bin).
    public var paths: [String] { state.withLock { $0.tree.livePaths } }
    public func rejectNextRequests(_ count: Int) { state.withLock { $0.rejectRemaining += count } }

    // MARK: Errors

    static func error(_ status: Int, _ code: String, _ message: String, headers: HTTPHeaders = [:]) -> MockResponse {
        var response = MockResponse.json(
            status,
            [
                "error": [
                    "code": code, "message": message,
                    "innerError": ["date": MockGraphTime.format(Date()), "request-id": UUID().uuidString.lowercased()],
                ]
            ])
        for field in headers { response.headers[field.name] = field.value }
        return response
    }

    static let faultBody: MockHTTPServer.FaultBody = { status in
        switch status {
        case 429: error(429, "activityLimitReached", "The request has been throttled")
        case 503: error(503, "serviceNotAvailable", "Service unavailable")
        case 401: error(401, "InvalidAuthenticationToken", "Access token has expired or is not yet valid.")
        case 507: error(507, "quotaLimitReached", "Insufficient Space Available")
        default: error(status, "generalException", "An error occurred")
        }
    }

    // MARK: Serving

    /// Writes the drive, its ID counter and the tokens issued to the `--state` folder.
    func persist() {
        guard let directory = stateDirectory else { return }
        let tokens = oauth.tokens
        state.withLock { state in
            directory.saveTree(
                state.tree, counter: state.counter, tokens: tokens, order: { ($0.created, $0.id) < ($1.created, $1.id) }
            ) {
                "\($0.id.replacingOccurrences(of: "!", with: "-"))-\($0.contentVersion)"
            }
        }
    }

    func handle(_ request: IncomingRequest) -> MockResponse {
        let answer = answer(request)
        if stateDirectory != nil, request.method != "GET", answer.status < 300 { persist() }
        return answer
    }

    private func answer(_ request: IncomingRequest) -> MockResponse {
        if let answer = oauth.handle(Self.anyTenant(request)) { return answer }
        let path = request.path
        guard path.hasPrefix("/v1.0/") else {
            return Self.error(404, "itemNotFound", "The resource could not be found.")
        }
        let rejected = state.withLock { state -> Bool in
            guard state.rejectRemaining > 0 else { return false }
            state.rejectRemaining -= 1
            return true
        }
        guard !rejected, oauth.isAuthorized(request.headers["Authorization"]) else {
            return Self.error(
                401, "InvalidAuthenticationToken", "Access token has expired or is not yet valid.",
                headers: [
                    "WWW-Authenticate":
                        #"Bearer realm="", authorization_uri="https://login.microsoftonline.com/common/oauth2/authorize""#
                ])
        }
        do {
            return try route(request, String(path.dropFirst("/v1.0".count)))
        } catch let failure as MockGraphError {
            return Self.error(failure.status, failure.code, failure.message)
        } catch {
            return Self.error(500, "generalException", "\(error)")
        }
    }

    /// The identity platform takes any tenant in the path (`common`, `consumers`, `organizations`, an ID).
    static func anyTenant(_ request: IncomingRequest) -> IncomingRequest {
        let parts = request.target.split(separator: "/", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, parts[2].hasPrefix("oauth2/v2.0/") || parts[2].hasPrefix("v2.0/.well-known/") else {
            return request
        }
        var request = request
        request.target = "/common/" + parts[2]
        return request
    }

    /// The drive with its quota: `used` counts the recycle bin, and `deleted` is what the recycle bin holds (a walk
    /// of the items, only when the drive itself is asked for).
    var driveJSON: [String: Any] {
        let (used, deleted) = state.withLock { state in
            (
                state.tree.usage,
                state.tree.items.values.reduce(Int64(0)) { sum, item in
                    sum + (state.tree.isTrashed(item.id) ? item.content?.size ?? 0 : 0)
                }
            )
        }
        return [
            "id": settings.driveId, "driveType": settings.driveType.rawValue, "name": "OneDrive",
            "owner": ["user": ["displayName": "LLVS Mock", "id": "llvs-mock-user"]],
            "quota": [
                "total": settings.quotaBytes, "used": used, "remaining": settings.quotaBytes - used, "deleted": deleted,
                "state": "normal",
            ],
        ]
    }

    private func route(_ request: IncomingRequest, _ path: String) throws -> MockResponse {
        if path == "/me/drives" { return .json(200, ["value": [driveJSON]]) }
        let rest: Substring
        let drivePrefix: String
        if path.hasPrefix("/me/drive") {
            rest = path.dropFirst("/me/drive".count)
            drivePrefix = "/me/drive"
        } else if path.hasPrefix("/drives/") {
            let afterDrives = path.dropFirst("/drives/".count)
            let id = afterDrives.prefix { $0 != "/" }
            guard id == settings.driveId else {
                throw MockGraphError(404, "itemNotFound", "The drive \(id) could not be found.")
            }
            rest = afterDrives.dropFirst(id.count)
            drivePrefix = "/drives/\(id)"
        } else {
            throw MockGraphError(400, "invalidRequest", "Unsupported segment in \(path)")
        }
        if rest.isEmpty || rest == "/" {
            guard request.method == "GET" else {
                throw MockGraphError(405, "invalidRequest", "The method is not allowed.")
            }
            return .json(200, driveJSON)
        }
        let address = try MockGraphAddress(String(rest))
        return try serve(request, address, drivePrefix: drivePrefix)
    }
}

/// An answer Graph refuses with.
struct MockGraphError: Error {
    var status: Int
    var code: String
    var message: String
    init(_ status: Int, _ code: String, _ message: String) {
        self.status = status
        self.code = code
        self.message = message
    }
}

/// Where a request points: an anchor (the root, or an item ID), a path relative to it (`:/a/b:`), and what is asked
/// of the item (`children`, `content`, `createUploadSession`, `delta`, or the item itself). Parsed from the decoded
/// path: `:` and `/` cannot be part of a OneDrive name, so `%3A` and `%2F` mean the same as `:` and `/`.
struct MockGraphAddress {
    enum Anchor { case root, item(String) }
    var anchor: Anchor
    var relative: [String] = []
    var action = ""

    init(anchor: Anchor, relative: [String], action: String) {
        self.anchor = anchor
        self.relative = relative
        self.action = action
    }

    init(_ text: String) throws {
        var rest = Substring(text)
        if rest.hasPrefix("/root") {
            anchor = .root
            rest = rest.dropFirst("/root".count)
        } else if rest.hasPrefix("/items/") {
            let afterItems = rest.dropFirst("/items/".count)
            let id = afterItems.prefix { $0 != "/" && $0 != ":" }
            anchor = id == "root" ? .root : .item(String(id))
            rest = afterItems.dropFirst(id.count)
        } else {
            throw MockGraphError(400, "invalidRequest", "Unsupported segment in \(text)")
        }
        if rest.hasPrefix(":") {
            rest = rest.dropFirst()
            let end = rest.firstIndex(of: ":") ?? rest.endIndex
            relative = rest[..<end].split(separator: "/").map(String.init)
            rest = end < rest.endIndex ? rest[rest.index(after: end)...] : ""
        }
        while rest.hasSuffix("/") { rest = rest.dropLast() }
        action = rest.hasPrefix("/") ? String(rest.dropFirst()) : String(rest)
    }
}

extension MockOAuthServer.Settings {
    /// The Microsoft identity platform v2: `/{tenant}/oauth2/v2.0/authorize|token|devicecode`, a public client (no
    /// secret), PKCE checked when the authorize request gave a challenge but not demanded (as for a desktop app's
    /// registration), the redirect URI repeated in the code exchange, rotating refresh tokens, AADSTS descriptions,
    /// Graph's 401 body.
    public static var microsoft: MockOAuthServer.Settings {
        var settings = MockOAuthServer.Settings()
        settings.clientId = "00000000-0000-0000-0000-00000011ad5e"
        settings.clientSecret = nil
        settings.authorizePath = "/common/oauth2/v2.0/authorize"
        settings.tokenPath = "/common/oauth2/v2.0/token"
        settings.devicePath = "/common/oauth2/v2.0/devicecode"
        settings.requiresPKCE = false
        settings.exchangeNeedsRedirectURI = true
        settings.tokenType = "Bearer"
        settings.accessTokenLifetime = 3599
        settings.rotatesRefreshTokens = true
        settings.scope = "Files.ReadWrite offline_access"
        settings.invalidGrantDescription =
            "AADSTS70000: The provided value for the 'refresh_token' is not valid. The refresh token has expired or been revoked."
        settings.unauthorizedBody =
            #"{"error":{"code":"InvalidAuthenticationToken","message":"Access token has expired or is not yet valid.","innerError":{}}}"#
        settings.openIDConfigurationPath = "/common/v2.0/.well-known/openid-configuration"
        settings.issuesIDTokens = true
        settings.refusesSecretFromPublicClient = true
        return settings
    }
}
