import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService

/// A pCloud file or folder as its metadata describes it. Folders and files have IDs of their own kinds
/// (`folderid`, `fileid`); the cache keys them by the number with `isFolder` saying which. `hash` is a 64-bit
/// number that changes with the contents, not a checksum: it is read as `UInt64` and never compared with one.
/// Times are asked for as unix seconds (`timeformat=timestamp`).
struct PCloudItem: Decodable, Sendable, IdentifiedItem {
    var name: String
    var isfolder: Bool
    var folderid: UInt64?
    var fileid: UInt64?
    var size: Int64?
    var modified: Double?
    var hash: UInt64?
    /// The folder holding the item, and whether it is deleted: read from the diff feed, to filter it by folder.
    var parentfolderid: UInt64?
    var isdeleted: Bool?
    /// A folder's children, in `listfolder` answers.
    var contents: [PCloudItem]?

    var isFolder: Bool { isfolder }
    var id: String { String((isfolder ? folderid : fileid) ?? 0) }

    func item(checksums: [ChecksumAlgorithm: String] = [:]) -> CloudItem {
        CloudItem(
            name: name, isFolder: isfolder, size: isfolder ? nil : size ?? 0,
            modified: modified.map { Date(timeIntervalSince1970: $0) }, checksums: checksums)
    }
}

/// The answers the connector reads, each under pCloud's `result` envelope (checked before these are decoded).
enum PCloudAnswer {
    struct Metadata: Decodable { var metadata: PCloudItem }

    /// `uploadfile`: `metadata` and `checksums` are arrays, one per file sent.
    struct Uploaded: Decodable {
        var metadata: [PCloudItem]
        var checksums: [Checksums]?
    }

    /// `checksumfile` and the upload answers: SHA-1 everywhere, MD5 in the US, SHA-256 in Europe.
    struct Checksums: Decodable {
        var sha1: String?
        var md5: String?
        var sha256: String?

        var byAlgorithm: [ChecksumAlgorithm: String] {
            var found: [ChecksumAlgorithm: String] = [:]
            if let sha1 { found[.sha1] = sha1.lowercased() }
            if let md5 { found[.md5] = md5.lowercased() }
            if let sha256 { found[.sha256] = sha256.lowercased() }
            return found
        }
    }

    struct Checksummed: Decodable {
        var metadata: PCloudItem
        var sha1: String?
        var md5: String?
        var sha256: String?
        var checksums: Checksums { Checksums(sha1: sha1, md5: md5, sha256: sha256) }
    }

    /// `getfilelink`: the path on any of the hosts, bare names in pCloud's order of preference.
    struct Link: Decodable {
        var path: String
        var hosts: [String]
    }

    struct Empty: Decodable {}
    struct UploadCreated: Decodable { var uploadid: UInt64 }
    struct UploadInfo: Decodable { var size: Int64 }
}
