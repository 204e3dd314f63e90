import Foundation
import LLVS
import LLVSBackup
import LLVSSupport

/// The mark of a prune: every chunk and listing the kept backups need, and every record that holds one of them where
/// a reader will look.
///
/// The roots are the backups not forgotten and the checkpoints in the store's heads (a backup under way resumes
/// from them and takes their files unread). From them every listing is read and followed (through
/// `BackupObjectLookup` where a version lacks one). Then the maps of those versions and of every head are walked, node
/// by shared node: each record they give a needed object is kept, so a restore of any kept backup reads what it read
/// before. An object needed but held by none of those maps (a backup that named it while a prune ran elsewhere)
/// keeps the first copy the reader's lookup would find.
struct LiveObjects {
    var listings = Set<ContentHash>()
    var chunks = Set<ContentHash>()
    var records = Set<RecordLocation>()
    /// Bytes of the records kept.
    var bytes: Int64 = 0

    init(store: Store, catalog: BackupCatalog, released: Set<RecordLocation>) throws {
        var roots: [(ContentHash, Version.ID)] = catalog.kept.compactMap { backup in
            backup.record.rootHash.map { ($0, backup.version) }
        }
        let heads = store.heads.sorted { $0.rawValue < $1.rawValue }
        for head in heads {
            try store.forEachValueId(at: head) { id in
                guard id.rawValue.hasPrefix(BackupObjectID.checkpointPrefix) else { return }
                if let value = try store.value(id: id, at: head),
                    let root = try BackupSourceRecord(decoding: value.data, id: id).rootHash
                {
                    roots.append((root, head))
                }
            }
        }
        let lookup = BackupObjectLookup(store: store)
        var listings = Set<ContentHash>()
        var chunks = Set<ContentHash>()
        var stack = roots
        while let (hash, version) = stack.popLast() {
            guard listings.insert(hash).inserted else { continue }
            let id = BackupObjectID.tree(hash)
            // A listing no version holds hides what it names, which may be needed: nothing may be collected.
            guard let data = try lookup.data(id, hash: hash, at: version) else {
                throw BackupError.missingObject(id: id.rawValue)
            }
            let references = try ListingReferences(decoding: data, id: id.rawValue)
            for listing in references.listings where !listings.contains(listing) { stack.append((listing, version)) }
            chunks.formUnion(references.chunks)
        }
        self.listings = listings
        self.chunks = chunks
        var held = Set<Value.ID>()
        var records = Set<RecordLocation>()
        var bytes: Int64 = 0
        let needs = { (id: Value.ID) in Self.needs(id, listings: listings, chunks: chunks) }
        // A map that cannot be read stops the prune: what it holds cannot be known, so nothing may be collected.
        try store.forEachEntry(inMapsOf: catalog.kept.map(\.version) + heads) { entry in
            guard needs(entry.valueId) else { return }
            held.insert(entry.valueId)
            if records.insert(entry.location).inserted { bytes += entry.location.length }
        }
        let ids = listings.map(BackupObjectID.tree) + chunks.map(BackupObjectID.chunk)
        let newestFirst = store.history.topologicallySorted().reversed().map(\.id)
        for id in ids where !held.contains(id) {
            for version in newestFirst {
                if let entry = try store.storedEntry(id: id, at: version), !released.contains(entry.location) {
                    if records.insert(entry.location).inserted { bytes += entry.location.length }
                    break
                }
            }
        }
        self.records = records
        self.bytes = bytes
    }

    /// Adds every value record the maps of `versions` name, whatever the value (a prune `--before` keeps the
    /// versions from that date on whole).
    mutating func keepEverything(namedBy versions: [Version.ID], in store: Store) throws {
        var records = self.records
        var bytes = self.bytes
        try store.forEachEntry(inMapsOf: versions) { entry in
            if records.insert(entry.location).inserted { bytes += entry.location.length }
        }
        self.records = records
        self.bytes = bytes
    }

    static func needs(_ id: Value.ID, listings: Set<ContentHash>, chunks: Set<ContentHash>) -> Bool {
        if let hash = BackupObjectID.chunkHash(in: id) { return chunks.contains(hash) }
        if let hash = BackupObjectID.listingHash(in: id) { return listings.contains(hash) }
        return false
    }

    /// Whether a value is a chunk or listing the kept backups need.
    func needs(_ id: Value.ID) -> Bool { Self.needs(id, listings: listings, chunks: chunks) }

    /// Whether a value is a chunk or a listing at all (only those are ever collected).
    static func isBackupObject(_ id: Value.ID) -> Bool {
        BackupObjectID.namesObject(id)
    }
}
