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

    /// The footprint of each group of backups (a source's) and of all of them together, each listing read once per
    /// group: what every group holds is kept by hash, so the union needs no second walk.
    /// - Throws: `BackupError.missingObject` for a listing no version holds.
    public static func measure(
        _ groups: [[CatalogedBackup]], in store: Store
    ) throws -> (each: [BackupFootprint], all: BackupFootprint) {
        var union: [ContentHash: StoredValueEntry] = [:]
        var each: [BackupFootprint] = []
        for group in groups {
            let held = try objects(of: group, in: store)
            each.append(BackupFootprint(held.values))
            union.merge(held) { first, _ in first }
        }
        return (each, BackupFootprint(union.values))
    }

    /// Sums entries, a record shared by several counted once as stored.
    private init(_ entries: some Collection<StoredValueEntry>) {
        var records = Set<RecordLocation>()
        for entry in entries {
            objects += 1
            bytes += entry.size
            if records.insert(entry.location).inserted { storedBytes += entry.location.length }
        }
    }

    /// Every listing and chunk `backups` name, by hash, with where the store keeps it.
    private static func objects(
        of backups: [CatalogedBackup], in store: Store
    ) throws -> [ContentHash: StoredValueEntry] {
        let lookup = BackupObjectLookup(store: store)
        var seen = Set<ContentHash>()
        var held: [ContentHash: StoredValueEntry] = [:]
        var stack: [(hash: ContentHash, version: Version.ID, isListing: Bool)] = backups.compactMap { backup in
            backup.record.rootHash.map { ($0, backup.version, true) }
        }
        while let (hash, version, isListing) = stack.popLast() {
            guard seen.insert(hash).inserted else { continue }
            let id = isListing ? BackupObjectID.tree(hash) : BackupObjectID.chunk(hash)
            // Named by a backup made while a prune ran elsewhere, its copy may be in another version: counted there.
            if let entry = try store.storedEntry(id: id, at: version) ?? lookup.newestEntry(id) { held[hash] = entry }
            guard isListing else { continue }
            guard let data = try lookup.data(id, hash: hash, at: version) else {
                throw BackupError.missingObject(id: id.rawValue)
            }
            let references = try ListingReferences(decoding: data, id: id.rawValue)
            for listing in references.listings where !seen.contains(listing) { stack.append((listing, version, true)) }
            for chunk in references.chunks where !seen.contains(chunk) { stack.append((chunk, version, false)) }
        }
        return held
    }
}
