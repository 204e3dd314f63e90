import Foundation
import LLVSSupport
import LLVSHTTP

/// One Dropbox file or folder: its `id:` ID, its revision (hex, changed with every content), its content hash and
/// the times Dropbox keeps (the client's, and when the server stored it).
struct MockDropboxItem: MockTreeItem, Codable {
    var id: String
    var name: String
    var parents: [String]
    var isFolder: Bool
    var trashed = false
    var rev = ""
    var size: Int64 = 0
    var contentHash: String?
    var serverModified: Date
    var clientModified: Date
    /// Not persisted as such: the state directory keeps the bytes in a file of their own.
    var content: MockContent?

    enum CodingKeys: String, CodingKey {
        case id, name, parents, isFolder, trashed, rev, size, contentHash, serverModified, clientModified
    }
}

/// An item as Dropbox describes it at one moment (`Metadata`): what a listing, a feed entry or an answer shows. Kept
/// as a value, so the change feed says what an item was when it changed, and a deleted entry where it was.
struct MockDropboxMetadata: Sendable {
    enum Kind: String, Sendable { case file, folder, deleted }
    var kind: Kind
    var name: String
    var pathLower: String
    var pathDisplay: String
    var id = ""
    var size: Int64 = 0
    var rev = ""
    var contentHash = ""
    var serverModified = Date.distantPast
    var clientModified = Date.distantPast

    /// The parent's `path_lower` (`""` for the root's children).
    var parentLower: String { String(pathLower[..<(pathLower.lastIndex(of: "/") ?? pathLower.startIndex)]) }

    /// The JSON Dropbox answers: `.tag` first among the members a client needs; times in Dropbox's format.
    var json: [String: Any] {
        var object: [String: Any] = [
            ".tag": kind.rawValue, "name": name, "path_lower": pathLower, "path_display": pathDisplay,
        ]
        switch kind {
        case .deleted:
            break
        case .folder:
            object["id"] = id
        case .file:
            object["id"] = id
            object["size"] = size
            object["rev"] = rev
            object["content_hash"] = contentHash
            object["client_modified"] = MockDropboxTime.format(clientModified)
            object["server_modified"] = MockDropboxTime.format(serverModified)
            object["is_downloadable"] = true
        }
        return object
    }
}

/// Dropbox's timestamps: UTC, whole seconds, `2026-12-06T20:00:00Z`.
enum MockDropboxTime {
    static func format(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// A client's `client_modified`; nil when it is not in Dropbox's format.
    static func parse(_ text: String) -> Date? {
        guard text.count == 20, text.hasSuffix("Z") else { return nil }
        return RFC3339Date.parse(text)
    }
}
