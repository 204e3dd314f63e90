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
    /// Not persisted as such: the state directory keeps the bytes in a file of their own.
    var content: MockContent?

    enum CodingKeys: String, CodingKey {
        case id, name, parents, isFolder, trashed, created, modified, version, contentVersion, size, quickXorHash, sha1Hash, sha256Hash
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
        self.init(id: try container.decode(String.self, forKey: .id), name: try container.decode(String.self, forKey: .name),
                  parents: try container.decode([String].self, forKey: .parents), isFolder: try container.decode(Bool.self, forKey: .isFolder),
                  created: try container.decode(Date.self, forKey: .created), modified: try container.decode(Date.self, forKey: .modified))
        trashed = try container.decode(Bool.self, forKey: .trashed)
        version = try container.decode(Int.self, forKey: .version)
        contentVersion = try container.decode(Int.self, forKey: .contentVersion)
        size = try container.decode(Int64.self, forKey: .size)
        quickXorHash = try container.decodeIfPresent(String.self, forKey: .quickXorHash)
        sha1Hash = try container.decodeIfPresent(String.self, forKey: .sha1Hash)
        sha256Hash = try container.decodeIfPresent(String.self, forKey: .sha256Hash)
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
        date.formatted(.iso8601.year().month().day().time(includingFractionalSeconds: true).timeZone(separator: .omitted))
    }
}
