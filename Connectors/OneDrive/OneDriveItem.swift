import Foundation
import LLVS
import LLVSSupport

/// A Graph driveItem as the connector reads it: `size` is a number, a folder has a `folder` facet, a file a `file`
/// facet with its hashes (QuickXorHash in base64 everywhere; SHA-1 and SHA-256 on personal drives).
struct OneDriveItem: Decodable, Sendable {
    struct Hashes: Decodable, Sendable {
        var quickXorHash: String?
        var sha1Hash: String?
        var sha256Hash: String?
    }
    struct FileFacet: Decodable, Sendable { var hashes: Hashes? }
    struct FolderFacet: Decodable, Sendable { var childCount: Int? }

    var id: String
    var name: String
    var size: Int64?
    var lastModifiedDateTime: String?
    var folder: FolderFacet?
    var file: FileFacet?

    /// What a sync needs, and no more.
    static let select = "id,name,size,lastModifiedDateTime,folder,file"

    var isFolder: Bool { folder != nil }

    func item(_ encoding: NameEncoding) -> CloudItem {
        var checksums: [ChecksumAlgorithm: String] = [:]
        if let hash = file?.hashes?.quickXorHash { checksums[.quickXor] = hash }
        if let hash = file?.hashes?.sha1Hash { checksums[.sha1] = hash.lowercased() }
        if let hash = file?.hashes?.sha256Hash { checksums[.sha256] = hash.lowercased() }
        return CloudItem(
            name: encoding.decode(name), isFolder: isFolder, size: isFolder ? nil : size ?? 0,
            modified: lastModifiedDateTime.flatMap(RFC3339Date.parse), checksums: checksums)
    }

}

/// One page of children or delta.
struct OneDriveItemPage: Decodable {
    var value: [OneDriveItem]
    var nextLink: String?

    enum CodingKeys: String, CodingKey {
        case value
        case nextLink = "@odata.nextLink"
    }
}
