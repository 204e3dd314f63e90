import Foundation
import LLVS
import LLVSSupport

/// A Dropbox `Metadata` as the connector reads it: `.tag` says file, folder or deleted; `path_lower` is the whole
/// path lower-cased (how Dropbox compares paths), `name` the last component as written; times are UTC with second
/// precision; `content_hash` is Dropbox's block hash in hex.
struct DropboxItem: Decodable, Sendable {
    var tag: String
    var name: String
    var id: String?
    var path_lower: String?
    var path_display: String?
    var size: Int64?
    var server_modified: String?
    var content_hash: String?
    var rev: String?

    enum CodingKeys: String, CodingKey {
        case tag = ".tag"
        case name, id, path_lower, path_display, size, server_modified, content_hash, rev
    }

    var isFolder: Bool { tag == "folder" }
    var isDeleted: Bool { tag == "deleted" }

    func item(_ encoding: NameEncoding) -> CloudItem {
        CloudItem(
            name: encoding.decode(name), isFolder: isFolder, size: isFolder ? nil : size ?? 0,
            modified: server_modified.flatMap(RFC3339Date.parse),
            checksums: content_hash.map { [.dropboxContentHash: $0.lowercased()] } ?? [:])
    }
}

/// The answers that wrap one item: `create_folder_v2`, `delete_v2`, `move_v2`.
struct DropboxItemResult: Decodable {
    var metadata: DropboxItem
}

/// A page of `list_folder` or `list_folder/continue`.
struct DropboxListPage: Decodable {
    var entries: [DropboxItem]
    var cursor: String
    var has_more: Bool
}
