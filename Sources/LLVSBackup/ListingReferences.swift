import Foundation
import LLVS

/// What a stored listing names: the listings under it (sub-folders, or a checkpoint's segments) and the chunks of
/// its files. What a prune marks and a check follows, for whole and segmented listings alike.
public struct ListingReferences: Equatable, Sendable {
    public var listings: [ContentHash] = []
    public var chunks: [ContentHash] = []

    /// Reads the listing stored as `data` (refusing anything `BackupTree` refuses).
    public init(decoding data: Data, id: String) throws {
        if let segmented = try SegmentedListing(decoding: data, id: id) {
            listings = segmented.segments
            return
        }
        for entry in try BackupTree(decoding: data, id: id).entries {
            switch entry.content {
            case .tree(let hash): listings.append(hash)
            case .chunks(let hashes): chunks += hashes
            case .embedded, .link, .device: break
            }
        }
    }
}
