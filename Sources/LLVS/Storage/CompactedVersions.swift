import Foundation
import LLVSCodecs
import LLVSSupport
import Synchronization

/// A compacted pack as a FileStorage process knows it: its path and where its map frames lie.
final class CompactedPackFile: Sendable {
    let path: String
    let frames: [CompactedPackDirectory.Frame]

    init(path: String, frames: [CompactedPackDirectory.Frame]) {
        self.path = path
        self.frames = frames
    }
}

/// A version whose records a compaction moved into a compacted pack: what its bundle held, by offset.
struct CompactedVersion: Sendable {
    let pack: CompactedPackFile
    let header: StoredVersion
    /// The length of the bundle's records (its header and trailer follow them).
    let recordsLength: Int64
    /// In bundle order, which is the order of their offsets: found by binary search, so a store of many records
    /// holds no table beside them.
    let records: [CompactedPackDirectory.Record]

    init(pack: CompactedPackFile, version: CompactedPackDirectory.Version) {
        self.pack = pack
        header = version.header
        recordsLength = version.bundleLength
        records = version.records
    }

    /// The index in `records` of the record at `offset`.
    private func index(of offset: Int64) -> Int? {
        var low = 0, high = records.count
        while low < high {
            let middle = (low + high) / 2
            if records[middle].offset < offset { low = middle + 1 } else { high = middle }
        }
        return low < records.count && records[low].offset == offset ? low : nil
    }

    /// The record `location` names, checked against its length and zone.
    func record(at location: RecordLocation, zone: StorageZone) throws -> CompactedPackDirectory.Record {
        guard let index = index(of: location.offset) else {
            throw StoreError.corruptFile(
                path: pack.path,
                reason: "version \(location.versionId) has no record at offset \(location.offset) in this pack")
        }
        let record = records[index]
        guard record.length == location.length, record.zone == zone else {
            throw StoreError.corruptFile(
                path: pack.path,
                reason:
                    "the record of version \(location.versionId) at offset \(location.offset) holds \(record.length) "
                    + "bytes of zone \(record.zone.rawValue), not \(location.length) of zone \(zone.rawValue)")
        }
        return record
    }
}

/// Map frames already decompressed, up to `limit` bytes of them: a walk of a map reads many nodes of one frame in a
/// row. The oldest frame goes first when it is full.
final class MapFrameCache: Sendable {
    private struct Key: Hashable {
        let pack: String
        let frame: Int
    }

    private struct State {
        var frames: [Key: Data] = [:]
        var order: [Key] = []
        var bytes = 0
    }

    private let state = Mutex(State())
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// The content of frame `index` of `pack`, read and decompressed through `file` when it is not held.
    func content(of index: Int, in pack: CompactedPackFile, file: ReadableFile) throws -> Data {
        let key = Key(pack: pack.path, frame: index)
        if let held = state.withLock({ $0.frames[key] }) { return held }
        let frame = pack.frames[index]
        let stored = try file.read(at: frame.offset, count: Int(frame.storedLength))
        let content: Data
        do {
            content = try Zstd.decompress(stored, expectedSize: frame.contentLength)
        } catch let failure as ZstdError {
            throw StoreError.corruptFile(path: pack.path, reason: "map frame at offset \(frame.offset): \(failure)")
        }
        state.withLock { state in
            guard state.frames[key] == nil else { return }
            state.frames[key] = content
            state.order.append(key)
            state.bytes += content.count
            while state.bytes > limit, state.order.count > 1 {
                let oldest = state.order.removeFirst()
                state.bytes -= state.frames.removeValue(forKey: oldest)?.count ?? 0
            }
        }
        return content
    }

    /// Forgets the frames of a pack that is gone.
    func forget(pack path: String) {
        state.withLock { state in
            state.order.removeAll { key in
                guard key.pack == path else { return false }
                state.bytes -= state.frames.removeValue(forKey: key)?.count ?? 0
                return true
            }
        }
    }
}
