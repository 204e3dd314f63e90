import Foundation
import LLVSSupport

/// One OneDrive item: a file or a folder, with Graph's eTag/cTag versions and the hashes a drive reports.
struct MockOneDriveItem: MockTreeItem, Codable {
    var id: String
    var name: String
    var parents: [String]
    var isFolder: Bool
    var trashed = false
    var created: Date { didSet { createdText = MockGraphTime.format(created) } }
    var modified: Date { didSet { modifiedText = MockGraphTime.format(modified) } }
    /// The times as Graph writes them, formatted once rather than for every listing.
    private(set) var createdText = ""
    private(set) var modifiedText = ""
    /// Bumped on every change (eTag) and on every content change (cTag).
    var version = 1
    var contentVersion = 1
    var size: Int64 = 0
    var quickXorHash: String?
    var sha1Hash: String?
    var sha256Hash: String?
    /// The times a client gave (`fileSystemInfo`): what the file had on the client's disk, kept apart from when
    /// the drive changed it, as Graph keeps them.
    var fileSystemCreated: Date?
    var fileSystemModified: Date?
    /// Not persisted as such: the state directory keeps the bytes in a file of their own.
    var content: MockContent?

    enum CodingKeys: String, CodingKey {
        case id, name, parents, isFolder, trashed, created, modified, version, contentVersion, size, quickXorHash,
            sha1Hash, sha256Hash,
            fileSystemCreated, fileSystemModified
    }

    init(id: String, name: String, parents: [String], isFolder: Bool, created: Date, modified: Date) {
        self.id = id
        self.name = name
        self.parents = parents
        self.isFolder = isFolder
        self.created = created
        self.modified = modified
        createdText = MockGraphTime.format(created)
        modifiedText = MockGraphTime.format(modified)
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        self.init(
            id: try container.decode(String.self, forKey: .id), name: try container.decode(String.self, forKey: .name),
            parents: try container.decode([String].self, forKey: .parents),
            isFolder: try container.decode(Bool.self, forKey: .isFolder),
            created: try container.decode(Date.self, forKey: .created),
            modified: try container.decode(Date.self, forKey: .modified))
        trashed = try container.decode(Bool.self, forKey: .trashed)
        version = try container.decode(Int.self, forKey: .version)
        contentVersion = try container.decode(Int.self, forKey: .contentVersion)
        size = try container.decode(Int64.self, forKey: .size)
        quickXorHash = try container.decodeIfPresent(String.self, forKey: .quickXorHash)
        sha1Hash = try container.decodeIfPresent(String.self, forKey: .sha1Hash)
        sha256Hash = try container.decodeIfPresent(String.self, forKey: .sha256Hash)
        fileSystemCreated = try container.decodeIfPresent(Date.self, forKey: .fileSystemCreated)
        fileSystemModified = try container.decodeIfPresent(Date.self, forKey: .fileSystemModified)
    }

    /// Graph's `fileSystemInfo`: the client's times where one was given, the drive's otherwise.
    var fileSystemInfo: [String: Any] {
        [
            "createdDateTime": fileSystemCreated.map(MockGraphTime.format) ?? createdText,
            "lastModifiedDateTime": fileSystemModified.map(MockGraphTime.format) ?? modifiedText,
        ]
    }

    /// Takes the times of a `fileSystemInfo` a client sent.
    mutating func apply(_ info: MockFileSystemInfo) {
        if let created = info.created { fileSystemCreated = created }
        if let modified = info.modified { fileSystemModified = modified }
    }

    var eTag: String { "\"{\(id)},\(version)\"" }
    var cTag: String { "\"c:{\(id)},\(contentVersion)\"" }
}

/// Graph's names: case-insensitive, none of `" * : < > ? / \ |`, no leading or trailing space, no trailing dot.
enum MockOneDriveNames {
    static let forbidden: Set<Character> = ["\"", "*", ":", "<", ">", "?", "/", "\\", "|"]

    static func problem(_ name: String) -> String? {
        if name.isEmpty { return "The name is empty." }
        if name.contains(where: forbidden.contains) { return "The provided name contains invalid characters." }
        if name.hasPrefix(" ") || name.hasSuffix(" ") { return "The provided name cannot begin or end with a space." }
        if name.hasSuffix(".") { return "The provided name cannot end with a period." }
        if name.utf16.count > 255 { return "The provided name is too long." }
        return nil
    }
}

/// Graph's times: ISO 8601 with milliseconds and `Z`.
enum MockGraphTime {
    static func format(_ date: Date) -> String {
        date.formatted(
            .iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }

    /// A time a client sent: ISO 8601 with or without fractional seconds, `Z` or an offset.
    static func parse(_ text: String) -> Date? {
        RFC3339Date.parse(text)
    }
}

/// The times of a `fileSystemInfo` facet a client sent (either may be missing).
struct MockFileSystemInfo: Sendable {
    var created: Date?
    var modified: Date?

    /// Reads `{"createdDateTime", "lastModifiedDateTime"}`; a time that is not ISO 8601 is refused as Graph does.
    init?(_ object: Any?) throws {
        guard let object = object as? [String: Any] else { return nil }
        func time(_ key: String) throws -> Date? {
            guard let text = object[key] as? String else { return nil }
            guard let date = MockGraphTime.parse(text) else {
                throw MockGraphError(
                    400, "invalidRequest",
                    "Cannot convert the literal '\(text)' to the expected type 'Edm.DateTimeOffset'.")
            }
            return date
        }
        created = try time("createdDateTime")
        modified = try time("lastModifiedDateTime")
    }
}
