import Foundation
import LLVSSupport

/// Owns a store and the version an app works on (the current version), which survives restarts.
///
/// Saves are made on top of the current version; merges take other heads into it; an exchange brings
/// versions in and out and merges what arrived. Observers follow the current version through `versionUpdates()`.
///
/// ```swift
/// let coordinator = try StoreCoordinator(store: try Store(creatingAt: folder))
/// try await coordinator.save(inserting: [Value(id: "notes/today", data: Data("buy milk".utf8))])
/// let report = try await coordinator.exchange(with: CloudFileSystemExchange(store: coordinator.store, fileSystem: remote))
/// ```
public actor StoreCoordinator {
    public nonisolated let store: Store
    public private(set) var currentVersionId: Version.ID?
    private var observers: [UUID: AsyncStream<Version.ID?>.Continuation] = [:]
    private nonisolated let statePath: String

    private struct PersistedState: Codable {
        var currentVersionId: Version.ID?
    }

    /// The file in the store's folder that keeps the current version across restarts.
    public static let stateFileName = "coordinator.json"

    /// The arbiter merges use when none is given: most recent change by default; a `MergeableArbiter` (LLVSModel)
    /// merges typed models property by property.
    public private(set) var mergeArbiter: any MergeArbiter = MostRecentChangeFavoringArbiter()

    /// Sets the arbiter later merges use when none is given.
    public func setMergeArbiter(_ arbiter: any MergeArbiter) { mergeArbiter = arbiter }

    /// Takes charge of `store`, resuming the current version saved by the last coordinator, or the most recent
    /// head when there is none.
    public init(store: Store) throws {
        self.store = store
        self.statePath = store.rootURL.path + "/" + Self.stateFileName
        var current: Version.ID?
        if POSIX.fileExists(statePath) {
            let data = try POSIX.readFile(statePath)
            do {
                current = try JSONDecoder().decode(PersistedState.self, from: data).currentVersionId
            } catch {
                throw StoreError.corruptFile(
                    path: statePath, reason: "it does not hold the coordinator's state (\(error))")
            }
        }
        if let id = current, store.version(identifiedBy: id) == nil { current = nil }
        self.currentVersionId = current ?? store.mostRecentHead?.id
    }

    /// The version saves are made on; nil for an empty store.
    public var currentVersion: Version? { currentVersionId.flatMap(store.version(identifiedBy:)) }

    /// Makes `id` the current version and tells observers.
    public func setCurrentVersion(_ id: Version.ID?) throws {
        if let id, store.version(identifiedBy: id) == nil { throw StoreError.versionNotFound(id) }
        guard id != currentVersionId else { return }
        currentVersionId = id
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try POSIX.writeAtomically(try encoder.encode(PersistedState(currentVersionId: id)), to: statePath)
        for observer in observers.values { observer.yield(id) }
    }

    // MARK: Saving and reading

    /// Saves changes on top of the current version, optionally on a named branch, and makes the result current.
    @discardableResult
    public func save(_ changes: [Value.Change], branch: Branch? = nil) throws -> Version {
        var metadata = Version.Metadata()
        if let branch { metadata[.branch] = try Version.MetadataValue(branch.name) }
        let version = try store.makeVersion(
            basedOn: currentVersionId.map { Version.Predecessors(idOfFirst: $0) },
            storing: changes, metadata: metadata)
        try setCurrentVersion(version.id)
        return version
    }

    /// Saves changes plus local files stored as values (read in pieces), on top of the current version.
    @discardableResult
    public func save(
        _ changes: [Value.Change], files: [(id: Value.ID, url: URL, isUpdate: Bool)],
        expectedSHA256: [Value.ID: String] = [:],
        branch: Branch? = nil
    ) throws -> Version {
        var metadata = Version.Metadata()
        if let branch { metadata[.branch] = try Version.MetadataValue(branch.name) }
        let version = try store.makeVersion(
            basedOn: currentVersionId.map { Version.Predecessors(idOfFirst: $0) },
            storing: changes, files: files, expectedSHA256: expectedSHA256, metadata: metadata)
        try setCurrentVersion(version.id)
        return version
    }

    /// Saves values on top of the current version, as one new version that becomes current.
    /// - Parameters:
    ///   - inserting: values new at this version.
    ///   - updating: new data for values the current version has.
    ///   - removing: IDs of values to remove.
    ///   - branch: a branch name to record in the version's metadata.
    /// - Returns: the version saved.
    /// - Throws: what the store's storage throws; nothing is saved then.
    @discardableResult
    public func save(
        inserting: [Value] = [], updating: [Value] = [], removing: [Value.ID] = [], branch: Branch? = nil
    ) throws -> Version {
        try save(
            inserting.map(Value.Change.insert) + updating.map(Value.Change.update) + removing.map(Value.Change.remove),
            branch: branch)
    }

    /// A value at the current version.
    public func value(id: Value.ID) throws -> Value? {
        guard let current = currentVersionId else { return nil }
        return try store.value(id: id, at: current)
    }

    /// All values at the current version.
    public func values() throws -> [Value] {
        guard let current = currentVersionId else { return [] }
        return try store.values(at: current)
    }

    // MARK: Merging and history

    /// Merges the selected heads into the current version and makes the result current. By default only heads on no
    /// named branch: a branch's head stays apart until it is merged on purpose.
    @discardableResult
    public func mergeHeads(
        selection: HeadSelection = .unbranched,
        resolvingWith arbiter: (any MergeArbiter)? = nil
    ) throws -> Version? {
        guard let current = currentVersionId else {
            // An empty working state adopts the most recent selected head (any head when none is), then merges the rest.
            let selected = store.heads.compactMap(store.version(identifiedBy:)).filter(selection.includes).max(
                by: History.isOrderedBefore)
            guard let head = selected ?? store.mostRecentHead else { return nil }
            try setCurrentVersion(head.id)
            return try mergeHeads(selection: selection, resolvingWith: arbiter)
        }
        let merged = try store.mergeHeads(into: current, selection: selection, resolvingWith: arbiter ?? mergeArbiter)
        try setCurrentVersion(merged.id)
        return merged
    }

    /// Loads versions other processes saved into the store's folder.
    @discardableResult
    public func reloadHistory() throws -> [Version.ID] {
        let added = try store.reloadHistory()
        if currentVersionId == nil, let head = store.mostRecentHead { try setCurrentVersion(head.id) }
        return added
    }

    /// When snapshots are taken automatically after an exchange.
    public var snapshotPolicy = SnapshotPolicy.disabled

    /// Sets when an exchange also uploads a snapshot (`SnapshotPolicy`).
    public func setSnapshotPolicy(_ policy: SnapshotPolicy) { snapshotPolicy = policy }

    /// Brings in what the remote has, merges the heads into the current version, and sends what the remote lacks
    /// (the merge included). The remote is listed once, or read from its change feed; a feed position is saved only
    /// after the send. With an automatic snapshot policy and an exchange that carries snapshots, a snapshot follows
    /// when the policy says one is due.
    public func exchange(
        with exchange: any Exchange, selection: HeadSelection = .unbranched,
        resolvingWith arbiter: (any MergeArbiter)? = nil
    ) async throws -> ExchangeReport {
        try await self.exchange(
            with: exchange, listing: try await exchange.remoteListing(), selection: selection,
            resolvingWith: arbiter ?? mergeArbiter)
    }

    /// An exchange from a listing of the remote already made.
    private func exchange(
        with exchange: any Exchange, listing: RemoteListing, selection: HeadSelection,
        resolvingWith arbiter: any MergeArbiter
    ) async throws -> ExchangeReport {
        // What arrives is made durable in batches (one sync of many version files), not version by version.
        let retrieved = try await store.receivingInBulk {
            try await exchange.retrieve(remoteVersionIds: listing.versionIds)
        }
        try mergeHeads(selection: selection, resolvingWith: arbiter)
        let sent = try await exchange.send(remoteVersionIds: listing.versionIds)
        try await exchange.syncCompleted(listing, retrieved: retrieved, sent: sent)
        var report = ExchangeReport(retrieve: retrieved, send: sent, listing: listing.source)
        if snapshotPolicy.isEnabled, let snapshots = exchange as? any SnapshotExchange {
            // A damaged manifest is replaced by the next snapshot, as a missing one would be.
            let manifest: SnapshotManifest?
            do { manifest = try await snapshots.snapshotManifest() } catch ExchangeError.malformedFile {
                manifest = nil
            }
            if snapshotPolicy.isDue(lastSnapshot: manifest, versionCount: store.history.count, now: Date()) {
                report.snapshot = try await snapshots.sendSnapshot()
            }
        }
        return report
    }

    /// Starts an empty store from the remote's snapshot, then syncs what came after it. A snapshot in a format this
    /// build does not read is skipped (the outcome says so) and every version is pulled instead. Fails with
    /// `storeNotEmpty` when the store has versions; a failed restore leaves the store empty.
    public func bootstrapFromSnapshot(
        using exchange: any SnapshotExchange, selection: HeadSelection = .unbranched,
        resolvingWith arbiter: (any MergeArbiter)? = nil
    ) async throws -> BootstrapOutcome {
        try store.reloadHistory()
        guard store.history.isEmpty else { throw StoreError.storeNotEmpty(path: store.rootURL.path) }
        var outcome: BootstrapOutcome = .noSnapshot
        var snapshot: SnapshotManifest?
        do {
            snapshot = try await exchange.snapshotManifest()
        } catch let error as CloudFileSystemError where error.isRetryable {
            throw error
        } catch let error as CancellationError {
            throw error
        } catch {
            // A manifest that cannot be read (damaged, cut, of no known shape) costs the snapshot, never the clone:
            // every version is pulled instead, as for a damaged chunk.
            outcome = .fellBackToFullPull(reason: "\(error)")
        }
        // The listing that finds what came after the snapshot is made while the snapshot downloads and restores
        // (a listing reads nothing of the store's): on WebDAV, listing 10,000 versions takes about as long as
        // restoring a small store. Versions added meanwhile wait for the next sync, as after any listing.
        async let earlyListing = exchange.remoteListing()
        if let manifest = snapshot {
            if manifest.isReadable {
                let temporary = store.temporaryFile("bootstrap")
                defer { try? FileManager.default.removeItem(at: temporary) }
                do {
                    try await exchange.downloadSnapshot(manifest, to: temporary)
                    let released = try await exchange.releasedRecords(of: manifest)
                    try store.restoreSnapshot(
                        from: temporary, format: manifest.format, versionCount: manifest.versionCount,
                        released: released)
                    outcome = .restored(manifest)
                } catch let error as CancellationError {
                    throw error
                } catch {
                    // A failed restore leaves the store empty, so pulling every version starts from a clean slate.
                    guard store.history.isEmpty else { throw error }
                    outcome = .fellBackToFullPull(reason: "\(error)")
                }
            } else {
                outcome = .skippedUnreadableFormat(manifest.format)
            }
        }
        let report = try await self.exchange(
            with: exchange, listing: try await earlyListing, selection: selection,
            resolvingWith: arbiter ?? mergeArbiter)
        let failures = report.retrieve.failures + report.send.failures
        if let first = failures.first {
            throw ExchangeError.incomplete(failures: failures.count, first: first.description)
        }
        return outcome
    }

    /// The current version after each change of it, starting with the current one.
    public func versionUpdates() -> AsyncStream<Version.ID?> {
        let (stream, continuation) = AsyncStream<Version.ID?>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let key = UUID()
        observers[key] = continuation
        continuation.yield(currentVersionId)
        continuation.onTermination = { [weak self] _ in
            Task { await self?.removeObserver(key) }
        }
        return stream
    }

    private func removeObserver(_ key: UUID) { observers[key] = nil }
}
