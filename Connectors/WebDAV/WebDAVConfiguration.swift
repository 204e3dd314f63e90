import Foundation
import LLVSHTTP

/// Where a WebDAV remote is and how to sign in. Credentials come from the remote's configuration or environment
/// variables, never from the command line, and never appear in traces.
public struct WebDAVConfiguration: Sendable {
    public enum Authentication: Sendable, Equatable {
        case none
        /// Sent pre-emptively over TLS; over plain HTTP only in answer to the server's challenge.
        case basic(user: String, password: String)
        /// libcurl answers the server's Digest challenge.
        case digest(user: String, password: String)
        case bearer(token: String)
    }

    /// The collection that is this file system's root (`https://host/dav/notes/`).
    public var url: URL
    public var authentication: Authentication
    /// The largest PROPFIND answer accepted; a bigger one is refused rather than parsed.
    public var maximumListingBytes = 64 * 1024 * 1024
    /// Files larger than this go to a Nextcloud in chunks of this size (chunked upload v2): below the 1–100 MB
    /// body limits of the proxies put in front of it, and a 413 for a chunk halves it.
    public var nextcloudChunkSize: Int64 = 10 * 1024 * 1024

    /// Nextcloud's (or ownCloud's) layout when the URL is a files URL (`…/remote.php/dav/files/USER/…`).
    public var nextcloud: NextcloudLayout? { NextcloudLayout(filesURL: url) }

    public init(url: URL, authentication: Authentication = .none) {
        self.url = url
        self.authentication = authentication
    }

    /// Reads credentials from `LLVS_WEBDAV_USER`, `LLVS_WEBDAV_PASSWORD` (Basic, or Digest with
    /// `LLVS_WEBDAV_AUTH=digest`) or `LLVS_WEBDAV_BEARER_TOKEN`.
    public static func authentication(from environment: [String: String]) -> Authentication {
        if let token = environment["LLVS_WEBDAV_BEARER_TOKEN"], !token.isEmpty { return .bearer(token: token) }
        guard let user = environment["LLVS_WEBDAV_USER"], !user.isEmpty else { return .none }
        let password = environment["LLVS_WEBDAV_PASSWORD"] ?? ""
        return environment["LLVS_WEBDAV_AUTH"]?.lowercased() == "digest"
            ? .digest(user: user, password: password) : .basic(user: user, password: password)
    }
}
