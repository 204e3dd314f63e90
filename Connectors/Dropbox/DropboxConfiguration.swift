import Foundation
import LLVS
import LLVSHTTP

/// Where Dropbox is and how the connector uses it (docs/services/dropbox.md). The three hosts are settings, so the
/// same client talks to the mock in tests: RPC calls go to the API host, uploads and downloads to the content host,
/// the long poll to the notify host.
public struct DropboxConfiguration: Sendable {
    public var apiURL = URL(string: "https://api.dropboxapi.com/2")!
    public var contentURL = URL(string: "https://content.dropboxapi.com/2")!
    public var notifyURL = URL(string: "https://notify.dropboxapi.com/2")!
    /// Files up to this size go up in one `files/upload` (Dropbox takes at most 150 MiB per request); larger ones
    /// through an upload session, `chunkSize` per request.
    public var simpleUploadLimit: Int64 = 48 * 1024 * 1024
    /// Bytes per `upload_session/append_v2`: a multiple of Dropbox's 4 MiB block, at most 150 MiB.
    public var chunkSize: Int64 = 48 * 1024 * 1024 {
        didSet { chunkSize = max(Self.blockSize, min(chunkSize, 150 * 1024 * 1024) / Self.blockSize * Self.blockSize) }
    }
    /// Entries asked for per listing page (Dropbox's most is 2000, and it treats the number as a hint).
    public var pageSize = 2000
    /// Pages of one listing or feed before the server counts as looping.
    public var maximumPages = 20_000
    /// The longest `list_folder/longpoll` asked for (Dropbox takes 30 to 480 seconds).
    public var longestPoll: Duration = .seconds(480)

    /// Dropbox's block: the unit of its content hash, and of upload-session pieces.
    public static let blockSize: Int64 = 4 * 1024 * 1024
    /// The shortest long poll Dropbox takes; a shorter wait is one look at the feed instead.
    public static let shortestPoll: Duration = .seconds(30)

    public init() {}

    /// The mock's (or a proxy's) host, serving all three hosts' routes at `BASE/2`.
    public init(endpoint: URL) {
        let base = endpoint.appendingPathComponent("2")
        apiURL = base
        contentURL = base
        notifyURL = base
    }

    /// Dropbox's OAuth 2: authorization code with PKCE and `token_access_type=offline`, so the sign-in gives a
    /// refresh token beside the short-lived access token (Dropbox keeps the refresh token: it does not rotate). The
    /// secret is optional: an app registered for PKCE needs none. `endpoint` replaces Dropbox's hosts with one.
    public static func oauth(clientId: String, clientSecret: String?, endpoint: URL? = nil) -> OAuthConfiguration {
        let authorize = (endpoint ?? URL(string: "https://www.dropbox.com")!).appendingPathComponent("oauth2/authorize")
        let token = (endpoint ?? URL(string: "https://api.dropboxapi.com")!).appendingPathComponent("oauth2/token")
        var configuration = OAuthConfiguration(
            authorizationURL: authorize, tokenURL: token, clientId: clientId, clientSecret: clientSecret,
            clientAuthentication: .body, extraAuthorizationParameters: [("token_access_type", "offline")])
        // Dropbox accepts only a redirect URI registered with the app, port included (rclone registers this one).
        configuration.loopbackPort = endpoint == nil ? 53682 : nil
        return configuration
    }
}
