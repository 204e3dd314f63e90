import Foundation
import LLVS
import LLVSSupport

/// A checkpoint's partial listing of a large folder, as the hashes of its segments: listings of `segmentSize`
/// entries each, in order, then one of what is left. A segment once full never changes, so each is written once,
/// however many checkpoints the folder spans: a folder of 200,000 files costs its entries once, not once per
/// checkpoint. Only checkpoints hold these (a backup's complete listings are one `BackupTree` each), and only a
/// resumed walk reads them.
///
///     "LLVSSEGS" (8 bytes) · segment count (varint) · each segment's 32-byte SHA-256
struct SegmentedListing: Equatable {
    static let magic = Array("LLVSSEGS".utf8)
    /// Entries per full segment.
    static let segmentSize = 256

    var segments: [ContentHash]

    func encoded() -> Data {
        var writer = ByteWriter()
        writer.append(Self.magic)
        writer.varint(UInt64(segments.count))
        for segment in segments { writer.append(segment.bytes) }
        return Data(writer.bytes)
    }

    /// Nil when `data` is not a segmented listing (it is a listing of its own, or something else).
    init?(decoding data: Data, id: String) throws {
        guard data.starts(with: Self.magic) else { return nil }
        var reader = ByteReader(data)
        do {
            _ = try reader.raw(Self.magic.count)
            let count = try reader.int(limit: 1 << 20)
            segments = try (0..<count).map { _ in ContentHash(bytes: try reader.raw(32))! }
            guard reader.isAtEnd else {
                throw BackupError.damagedObject(id: id, reason: "extra bytes after the last segment")
            }
        } catch let failure as ByteReader.Failure {
            throw BackupError.damagedObject(id: id, reason: failure.description)
        }
    }

    init(segments: [ContentHash]) { self.segments = segments }

    /// The listing the segments make together, read with `tree`; refused unless the names still increase strictly
    /// from one segment to the next.
    func joined(id: String, tree: (ContentHash) throws -> BackupTree) throws -> BackupTree {
        var entries: [BackupTreeEntry] = []
        for segment in segments {
            let part = try tree(segment)
            if let last = entries.last, let first = part.entries.first, !last.name.lexicographicallyPrecedes(first.name)
            {
                throw BackupError.damagedObject(id: id, reason: "its segments' names are out of order")
            }
            entries += part.entries
        }
        return BackupTree(entries: entries)
    }
}
