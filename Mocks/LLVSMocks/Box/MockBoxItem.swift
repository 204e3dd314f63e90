import Foundation
import LLVSSupport

/// One Box item: a file or a folder with a numeric string ID, an `etag` and `sequence_id` that are strings in
/// Box's JSON and grow with every change, the SHA-1 Box reports for a file, and the versions an upload of new
/// contents keeps.
struct MockBoxItem: MockTreeItem, Codable {
    var id: String
    var name: String
    var parents: [String]
    var isFolder: Bool
    var trashed = false
    var created: Date
    var modified: Date
    var size: Int64 = 0
    var sha1 = ""
    var sequence = 0
    /// The file's current version ID and how many versions came before it.
    var versionID = ""
    var earlierVersions = 0
    /// The file's own times as a client gave them (`content_created_at`, `content_modified_at`), kept apart from
    /// when Box changed the item.
    var contentCreated: Date?
    var contentModified: Date?
    /// When it went to the trash (Box's `trashed_at`).
    var trashedAt: Date?
    /// Not persisted as such: the state directory keeps the bytes in a file of their own.
    var content: MockContent?

    enum CodingKeys: String, CodingKey {
        case id, name, parents, isFolder, trashed, created, modified, size, sha1, sequence, versionID, earlierVersions,
            contentCreated,
            contentModified, trashedAt
    }

    init(id: String, name: String, parents: [String], isFolder: Bool, created: Date) {
        self.id = id
        self.name = name
        self.parents = parents
        self.isFolder = isFolder
        self.created = created
        modified = created
    }

    var type: String { isFolder ? "folder" : "file" }

    mutating func apply(_ times: MockBoxContentTimes) {
        if let created = times.created { contentCreated = created }
        if let modified = times.modified { contentModified = modified }
    }

    mutating func store(_ content: MockContent, sha1: String, versionID: String, at time: Date) {
        if self.content != nil { earlierVersions += 1 }
        self.content = content
        size = content.size
        self.sha1 = sha1
        self.versionID = versionID
        modified = time
        sequence += 1
    }
}

/// Box's names: unique in a folder without regard to case; no `/` or `\`, no trailing space, not `.` or `..`,
/// nothing unprintable, at most 255 characters.
enum MockBoxNames {
    static func isValid(_ name: String) -> Bool {
        !name.isEmpty && name != "." && name != ".." && !name.contains("/") && !name.contains("\\")
            && !name.hasSuffix(" ")
            && !name.unicodeScalars.contains { $0.value < 0x20 || $0.value == 0x7F } && name.count <= 255
    }
}

/// Box's times: RFC 3339 with an offset, to the second (`2012-12-12T10:53:43-08:00`; the mock writes UTC as `+00:00`).
enum MockBoxTime {
    static func format(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: false).timeZone(separator: .colon)
        ).replacingOccurrences(of: "Z", with: "+00:00")
    }
}

/// One chunked upload session: the file it makes (new in a folder, or a new version), the declared size, the part
/// size every part but the last must have, and the parts received by offset.
struct MockBoxUpload: Sendable {
    struct Part: Sendable {
        var id: String
        var offset: Int64
        var size: Int64
        var sha1: String
    }
    var folderID: String?
    var fileID: String?
    var name: String
    var fileSize: Int64
    var partSize: Int64
    var expires: Date
    var parts: [Int64: Part] = [:]
    /// Commits answered 202 still to come (a test asks the mock to say "still processing").
    var processingCommits = 0

    var totalParts: Int { Int((fileSize + partSize - 1) / partSize) }
}

/// One event of the stream: its ID, type and the item as it was.
struct MockBoxEvent: Sendable {
    var id: String
    var type: String
    var created: Date
    var item: MockBoxItem
}

/// The times a client gives a file (`content_created_at`, `content_modified_at`, RFC 3339).
struct MockBoxContentTimes: Sendable {
    var created: Date?
    var modified: Date?

    /// The times in a JSON object (attributes, an update); nil when it has none.
    init?(_ object: [String: Any]) throws {
        func time(_ key: String) throws -> Date? {
            guard let value = object[key] else { return nil }
            guard let text = value as? String, let date = RFC3339Date.parse(text) else {
                throw MockBoxError(400, "bad_request", "Invalid value '\(value)' for \(key); expected an RFC 3339 time")
            }
            return date
        }
        created = try time("content_created_at")
        modified = try time("content_modified_at")
        if created == nil, modified == nil { return nil }
    }
}
