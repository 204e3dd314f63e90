import Foundation
import LLVS
import LLVSSupport
import Synchronization

/// Reads the backups a version holds: which sources, their records, their folder listings and file contents.
/// Listings are cached by hash, so walking many versions of one path reads each listing once. Safe to share between
/// tasks and threads: the cache is behind a lock (a listing is read outside it, so two readers of one listing may both
/// read it once).
public final class BackupReader: Sendable {
    public let store: Store
    private let trees = Mutex<[ContentHash: BackupTree]>([:])
    private static let treeCacheLimit = 256

    public init(store: Store) { self.store = store }

    /// The records of every source backed up at `version`, sorted by name. They are found by their IDs, not through
    /// the `sources` list: a merge of two stores that each added a source keeps both records (their IDs differ) but
    /// only one side's list, so the list is a hint for earlier builds and never the answer here.
    public func records(at version: Version.ID) throws -> [BackupSourceRecord] {
        var ids: [Value.ID] = []
        try store.forEachValueId(at: version) { id in
            if id.rawValue.hasPrefix(BackupObjectID.sourcePrefix) { ids.append(id) }
        }
        return try ids.compactMap { id in
            try store.value(id: id, at: version).map { try BackupSourceRecord(decoding: $0.data, id: id) }
        }
        .sorted { $0.name < $1.name }
    }

    /// The names of the sources backed up at `version`.
    public func sources(at version: Version.ID) throws -> [String] {
        try records(at: version).map(\.name)
    }

    /// Whether the version holds any backup in this layout (as opposed to none, or only the per-path layout of
    /// earlier builds).
    public func hasBackups(at version: Version.ID) throws -> Bool {
        try store.value(id: BackupObjectID.sources, at: version) != nil
    }

    public func record(_ name: String, at version: Version.ID) throws -> BackupSourceRecord? {
        let id = BackupObjectID.source(name)
        return try store.value(id: id, at: version).map { try BackupSourceRecord(decoding: $0.data, id: id) }
    }

    /// The source a command means: `given` (a name, or the path of a backed-up folder, absolute or relative to the
    /// working directory), or the only one there is.
    public func resolveSource(_ given: String?, at version: Version.ID) throws -> BackupSourceRecord {
        if let given, let record = try record(given, at: version) { return record }
        let all = try records(at: version)
        guard let given else {
            guard all.count == 1 else {
                throw all.isEmpty
                    ? BackupError.unknownSource("any source", known: [])
                    : BackupError.sourceNeeded(known: all.map(\.name))
            }
            return all[0]
        }
        let path = URL(fileURLWithPath: given).standardizedFileURL.path
        if let record = try record(path, at: version) { return record }
        let spelled = RawName.encode(Array(path.utf8))
        if let record = all.first(where: { $0.path == spelled }) { return record }
        throw BackupError.unknownSource(given, known: all.map(\.name))
    }

    public func tree(_ hash: ContentHash, at version: Version.ID) throws -> BackupTree {
        if let tree = trees.withLock({ $0[hash] }) { return tree }
        let id = BackupObjectID.tree(hash)
        guard let data = try BackupObjectLookup(store: store).data(id, hash: hash, at: version) else {
            throw BackupError.missingObject(id: id.rawValue)
        }
        let tree = try BackupTree(decoding: data, id: id.rawValue)
        trees.withLock { trees in
            if trees.count >= Self.treeCacheLimit { trees.removeAll(keepingCapacity: true) }
            trees[hash] = tree
        }
        return tree
    }

    /// The entry at `components` (name bytes from the root) of a source's backup; nil when it has none.
    /// The root itself is given as a folder entry with no name.
    public func entry(
        at components: [[UInt8]], of record: BackupSourceRecord, at version: Version.ID
    ) throws -> BackupTreeEntry? {
        guard let root = record.rootHash else { return nil }
        var entry = BackupTreeEntry(
            name: [], kind: .directory, mode: 0o755, size: 0, modified: 0, modifiedNanoseconds: 0, content: .tree(root))
        for name in components {
            guard case .tree(let hash) = entry.content else { return nil }
            guard let next = try tree(hash, at: version).entry(named: name) else { return nil }
            entry = next
        }
        return entry
    }

    /// Gives a file's bytes to `write`, chunk by chunk (never the whole file in memory).
    public func writeContents(
        of entry: BackupTreeEntry, at version: Version.ID, into write: (Data) throws -> Void
    ) throws {
        try Self.writeContents(of: entry, at: version, in: store, into: write)
    }

    /// `writeContents` without a reader: it needs only the store (which is `Sendable`), so several threads can
    /// write files at once.
    public static func writeContents(
        of entry: BackupTreeEntry, at version: Version.ID, in store: Store,
        into write: (Data) throws -> Void
    ) throws {
        switch entry.content {
        case .embedded(let data):
            guard data.count == entry.size else {
                throw BackupError.damagedObject(
                    id: RawName.encode(entry.name), reason: "it holds \(data.count) bytes, its entry says \(entry.size)"
                )
            }
            try write(data)
        case .chunks(let hashes):
            // Each chunk is checked against its name: a store (or a remote) that holds other bytes under it is damaged,
            // and a restore says so rather than writing them.
            var total: Int64 = 0
            for hash in hashes {
                let id = BackupObjectID.chunk(hash)
                let digest = DigestStream(.sha256)
                func take(_ piece: Data) throws {
                    digest.update(piece)
                    total += Int64(piece.count)
                    try write(piece)
                }
                if try !store.writeValue(id: id, at: version, into: take) {
                    // Named by a backup made while a prune ran elsewhere: its copy is in another version.
                    guard let data = try BackupObjectLookup(store: store).elsewhere(id, hash: hash) else {
                        throw BackupError.missingObject(id: id.rawValue)
                    }
                    try take(data)
                }
                guard digest.finalizeHex() == hash.hex else {
                    throw BackupError.damagedObject(id: id.rawValue, reason: "its bytes do not have its hash")
                }
            }
            guard total == entry.size else {
                throw BackupError.damagedObject(
                    id: RawName.encode(entry.name),
                    reason: "its chunks hold \(total) bytes, its entry says \(entry.size)")
            }
        case .tree, .link, .device:
            break
        }
    }
}
