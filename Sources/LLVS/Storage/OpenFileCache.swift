import LLVSSupport
import Synchronization

/// Files kept open by key so repeated reads skip `open`, at most `limit` at once: a process may hold only so many
/// descriptors, and a store can have more version files and packs than that. When full it starts over; an evicted
/// file closes when its last reader lets go.
final class OpenFileCache<Key: Hashable & Sendable>: Sendable {
    private let files = Mutex<[Key: ReadableFile]>([:])
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// How many files are open now (never more than `limit`).
    var count: Int { files.withLock { $0.count } }

    /// The open file for `key`, opened with `open` when it is not.
    func file(_ key: Key, open: () throws -> ReadableFile) throws -> ReadableFile {
        if let file = files.withLock({ $0[key] }) { return file }
        let file = try open()
        insert(file, for: key)
        return file
    }

    /// Keeps `file` under `key` too, if one is open under `existing`.
    func alias(_ key: Key, to existing: Key) {
        files.withLock { files in
            if let file = files[existing] { files[key] = file }
        }
    }

    /// Lets go of the file under `key` (it closes when its last reader lets go too).
    func remove(_ key: Key) { _ = files.withLock { $0.removeValue(forKey: key) } }

    private func insert(_ file: ReadableFile, for key: Key) {
        files.withLock { files in
            if files.count >= limit { files.removeAll(keepingCapacity: true) }
            files[key] = file
        }
    }
}
