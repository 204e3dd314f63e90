import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService

/// A Box file or folder as the connector reads it: `etag` and `sequence_id` are strings in Box's JSON (not read),
/// `sha1` is hex, `item_status` says whether the item is live; times are RFC 3339 with an offset.
struct BoxItem: Decodable, Sendable, IdentifiedItem {
    var type: String
    var id: String
    var name: String
    var size: Int64?
    var sha1: String?
    var modified_at: String?
    var item_status: String?
    /// The folder holding the item; read from the event stream only, to filter it by folder.
    var parent: Parent?
    struct Parent: Decodable, Sendable { var id: String }

    /// What a sync needs, and no more.
    static let fields = "type,id,name,size,sha1,modified_at,item_status"

    var isFolder: Bool { type == "folder" }
    /// Trashed and deleted items still show in some answers; only active ones count.
    var isActive: Bool { item_status.map { $0 == "active" } ?? true }

    func item(_ encoding: NameEncoding) -> CloudItem {
        CloudItem(
            name: encoding.decode(name), isFolder: isFolder, size: isFolder ? nil : size ?? 0,
            modified: modified_at.flatMap(RFC3339Date.parse),
            checksums: sha1.map { [.sha1: $0.lowercased()] } ?? [:])
    }

}

/// A page of folder items (marker paging).
struct BoxItemPage: Decodable {
    var entries: [BoxItem]
    var next_marker: String?
}

/// The answer of an upload or a commit: `{"total_count": 1, "entries": [file]}`.
struct BoxFiles: Decodable {
    var entries: [BoxItem]
}

/// `{"name", "parent": {"id"}}`: a new item's place, as folder creation, preflight and uploads send it.
struct BoxPlacement: Encodable {
    struct Parent: Encodable { var id: String }
    var name: String
    var parent: Parent
    var size: Int64?
}
