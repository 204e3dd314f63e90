import Foundation
import LLVS
import LLVSBackup
import LLVSSupport
import Synchronization

/// A file open in the mount: reads at any offset, holding at most one chunk (a backup's file: chunks of at most
/// 4 MiB, each checked against its hash before a byte of it is served) or, for a value of a version, the value when
/// it is at most `wholeValueLimit` and a window of it otherwise. The kernel reads a file in order in pieces of up to
/// 128 KiB, so the chunk that served one piece serves the next. Used from one thread at a time (FUSE may serve one
/// file's reads on several: they wait on the lock).
final class OpenFile: Sendable {
    enum Source: Sendable {
        case bytes(Data)
        case chunks([ContentHash], version: Version.ID, size: Int64)
        case value(Value.ID, version: Version.ID, size: Int64)
    }

    /// A value up to this size is read whole on the first read; a larger one in windows.
    static let wholeValueLimit: Int64 = 64 << 20
    /// The window of a large value kept between reads.
    static let valueWindow: Int64 = 8 << 20
    /// Chunks after the one being read that storage is told of (`Store.prefetchValues`).
    static let chunksAhead = 4

    private struct State {
        /// Where each chunk starts, as far as found (`starts[i]` is chunk i's offset); grows as reads go further.
        var starts: [Int64] = [0]
        /// The chunk (or window of a value) last read: its start and bytes.
        var held: (start: Int64, data: Data)?
    }

    let source: Source
    let store: Store
    private let state = Mutex(State())

    init(_ source: Source, store: Store) {
        self.source = source
        self.store = store
    }

    var size: Int64 {
        switch source {
        case .bytes(let data): Int64(data.count)
        case .chunks(_, _, let size), .value(_, _, let size): size
        }
    }

    /// Up to `count` bytes from `offset`: fewer only at the end.
    func read(at offset: Int64, count: Int) throws -> Data {
        guard offset < size, count > 0 else { return Data() }
        let end = min(offset + Int64(count), size)
        switch source {
        case .bytes(let data):
            return data.subdata(in: Int(offset)..<Int(end))
        case .chunks(let hashes, let version, _):
            return try state.withLock { state in
                var result = Data()
                var position = offset
                while position < end {
                    let (start, data) = try chunk(containing: position, hashes: hashes, version: version, &state)
                    let from = Int(position - start), to = Int(min(end - start, Int64(data.count)))
                    guard to > from else { throw BackupError.damagedObject(id: "a chunk", reason: "it is empty") }
                    result.append(data.subdata(in: from..<to))
                    position = start + Int64(to)
                }
                return result
            }
        case .value(let id, let version, let size):
            return try state.withLock { state in
                if let held = state.held, offset >= held.start, end <= held.start + Int64(held.data.count) {
                    return held.data.subdata(in: Int(offset - held.start)..<Int(end - held.start))
                }
                let start = size <= Self.wholeValueLimit ? 0 : offset
                let stop = size <= Self.wholeValueLimit ? size : min(size, max(end, offset + Self.valueWindow))
                let window = try Self.window(of: id, at: version, from: start, to: stop, in: store)
                state.held = (start, window)
                return window.subdata(in: Int(offset - start)..<Int(end - start))
            }
        }
    }

    /// The chunk holding byte `position`: the one held, or found from the chunk starts known so far (each chunk's
    /// size is its value's size in the map, read without its bytes).
    private func chunk(
        containing position: Int64, hashes: [ContentHash], version: Version.ID, _ state: inout State
    ) throws -> (Int64, Data) {
        if let held = state.held, position >= held.start, position < held.start + Int64(held.data.count) {
            return held
        }
        // The last known start at or before `position` (starts are increasing), then forward, learning each next
        // start from its chunk's size, until the chunk that holds it.
        var low = 0, high = state.starts.count - 1
        while low < high {
            let middle = (low + high + 1) / 2
            if state.starts[middle] <= position { low = middle } else { high = middle - 1 }
        }
        var index = low
        while true {
            if index + 1 < state.starts.count {
                if state.starts[index + 1] > position { break }
                index += 1
                continue
            }
            guard index < hashes.count else {
                throw BackupError.damagedObject(id: "a file", reason: "its chunks end before its size")
            }
            let id = BackupObjectID.chunk(hashes[index])
            guard
                let chunkSize = try store.valueSize(id: id, at: version) ?? Self.sizeElsewhere(id, hashes[index], store)
            else { throw BackupError.missingObject(id: id.rawValue) }
            guard chunkSize > 0 else { throw BackupError.damagedObject(id: id.rawValue, reason: "it is empty") }
            state.starts.append(state.starts[index] + chunkSize)
        }
        let id = BackupObjectID.chunk(hashes[index])
        // The kernel reads on in order: the next chunks are asked for now, so a store whose values are on a remote
        // reads them while this one is served (a local store has nothing to do).
        let ahead = hashes[(index + 1)..<min(hashes.count, index + 1 + Self.chunksAhead)]
        store.prefetchValues(ahead.map(BackupObjectID.chunk), at: version)
        guard let data = try BackupObjectLookup(store: store).data(id, hash: hashes[index], at: version) else {
            throw BackupError.missingObject(id: id.rawValue)
        }
        guard ContentHash(of: data) == hashes[index] else {
            throw BackupError.damagedObject(id: id.rawValue, reason: "its bytes do not have its hash")
        }
        state.held = (state.starts[index], data)
        return (state.starts[index], data)
    }

    /// The size of a chunk its version does not hold (a backup named it while a prune ran elsewhere).
    private static func sizeElsewhere(_ id: Value.ID, _ hash: ContentHash, _ store: Store) throws -> Int64? {
        try BackupObjectLookup(store: store).elsewhere(id, hash: hash).map { Int64($0.count) }
    }

    /// Bytes `from..<to` of a value, read in pieces from its start (pieces before the window are skipped, not kept).
    private static func window(
        of id: Value.ID, at version: Version.ID, from start: Int64, to stop: Int64, in store: Store
    ) throws -> Data {
        var window = Data()
        window.reserveCapacity(Int(stop - start))
        var position: Int64 = 0
        _ = try store.writeValue(id: id, at: version) { piece in
            let pieceEnd = position + Int64(piece.count)
            defer { position = pieceEnd }
            guard pieceEnd > start, position < stop else { return }
            let from = Int(max(start, position) - position), to = Int(min(stop, pieceEnd) - position)
            window.append(piece.subdata(in: from..<to))
        }
        guard Int64(window.count) == stop - start else {
            throw BackupError.damagedObject(id: id.rawValue, reason: "it is shorter than its size")
        }
        return window
    }
}
