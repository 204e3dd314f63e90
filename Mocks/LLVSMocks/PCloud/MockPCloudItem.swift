import Foundation
import LLVSSupport
import Synchronization

/// One pCloud item: a folder (`d<n>`) or a file (`f<n>`), with pCloud's numeric IDs, its 64-bit content `hash` (a
/// number that changes with the contents, not a checksum) and the revisions an overwrite keeps.
struct MockPCloudItem: MockTreeItem, Codable {
    var id: String
    var name: String
    var parents: [String]
    var isFolder: Bool
    var trashed = false
    var created: Date
    var modified: Date
    var size: Int64 = 0
    var hash: UInt64 = 0
    var sha1 = ""
    var md5 = ""
    var sha256 = ""
    /// Earlier contents kept by overwrites (their sizes), as pCloud's file history.
    var revisions: [Int64] = []
    /// Not persisted as such: the state directory keeps the bytes in a file of their own.
    var content: MockContent?

    enum CodingKeys: String, CodingKey {
        case id, name, parents, isFolder, trashed, created, modified, size, hash, sha1, md5, sha256, revisions
    }

    init(id: String, name: String, parents: [String], isFolder: Bool, created: Date) {
        self.id = id
        self.name = name
        self.parents = parents
        self.isFolder = isFolder
        self.created = created
        modified = created
    }

    /// The number in `folderid` or `fileid`.
    var number: UInt64 { UInt64(id.dropFirst()) ?? 0 }
    var parentNumber: UInt64 { parents.first.flatMap { UInt64($0.dropFirst()) } ?? 0 }

    /// Sets new contents with the checksums pCloud keeps and a new `hash`.
    mutating func store(_ content: MockContent, at time: Date) {
        if self.content != nil { revisions.append(size) }
        let sums = content.checksums([.sha1, .md5, .sha256])
        self.content = content
        size = content.size
        sha1 = sums[.sha1] ?? ""
        md5 = sums[.md5] ?? ""
        sha256 = sums[.sha256] ?? ""
        // The first eight bytes of the SHA-1 with the time folded in: a 64-bit number, often above Int64.max.
        hash = (UInt64(sha1.prefix(16), radix: 16) ?? 0) ^ UInt64(time.timeIntervalSince1970 * 1000)
        modified = time
    }
}

/// pCloud's names: case-sensitive, any character but `/` (and no empty name, `.` or `..`).
enum MockPCloudNames {
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && name.utf8.count <= 1024
    }
}

/// pCloud's times: RFC 1123 with an offset (`Wed, 02 Oct 2013 13:23:19 +0000`), or unix seconds when asked with
/// `timeformat=timestamp`.
enum MockPCloudTime {
    static func format(_ date: Date, asTimestamp: Bool) -> Any {
        if asTimestamp { return Int(date.timeIntervalSince1970) }
        return formatter.withLock { $0.string(from: date) }
    }

    /// One formatter, made once: making one per item would dominate a large listing.
    private static let formatter = Mutex<DateFormatter>(
        {
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "UTC")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss Z"
            return formatter
        }())
}
