import Foundation
import LLVS

/// One OneDrive item: a file or a folder, with Graph's eTag/cTag versions and the hashes a drive reports.
struct MockOneDriveItem: MockTreeItem, Codable {
    var id: String
    var name: String
    var parents: [String]
    var isFolder: Bool
    var trashed = false
    var created: Date
    var modified: Date
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
