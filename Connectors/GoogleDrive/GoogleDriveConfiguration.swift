import Foundation
import LLVSHTTP

/// Where Google Drive is and how the connector uses it. The API, upload and OAuth hosts are settings so that the
/// same client talks to the mock in tests (docs/services/google-drive.md).
public struct GoogleDriveConfiguration: Sendable {
    /// What removing a file does: move it to the trash (recoverable for 30 days, the default, as rclone does) or
    /// delete it for good.
    public enum Removal: String, Sendable, CaseIterable { case trash, delete }

    public var apiURL = URL(string: "https://www.googleapis.com/drive/v3")!
    public var uploadURL = URL(string: "https://www.googleapis.com/upload/drive/v3")!
    /// The folder that is this file system's root: `root` (My Drive) or a folder's ID.
    public var rootFolderID = "root"
    public var removal: Removal = .trash
    /// Files up to this size go up in one multipart request; larger ones by resumable upload.
    public var multipartLimit = 5 * 1024 * 1024
    /// The piece of a resumable upload sent per request; a multiple of 256 KiB, as Drive requires.
    public var chunkSize = 8 * 1024 * 1024 {
        didSet { chunkSize = max(Self.chunkGranularity, chunkSize / Self.chunkGranularity * Self.chunkGranularity) }
    }
    /// Entries per listing page (Drive allows at most 1000).
    public var pageSize = 1000
    /// Pages of one listing before the server counts as looping (20 million entries at 1000 a page).
    public var maximumPages = 20_000

    public static let chunkGranularity = 256 * 1024
    public static let folderMimeType = "application/vnd.google-apps.folder"

    public init() {}

    /// A URL of the API: `path` already escaped where it holds an ID.
    func api(_ path: String, _ query: [(String, String)] = []) throws -> URL {
        try URLEscaping.url(apiURL, path, query)
    }

    /// A URL of the upload host.
    func upload(_ path: String, _ query: [(String, String)] = []) throws -> URL {
        try URLEscaping.url(uploadURL, path, query)
    }

    /// The URL of one file by ID.
    func file(_ id: String, _ query: [(String, String)] = []) throws -> URL {
        try api("/files/" + URLEscaping.escape(id), query)
    }

    /// The mock's (or a proxy's) hosts: API at `BASE/drive/v3`, uploads at `BASE/upload/drive/v3`.
    public init(endpoint: URL) {
        apiURL = endpoint.appendingPathComponent("drive/v3")
        uploadURL = endpoint.appendingPathComponent("upload/drive/v3")
    }

    /// What the remote may touch. `drive.file` (the default, least privilege): only files this OAuth client
    /// created, which is every file llvs writes; and the only Drive scope Google's device flow allows. `drive`: the
    /// whole Drive, for a remote rooted in a folder made elsewhere (not with `--device`).
    public enum Scope: String, Sendable, CaseIterable {
        case file = "drive.file"
        case full = "drive"

        public var url: String { "https://www.googleapis.com/auth/" + rawValue }
        /// Google's device authorization grant refuses every Drive scope but `drive.file` and `drive.appdata`.
        public var allowsDeviceFlow: Bool { self == .file }
    }

    /// Google's OAuth 2 endpoints for an installed application (the client is the user's own, registered in the
    /// Google Cloud console): offline access so a refresh token is issued, consent asked so it is issued every time.
    /// `endpoint` replaces Google's hosts with one (the mock's). The device endpoint is offered only with a scope
    /// Google's device flow accepts.
    public static func oauth(
        clientId: String, clientSecret: String?, scope: Scope = .file, endpoint: URL? = nil
    ) -> OAuthConfiguration {
        func url(_ google: String, _ path: String) -> URL {
            endpoint.map { $0.appendingPathComponent(path) } ?? URL(string: google + path)!
        }
        return OAuthConfiguration(
            authorizationURL: url("https://accounts.google.com", "/o/oauth2/v2/auth"),
            tokenURL: url("https://oauth2.googleapis.com", "/token"),
            deviceAuthorizationURL: scope.allowsDeviceFlow ? url("https://oauth2.googleapis.com", "/device/code") : nil,
            clientId: clientId, clientSecret: clientSecret, scopes: [scope.url], clientAuthentication: .body,
            extraAuthorizationParameters: [("access_type", "offline"), ("prompt", "consent")])
    }
}
