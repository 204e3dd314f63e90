import Foundation
import LLVS
import LLVSSupport

/// Finds a chunk or listing a backup names when its own version does not hold it, in the store's other versions.
///
/// A prune removes from the current version the chunks and listings no kept backup needs, so a later backup writes
/// them again if they come back. A backup that ran on another device while that prune ran, from a version that still
/// held them, names some without writing them; once merged, a later backup that takes those files unchanged names them
/// too, in a version that no longer holds them. Their bytes are still stored (the prune keeps every record a kept
/// backup names, wherever it is: `llvs prune`), so the reader looks in the other versions, newest first, and takes the
/// first copy whose bytes have the object's hash.
public struct BackupObjectLookup: Sendable {
    public let store: Store

    public init(store: Store) { self.store = store }

    /// The object's bytes from the first version, newest first, that holds a copy with the right hash; nil when none
    /// does. Read whole (a chunk is at most 4 MiB; listings are small), since a copy is checked before it is used.
    public func elsewhere(_ id: Value.ID, hash: ContentHash) throws -> Data? {
        var found: Data?
        try forEachEntry(of: id) { entry in
            var data = Data()
            guard (try? store.readStoredValue(entry, into: { data.append($0) })) != nil, ContentHash(of: data) == hash
            else { return true }
            found = data
            return false
        }
        return found
    }

    /// Where the newest version that holds `id` keeps it, without reading it; nil when no version does.
    public func newestEntry(_ id: Value.ID) throws -> StoredValueEntry? {
        var newest: StoredValueEntry?
        try forEachEntry(of: id) { entry in
            newest = entry
            return false
        }
        return newest
    }

    /// Gives `body` each distinct record holding `id`, newest version first, while it returns true.
    private func forEachEntry(of id: Value.ID, _ body: (StoredValueEntry) throws -> Bool) throws {
        var tried = Set<RecordLocation>()
        for version in store.history.topologicallySorted().reversed() {
            guard let entry = try store.storedEntry(id: id, at: version.id), tried.insert(entry.location).inserted
            else { continue }
            guard try body(entry) else { return }
        }
    }

    /// The object's bytes at `version`, or from elsewhere when the version does not hold it; nil when no version does.
    public func data(_ id: Value.ID, hash: ContentHash, at version: Version.ID) throws -> Data? {
        if let value = try store.value(id: id, at: version) { return value.data }
        return try elsewhere(id, hash: hash)
    }
}
