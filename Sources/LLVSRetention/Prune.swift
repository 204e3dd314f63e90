import Foundation
import LLVS
import LLVSBackup
import LLVSSupport

/// `llvs prune`: frees the space of the chunks and listings no kept backup needs, in two steps, as duplicacy's
/// fossil collection does, because other devices share the history and no lock reaches them (`docs/retention.md`).
///
/// 1. **Collect**: mark what the kept backups need (`LiveObjects`); commit a version that removes every other chunk
///    and listing from the current version (so a later backup that meets their bytes again writes them again), and
///    keep the records they are stored in as the store's collection.
/// 2. **Release**, on a later run, once nothing can still name the collected records without having seen that
///    version: every version the store had at step 1 is on each of its remotes (sending a version reads its records),
///    and every source backed up in the week before step 1 has a backup made after it, descending from it. Then the
///    mark is made again (new backups, from here or synced, may need some records back) and the rest are released.
///
/// A store that shares its history with no remote runs both steps at once (`exclusive`). Either way the release waits
/// for no running backup of this store (the retention lock), and a kill at any moment leaves a store `llvs check`
/// passes: the collection version is an ordinary version; the collection file is written atomically after it; the
/// list of released records is written (synced) before they are released, and the collection removed last, so a rerun
/// finishes the same release.
public struct Prune: Sendable {
    public struct Options: Sendable {
        /// Say what would be collected and released; change nothing.
        public var dryRun = false
        /// No other store shares this history: release at once, without waiting for other devices.
        public var exclusive = false
        /// A source with no backup this long before step 1 is taken as gone, and not waited for (duplicacy's rule).
        public var dormantAfter: TimeInterval = 7 * 24 * 3600
        /// Also free the values only versions saved before this date name (an app store's old history): the versions
        /// from then on, and every head, keep all their values.
        public var before: Date?
        /// Called between the steps' stages with the stage's name (tests end the process there, as a kill would).
        public var onStage: @Sendable (String) -> Void = { _ in }

        public init() {}
    }

    public struct Report: Encodable, Sendable {
        /// Records collected by this run's first step, and their stored bytes.
        public var collected = 0
        public var collectedBytes: Int64 = 0
        /// Chunks and listings the first step removed from the current version.
        public var removedObjects = 0
        /// The version the first step committed.
        public var collectionVersion: String?
        /// Records released by this run, and their bytes.
        public var released = 0
        public var releasedBytes: Int64 = 0
        /// Records collected earlier that a kept backup needs again (a backup made since): kept.
        public var revived = 0
        /// Why a collection waits for a later run; empty when none waits.
        public var waiting: [String] = []
        /// Records the kept backups need, and their bytes.
        public var keptRecords = 0
        public var keptBytes: Int64 = 0
        /// How the store's files were laid out again after the release (`Store.compactStorage`).
        public var compaction: StorageCompaction?
        /// Why the compaction did not finish, when it did not (the next prune tries again).
        public var compactionFailure: String?
    }

    public let coordinator: StoreCoordinator
    public let options: Options

    public init(coordinator: StoreCoordinator, options: Options = Options()) {
        self.coordinator = coordinator
        self.options = options
    }

    /// Runs what is due: the release of a waiting collection, then a new collection. `remotesLacking` says, for each
    /// remote of the store that lacks some of the given versions (or cannot be asked), why: empty when all have them.
    public func run(remotesLacking: ([Version.ID]) async throws -> [String]) async throws -> Report {
        let store = coordinator.store
        let folder = RetentionFolder(store: store)
        var report = Report()
        if let pending = try folder.collection() {
            let waiting = try await reasonsToWait(for: pending, remotesLacking: remotesLacking)
            guard waiting.isEmpty else {
                report.waiting = waiting
                return report
            }
            let mark = try await release(pending, into: &report)
            guard report.waiting.isEmpty else { return report }
            guard let collection = try await collect(into: &report, reusing: mark) else { return report }
            if options.exclusive { try await release(collection, into: &report) }
            return report
        }
        guard let collection = try await collect(into: &report) else { return report }
        if options.exclusive { try await release(collection, into: &report) }
        return report
    }

    /// A mark, and what it was made at: a release's, which the collection that follows reuses when the current
    /// version is still the one it was made at (what the release freed no mark keeps, so it stays true).
    private struct Mark {
        var current: Version.ID
        var before: Date?
        var live: LiveObjects
    }

    /// Step 1. Nil when nothing is unneeded (or in a dry run).
    private func collect(into report: inout Report, reusing mark: Mark? = nil) async throws -> PruneCollection? {
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else { return nil }
        let released = try store.releasedRecords()
        let live =
            if let mark, mark.current == current, mark.before == options.before {
                mark.live
            } else {
                try self.mark(at: current, before: options.before, released: released)
            }
        report.keptRecords = live.records.count
        report.keptBytes = live.bytes
        let versions = store.history.topologicallySorted().map(\.id)
        var records: [PruneCollection.Record] = []
        var recorded = Set<RecordLocation>()
        try store.forEachEntry(inMapsOf: versions) { entry in
            let location = entry.location
            // A record named in many versions' maps is looked at once (most entries are such repeats).
            guard recorded.insert(location).inserted,
                options.before != nil || LiveObjects.isBackupObject(entry.valueId),
                !live.records.contains(location), !released.contains(location)
            else { return }
            records.append(
                PruneCollection.Record(
                    version: location.versionId.rawValue, offset: location.offset, length: location.length))
        }
        var removals: [Value.ID] = []
        try store.forEachValueId(at: current) { id in
            if LiveObjects.isBackupObject(id), !live.needs(id) { removals.append(id) }
        }
        report.collected = records.count
        report.collectedBytes = records.reduce(0) { $0 + $1.length }
        report.removedObjects = removals.count
        guard !options.dryRun, !records.isEmpty || !removals.isEmpty else { return nil }
        let version = try store.makeVersion(
            basedOn: Version.Predecessors(idOfFirst: current), storing: removals.map(Value.Change.remove),
            metadata: [Self.collectionMetadata: try Version.MetadataValue(records.count)])
        try await coordinator.setCurrentVersion(version.id)
        options.onStage("collected")
        let collection = PruneCollection(
            created: Date(), version: version.id.rawValue,
            versions: (versions + [version.id]).map(\.rawValue), records: records, before: options.before)
        try RetentionFolder(store: store).save(collection)
        report.collectionVersion = version.id.rawValue
        options.onStage("saved")
        return collection
    }

    /// Marks the version a prune's first step commits.
    public static let collectionMetadata = BackupMetadata.pruneCollection

    /// Step 2: mark again, then release what is still unneeded. Returns the mark, when one was made.
    @discardableResult
    private func release(_ collection: PruneCollection, into report: inout Report) async throws -> Mark? {
        let store = coordinator.store
        let folder = RetentionFolder(store: store)
        let lock: RetentionFolder.Lock
        do { lock = try folder.releaseLock() } catch RetentionError.storeBusy {
            report.waiting.append("a backup of this store is running; the next prune releases the collected records")
            return nil
        }
        defer { withExtendedLifetime(lock) {} }
        guard let current = await coordinator.currentVersionId else { return nil }
        let released = try store.releasedRecords()
        let live = try mark(at: current, before: collection.before, released: released)
        let collected = collection.records.map(\.location)
        let releasable = collected.filter { !live.records.contains($0) && !released.contains($0) }
        report.revived += collected.filter { live.records.contains($0) }.count
        guard !options.dryRun else {
            report.released += releasable.count
            report.releasedBytes += releasable.reduce(0) { $0 + $1.length }
            return Mark(current: current, before: collection.before, live: live)
        }
        try store.listReleased(releasable)
        options.onStage("listed")
        _ = try store.releaseRecords(releasable)
        options.onStage("released")
        try folder.removeCollection()
        report.released += releasable.count
        report.releasedBytes += releasable.reduce(0) { $0 + $1.length }
        // Still under the lock: no backup of this store writes while its files are laid out again. The release is
        // done whatever comes of it: a compaction that cannot finish (a full disk) leaves the files as they were.
        do {
            report.compaction = try store.compactStorage()
        } catch {
            report.compactionFailure = "\(error)"
        }
        options.onStage("compacted")
        return Mark(current: current, before: collection.before, live: live)
    }

    /// What the kept backups need and, with `before`, every record the versions from that date on (and the heads)
    /// name.
    private func mark(at current: Version.ID, before: Date?, released: Set<RecordLocation>) throws -> LiveObjects {
        let store = coordinator.store
        var live = try LiveObjects(
            store: store, catalog: try BackupCatalog(store: store, at: current), released: released)
        if let before {
            let recent = store.history.versions.values.filter { $0.date >= before }.map(\.id)
            try live.keepEverything(namedBy: recent + store.heads, in: store)
        }
        return live
    }

    /// Why a collection may not be released yet; empty when it may.
    private func reasonsToWait(
        for collection: PruneCollection, remotesLacking: ([Version.ID]) async throws -> [String]
    ) async throws -> [String] {
        guard !options.exclusive else { return [] }
        var reasons = try await remotesLacking(collection.versions.map(Version.ID.init))
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else { return reasons }
        let step = Version.ID(collection.version)
        guard store.history.contains(step) else {
            return reasons + ["the collection's version \(step) is not in the store; the collection is stale"]
        }
        let catalog = try BackupCatalog(store: store, at: current)
        let bySource = Dictionary(grouping: catalog.kept) { $0.source }
        for (source, backups) in bySource.sorted(by: { $0.key < $1.key }) {
            let newest = backups.map(\.date).max() ?? .distantPast
            guard newest >= collection.created.addingTimeInterval(-options.dormantAfter) else { continue }
            let since = backups.contains { $0.version != step && store.isAncestor(step, of: $0.version) }
            if !since {
                reasons.append(
                    "\(source) has no backup made since the collection (its next backup, synced here, lets the release go on)"
                )
            }
        }
        return reasons
    }
}
