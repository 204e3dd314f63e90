import Foundation
import LLVSHTTP

/// Where OneDrive is and how the connector uses it (docs/services/onedrive.md). Graph's host is a setting so the
/// same client talks to the mock in tests.
public struct OneDriveConfiguration: Sendable {
    public var graphURL = URL(string: "https://graph.microsoft.com/v1.0")!
    /// A drive by ID (a SharePoint library, a shared drive); nil for the signed-in user's own drive.
    public var driveID: String?
    /// Files up to this size go up in one PUT; larger ones through an upload session.
    public var simpleUploadLimit: Int64 = 4 * 1024 * 1024
    /// Bytes per fragment of an upload session; kept a multiple of 320 KiB, as Graph requires.
    public var fragmentSize: Int64 = 10 * 1024 * 1024
    /// Items per children page (Graph's `$top`).
    public var pageSize = 1000
    /// Pages of one listing before the server counts as looping.
    public var maximumPages = 20_000

    public static let fragmentGranularity: Int64 = 320 * 1024
    /// Graph refuses whole paths longer than this.
    public static let maximumPathLength = 400

    public init() {}

    /// The mock's (or a proxy's) host: Graph at `BASE/v1.0`.
    public init(endpoint: URL) {
        graphURL = endpoint.appendingPathComponent("v1.0")
    }

    var drivePath: String { driveID.map { "/drives/" + URLEscaping.escape($0) } ?? "/me/drive" }

    /// An item by path (`root:/a/b:`, each segment escaped, so `%3A` never ends the path) and what is asked of it.
    func item(_ components: [String], _ action: String = "", _ query: [(String, String)] = []) throws -> URL {
        var path = drivePath + "/root"
        if !components.isEmpty { path += ":/" + components.map(URLEscaping.escape).joined(separator: "/") + ":" }
        if !action.isEmpty { path += "/" + action }
        return try URLEscaping.url(graphURL, path, query)
    }

    /// The Microsoft identity platform v2 for a public client (PKCE, no secret): `tenant` is `common` (personal and
    /// work accounts), `consumers`, `organizations` or a tenant ID. `Files.ReadWrite.All` is asked for when a drive
    /// other than the user's own is used. `endpoint` replaces Microsoft's host with one (the mock's).
    public static func oauth(
        clientId: String, clientSecret: String? = nil, tenant: String = "common", allDrives: Bool = false,
        endpoint: URL? = nil
    ) -> OAuthConfiguration {
        func url(_ path: String) -> URL {
            let base = endpoint ?? URL(string: "https://login.microsoftonline.com")!
            return base.appendingPathComponent(URLEscaping.escape(tenant)).appendingPathComponent(path)
        }
        return OAuthConfiguration(
            authorizationURL: url("oauth2/v2.0/authorize"), tokenURL: url("oauth2/v2.0/token"),
            deviceAuthorizationURL: url("oauth2/v2.0/devicecode"), clientId: clientId, clientSecret: clientSecret,
            scopes: [allDrives ? "Files.ReadWrite.All" : "Files.ReadWrite", "offline_access"],
            clientAuthentication: .body)
    }
}
