import Foundation
import LLVS
import LLVSHTTP

/// Where Box is and how the connector uses it (docs/services/box.md). The API, upload and OAuth hosts are
/// settings, so the same client talks to the mock in tests.
public struct BoxConfiguration: Sendable {
    public var apiURL = URL(string: "https://api.box.com/2.0")!
    public var uploadURL = URL(string: "https://upload.box.com/api/2.0")!
    /// Files of this size and more go up through a chunked upload session (Box accepts sessions only from 20 MB);
    /// smaller ones in one multipart request.
    public var chunkedUploadMinimum: Int64 = 20_000_000
    /// Items per page of a folder listing (Box's maximum is 1000).
    public var pageSize = 1000
    /// Files of this size and more are preceded by a preflight (`OPTIONS /files/content`), so a name in use or a
    /// full account is known before the bytes are sent; smaller ones are sent at once.
    public var preflightMinimum: Int64 = 1024 * 1024
    /// Events per page of the event stream (Box's most is 500).
    public var eventPageSize = 500
    /// Pages of one listing before the server counts as looping.
    public var maximumPages = 20_000
    /// How many times, and for how long in all, a commit answered 202 (parts still processing) is asked again.
    public var maximumCommitWaits = 30
    public var maximumCommitWait: Duration = .seconds(300)

    public init() {}

    /// The mock's (or a proxy's) host: the API at `BASE/2.0`, uploads at `BASE/api/2.0`, as Box's own SDK lays out
    /// `api.box.com` and `upload.box.com/api`.
    public init(endpoint: URL) {
        apiURL = endpoint.appendingPathComponent("2.0")
        uploadURL = endpoint.appendingPathComponent("api/2.0")
    }

    func api(_ path: String, _ query: [(String, String)] = []) throws -> URL {
        try URLEscaping.url(apiURL, path, query)
    }

    func upload(_ path: String, _ query: [(String, String)] = []) throws -> URL {
        try URLEscaping.url(uploadURL, path, query)
    }

    /// Box's OAuth 2: a confidential client (the secret is required), no device flow, single-use refresh tokens
    /// (the shared token source writes each new one to disk under the file's lock before it is used).
    /// `endpoint` replaces Box's hosts with one (the mock's).
    public static func oauth(clientId: String, clientSecret: String, endpoint: URL? = nil) -> OAuthConfiguration {
        let authorize = (endpoint ?? URL(string: "https://account.box.com")!).appendingPathComponent(
            "api/oauth2/authorize")
        let token = (endpoint ?? URL(string: "https://api.box.com")!).appendingPathComponent("oauth2/token")
        var configuration = OAuthConfiguration(
            authorizationURL: authorize, tokenURL: token, clientId: clientId, clientSecret: clientSecret,
            clientAuthentication: .body)
        // Box accepts only the redirect URI registered with the app, port included (rclone registers this one).
        configuration.loopbackPort = endpoint == nil ? 53682 : nil
        configuration.enforcesPKCE = false
        return configuration
    }
}
