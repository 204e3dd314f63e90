import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService

/// A Drive file or folder as the API describes it. `size` is a string in Drive's JSON; folders and Google Docs
/// have none.
struct GoogleDriveItem: Decodable, Sendable, IdentifiedItem {
    var id: String
    var name: String
    var mimeType: String?
    var size: String?
    var md5Checksum: String?
    var modifiedTime: String?
    var createdTime: String?
    var trashed: Bool?
    /// The folders holding the item; asked for in the changes feed only, to filter it by folder.
    var parents: [String]?

    /// The fields the connector asks for, so answers carry what it reads and no more.
    static let fields = "id,name,mimeType,size,md5Checksum,modifiedTime,createdTime,trashed"
    /// Enough to tell items apart and choose among duplicates, for listings of names.
    static let nameFields = "id,name,mimeType,createdTime"
    /// What a change feed entry needs: enough for the ID cache, and the parents to filter by.
    static let feedFields = "id,name,mimeType,createdTime,trashed,parents"

    var isFolder: Bool { mimeType == GoogleDriveConfiguration.folderMimeType }
    var byteCount: Int64? { size.flatMap { Int64($0) } }

    var item: CloudItem {
        CloudItem(
            name: name, isFolder: isFolder, size: isFolder ? nil : byteCount ?? 0,
            modified: modifiedTime.flatMap(RFC3339Date.parse), checksums: md5Checksum.map { [.md5: $0] } ?? [:])
    }

    /// The metadata of a new item; absent fields are left out of the JSON (`{}` for new contents only).
    struct Creation: Encodable, Sendable {
        var name: String?
        var mimeType: String?
        var parents: [String]?
    }

    /// Drive lets one folder hold several items of the same name. Every reader must pick the same one, so the
    /// oldest wins, then the lowest ID; a path never resolves differently from one call to the next.
    static func chosen(_ files: [GoogleDriveItem]) -> GoogleDriveItem? {
        files.min { a, b in
            let ta = a.createdTime.flatMap(RFC3339Date.parse) ?? .distantFuture,
                tb = b.createdTime.flatMap(RFC3339Date.parse) ?? .distantFuture
            return ta != tb ? ta < tb : a.id < b.id
        }
    }
}

/// One page of `files.list`.
struct GoogleDriveItemList: Decodable {
    var files: [GoogleDriveItem]?
    var nextPageToken: String?
}

/// Builds `q` expressions of Drive's query language, escaping literals as the reference says (`\` and `'`).
enum GoogleDriveQuery {
    static func literal(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "'", with: "\\'") + "'"
    }

    static func children(of folderID: String) -> String {
        "\(literal(folderID)) in parents and trashed = false"
    }

    static func named(_ name: String, in folderID: String) -> String {
        "\(literal(folderID)) in parents and name = \(literal(name)) and trashed = false"
    }
}
