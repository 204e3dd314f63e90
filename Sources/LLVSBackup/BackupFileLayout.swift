import Foundation
import LLVS
import LLVSSupport

/// Where each chunk of a backed-up file starts: what a ranged read needs to go straight to the chunks that hold a
/// part of the file, without reading the ones before (`llvs mount`, a restore from a remote that fetches as it reads).
public struct BackupFileLayout: Sendable, Equatable {
    /// The file's chunks in order; empty for a file whose bytes are in its listing.
    public var chunks: [ContentHash]
    /// `offsets[i]` is where chunk `i` starts; one more entry than chunks, the last being the file's size.
    public var offsets: [Int64]
    /// The bytes of a file embedded in its listing.
    public var embedded: Data?

    public var size: Int64 { embedded.map { Int64($0.count) } ?? offsets.last ?? 0 }

    /// The chunks that hold any of `range`, by index.
    public func chunkIndices(covering range: Range<Int64>) -> Range<Int> {
        guard !chunks.isEmpty, !range.isEmpty else { return 0..<0 }
        // The last chunk starting at or before the range's start, by binary search over the starts.
        var low = 0, high = chunks.count
        while low < high {
            let middle = (low + high) / 2
            if offsets[middle + 1] <= range.lowerBound { low = middle + 1 } else { high = middle }
        }
        var end = low
        while end < chunks.count, offsets[end] < range.upperBound { end += 1 }
        return low..<end
    }
}

extension BackupReader {
    /// A file entry's layout: its chunks' sizes, read from the store's map (no chunk is read), summed into offsets.
    /// - Throws: `missingObject` for a chunk the store lacks; `damagedObject` when the sizes do not add up to the
    ///   entry's size.
    public func layout(of entry: BackupTreeEntry, at version: Version.ID) throws -> BackupFileLayout {
        switch entry.content {
        case .embedded(let data):
            guard data.count == entry.size else {
                throw BackupError.damagedObject(
                    id: RawName.encode(entry.name), reason: "it holds \(data.count) bytes, its entry says \(entry.size)"
                )
            }
            return BackupFileLayout(chunks: [], offsets: [0], embedded: data)
        case .chunks(let hashes):
            var offsets: [Int64] = [0]
            offsets.reserveCapacity(hashes.count + 1)
            for hash in hashes {
                let id = BackupObjectID.chunk(hash)
                guard
                    let size = try store.valueSize(id: id, at: version)
                        ?? BackupObjectLookup(store: store).elsewhere(id, hash: hash).map({ Int64($0.count) })
                else { throw BackupError.missingObject(id: id.rawValue) }
                offsets.append(offsets.last! + size)
            }
            guard offsets.last == entry.size else {
                throw BackupError.damagedObject(
                    id: RawName.encode(entry.name),
                    reason: "its chunks hold \(offsets.last!) bytes, its entry says \(entry.size)")
            }
            return BackupFileLayout(chunks: hashes, offsets: offsets)
        case .tree, .link, .device:
            return BackupFileLayout(chunks: [], offsets: [0])
        }
    }

    /// Gives the bytes of `range` of a file (clipped to its size) to `write`, reading only the chunks that hold them;
    /// each chunk read is checked against its hash, so a damaged chunk is an error, never wrong bytes.
    public func read(
        _ range: Range<Int64>, of layout: BackupFileLayout, at version: Version.ID, into write: (Data) throws -> Void
    ) throws {
        let lower = min(max(0, range.lowerBound), layout.size)
        let clipped = lower..<max(lower, min(range.upperBound, layout.size))
        guard !clipped.isEmpty else { return }
        if let embedded = layout.embedded {
            return try write(embedded.subdata(in: Int(clipped.lowerBound)..<Int(clipped.upperBound)))
        }
        for index in layout.chunkIndices(covering: clipped) {
            let chunk = try chunkData(layout.chunks[index], at: version)
            let start = layout.offsets[index]
            guard Int64(chunk.count) == layout.offsets[index + 1] - start else {
                throw BackupError.damagedObject(
                    id: BackupObjectID.chunk(layout.chunks[index]).rawValue, reason: "it changed size while being read")
            }
            let from = Int(max(clipped.lowerBound, start) - start),
                to = Int(min(clipped.upperBound, layout.offsets[index + 1]) - start)
            try write(chunk.subdata(in: from..<to))
        }
    }

    /// One chunk's bytes, checked against its name.
    public func chunkData(_ hash: ContentHash, at version: Version.ID) throws -> Data {
        let id = BackupObjectID.chunk(hash)
        guard let data = try BackupObjectLookup(store: store).data(id, hash: hash, at: version) else {
            throw BackupError.missingObject(id: id.rawValue)
        }
        guard ContentHash(of: data) == hash else {
            throw BackupError.damagedObject(id: id.rawValue, reason: "its bytes do not have its hash")
        }
        return data
    }
}
