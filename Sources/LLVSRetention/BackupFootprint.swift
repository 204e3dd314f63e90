import Foundation
import LLVS
import LLVSBackup
import LLVSSupport

/// What a set of backups takes in a store: every listing and chunk they name, each counted once however many backups
/// and files share it, by its data and by its record as stored (compressed where that saved). The two sums are a
/// source's logical and stored bytes in `llvs stats`: what deduplication and compression leave of it.
///
/// Listings are read once each (an unchanged folder is one listing for every backup), so the cost follows the
/// distinct folders and chunks, not the backups.
public struct BackupFootprint: Equatable, Sendable, Encodable {
    /// Listings and chunks.
    public var objects = 0
    /// Their data's bytes.
    public var bytes: Int64 = 0
    /// Their records' bytes in the store.
    public var storedBytes: Int64 = 0

    public init() {}

    /// The footprint of `backups` in `store`.
    /// - Throws: `BackupError.missingObject` for a listing no version holds.
    public init(of backups: [CatalogedBackup], in store: Store) throws {
        let lookup = BackupObjectLookup(store: store)
        var seen = Set<ContentHash>()
        var records = Set<RecordLocation>()
        var stack: [(hash: ContentHash, version: Version.ID, isListing: Bool)] = backups.compactMap { backup in
            backup.record.rootHash.map { ($0, backup.version, true) }
        }
        while let (hash, version, isListing) = stack.popLast() {
            guard seen.insert(hash).inserted else { continue }
            let id = isListing ? BackupObjectID.tree(hash) : BackupObjectID.chunk(hash)
            // Named by a backup made while a prune ran elsewhere, its copy may be in another version: counted there.
            let entry = try store.storedEntry(id: id, at: version) ?? lookup.entryElsewhere(id)
            if let entry {
                objects += 1
                bytes += entry.size
                if records.insert(entry.location).inserted { storedBytes += entry.location.length }
            }
            guard isListing else { continue }
            guard let data = try lookup.data(id, hash: hash, at: version) else {
                throw BackupError.missingObject(id: id.rawValue)
            }
            let references = try ListingReferences(decoding: data, id: id.rawValue)
            for listing in references.listings where !seen.contains(listing) { stack.append((listing, version, true)) }
            for chunk in references.chunks where !seen.contains(chunk) { stack.append((chunk, version, false)) }
        }
    }
}

extension BackupObjectLookup {
    /// Where the newest version that holds `id` keeps it; nil when none does.
    func entryElsewhere(_ id: Value.ID) throws -> StoredValueEntry? {
        for version in store.history.topologicallySorted().reversed() {
            if let entry = try store.storedEntry(id: id, at: version.id) { return entry }
        }
        return nil
    }
}
