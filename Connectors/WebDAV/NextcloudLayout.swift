import Foundation

/// Where a Nextcloud (or ownCloud 10) server keeps what its WebDAV adds, recognized from a remote's URL: files live
/// at `…/remote.php/dav/files/USER/…`, and chunked uploads (v2) at `…/remote.php/dav/uploads/USER/`.
public struct NextcloudLayout: Sendable, Equatable {
    /// The collection chunked uploads are made in, ending in `/`.
    public var uploadsURL: URL
    /// The server's own address (`https://cloud.example/nc`), where `status.php` and Login Flow v2 are.
    public var serverURL: URL
    /// The user the files URL belongs to (its segment after `files/`, percent-decoded).
    public var user: String

    /// The layout of a files URL; nil for any other URL (Apache, nginx, the legacy `remote.php/webdav`, which has no
    /// chunking v2).
    public init?(filesURL url: URL) {
        let segments = url.path(percentEncoded: true).split(separator: "/").map(String.init)
        guard
            let start = segments.indices.first(where: { index in
                index + 3 < segments.count && segments[index] == "remote.php" && segments[index + 1] == "dav"
                    && segments[index + 2] == "files"
            })
        else { return nil }
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return nil }
        components.query = nil
        components.percentEncodedPath = segments[..<start].map { "/" + $0 }.joined()
        guard let server = components.url else { return nil }
        components.percentEncodedPath +=
            "/" + ["remote.php", "dav", "uploads", segments[start + 3]].joined(separator: "/") + "/"
        guard let uploads = components.url else { return nil }
        serverURL = server
        uploadsURL = uploads
        user = segments[start + 3].removingPercentEncoding ?? segments[start + 3]
    }
}
