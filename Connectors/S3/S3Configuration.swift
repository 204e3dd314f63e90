import Foundation
import LLVS
import LLVSHTTP

/// Where the bucket is and how the connector uses it (docs/services/s3.md). AWS by default (virtual-hosted
/// addressing on `s3.<region>.amazonaws.com`); any S3-compatible server by its endpoint, path-style unless told.
public struct S3Configuration: Sendable {
    public var bucket: String
    /// The folder inside the bucket that is this file system's root: key prefix without slashes at the ends.
    public var prefix: String
    public var region: String
    /// The server: `https://s3.<region>.amazonaws.com` for AWS, or a compatible server's URL.
    public var endpoint: URL
    /// `https://endpoint/bucket/key` rather than `https://bucket.endpoint/key`. Test servers and most compatible ones
    /// want it; AWS takes both for older buckets and only virtual-hosted for new ones.
    public var pathStyle: Bool
    /// Files up to this size go up in one PutObject; larger ones as a multipart upload of `partSize` parts.
    public var simpleUploadLimit: Int64 = 16 * 1024 * 1024
    /// Bytes per part (S3: at least 5 MiB but the last, at most 10,000 parts).
    public var partSize: Int64 = 16 * 1024 * 1024 {
        didSet { partSize = max(Self.minimumPartSize, partSize) }
    }
    /// Whether empty folders are kept as zero-byte `folder/` markers. A server that stores keys as files
    /// (`rclone serve s3` over a disk) cannot hold one: there folders exist only while something is in them.
    public var folderMarkers = true
    /// Whether the server refuses a PutObject with `If-None-Match: *` where the key is (AWS, moto, MinIO, R2); off for
    /// one that ignores the condition (`rclone serve s3`), where two creates at once may both land.
    public var conditionalWrites = true
    /// Keys per listing page (S3's most is 1000).
    public var pageSize = 1000
    /// Pages of one listing before the server counts as looping.
    public var maximumPages = 100_000

    public static let minimumPartSize: Int64 = 5 * 1024 * 1024

    /// `endpoint` nil for AWS in `region`; `pathStyle` nil for "path-style unless it is AWS".
    public init(bucket: String, prefix: String = "", region: String, endpoint: URL? = nil, pathStyle: Bool? = nil) {
        self.bucket = bucket
        self.prefix = prefix.split(separator: "/").joined(separator: "/")
        self.region = region
        self.endpoint = endpoint ?? URL(string: "https://s3.\(region).amazonaws.com")!
        self.pathStyle = pathStyle ?? (endpoint != nil)
    }

    /// The key of a path below the root (`prefix/a/b`), or the root's prefix for none.
    func key(_ components: [String]) -> String {
        ([prefix].filter { !$0.isEmpty } + components).joined(separator: "/")
    }

    /// The URL of the bucket, with a query.
    func bucketURL(_ query: [(String, String)] = []) throws -> URL {
        try objectURL("", query)
    }

    /// The URL of an object (each key segment escaped once, as SigV4 signs the path as sent).
    func objectURL(_ key: String, _ query: [(String, String)] = []) throws -> URL {
        let escapedKey = key.split(separator: "/", omittingEmptySubsequences: false).map {
            URLEscaping.escape(String($0))
        }.joined(separator: "/")
        if pathStyle {
            return try URLEscaping.url(
                endpoint, "/" + URLEscaping.escape(bucket) + (key.isEmpty ? "" : "/" + escapedKey), query)
        }
        guard var components = URLComponents(url: endpoint, resolvingAgainstBaseURL: false), let host = components.host
        else { throw HTTPError.invalidURL(endpoint.absoluteString) }
        components.host = bucket + "." + host
        components.percentEncodedPath = ""
        guard let base = components.url else { throw HTTPError.invalidURL(endpoint.absoluteString) }
        return try URLEscaping.url(base, "/" + escapedKey, query)
    }
}
