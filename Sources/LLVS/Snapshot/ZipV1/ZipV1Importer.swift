import Foundation
import LLVSCodecs
import LLVSSupport
import Synchronization

/// Reads an LLVS app's zip-v1 snapshot (a zip of its store folder, in upstream's layout) into this package's
/// storage. Each version's changes are found from the sub-nodes it wrote, compared with its first predecessor's
/// copies (`UpstreamMapReader`), so the work follows the changes, not the store's size.
/// The versions are built by a staging store into one `llvs-bundles-v1` archive, which the target store then
/// restores at once (all or nothing).
struct ZipV1Importer {
    let archive: ZipArchiveReader
    /// The archive's store files by path; Swift's String equality makes lookups normalization-insensitive.
    let files: [String: ZipArchiveReader.Entry]
    /// For each version, the keys of the sub-nodes (not the root) the archive holds under it: the buckets it changed.
    let writtenSubNodes: [Version.ID: [String]]
    /// The map node files by key and version, read from their names once, so finding one builds no path.
    let nodeFiles: [UpstreamNodeReference: ZipArchiveReader.Entry]
    /// Largest map node or LLZF value decoded in memory.
    static let decodeLimit = 1 << 30

    /// The versions of `versions/`, in no particular order.
    let decodedVersions: [Version]

    /// Indexes the archive's store files and decodes its version files, both at once: the version files are picked
    /// out by name first, then decoded on every core while one builds the index (which took a core alone, 60–100 ms
    /// for 40,000 entries, while the other waited).
    init(archive: ZipArchiveReader) throws {
        self.archive = archive
        let versionEntries = archive.entries.filter { !$0.isDirectory && Self.isVersionFile($0.name) }
        let shareCount = max(1, min(4 * ProcessInfo.processInfo.activeProcessorCount, versionEntries.count / 256))
        let shares = Mutex([Result<[Version], any Error>?](repeating: nil, count: shareCount))
        let index = Mutex<Index?>(nil)
        // Item 0, the index, is taken first; the version shares spread over whatever threads are free.
        DispatchQueue.concurrentPerform(iterations: shareCount + 1) { item in
            guard item > 0 else {
                let built = Index(archive)
                index.withLock { $0 = built }
                return
            }
            let share = item - 1
            let range = (versionEntries.count * share / shareCount)..<(versionEntries.count * (share + 1) / shareCount)
            let result = Result {
                try versionEntries[range].map { entry in try Self.decodeVersion(entry, in: archive) }
            }
            shares.withLock { $0[share] = result }
        }
        let built = index.withLock { $0 }!
        files = built.files
        writtenSubNodes = built.writtenSubNodes
        nodeFiles = built.nodeFiles
        // Entries whose names are equal (as Strings) count once, the last, as in the index.
        var seen = Set<Version.ID>()
        var versions = try shares.withLock { $0 }.flatMap { try $0!.get() }.reversed().filter {
            seen.insert($0.id).inserted
        }
        versions.reverse()
        decodedVersions = versions
    }

    /// The index of the archive's store files.
    private struct Index: Sendable {
        var files: [String: ZipArchiveReader.Entry] = [:]
        var writtenSubNodes: [Version.ID: [String]] = [:]
        var nodeFiles: [UpstreamNodeReference: ZipArchiveReader.Entry] = [:]

        init(_ archive: ZipArchiveReader) {
            // Sized at once: growing them entry by entry rehashed every name many times over.
            files.reserveCapacity(archive.entries.count)
            nodeFiles.reserveCapacity(archive.entries.count)
            for entry in archive.entries where !entry.isDirectory {
                // Only the store's own folders count (upstream restores just these); Coordinator.json and others are not the store's.
                guard
                    entry.name.hasPrefix(UpstreamLayout.versionsFolder + "/")
                        || entry.name.hasPrefix(UpstreamLayout.valuesFolder + "/")
                        || entry.name.hasPrefix(UpstreamLayout.mapFolder + "/")
                else { continue }
                files[entry.name] = entry
                if let node = UpstreamLayout.nodeLocation(ofPath: entry.name) {
                    nodeFiles[node] = entry
                    if node.key != UpstreamLayout.rootNodeKey {
                        writtenSubNodes[node.version, default: []].append(node.key)
                    }
                }
            }
        }
    }

    private static func isVersionFile(_ name: String) -> Bool {
        name.hasPrefix(UpstreamLayout.versionsFolder + "/") && name.hasSuffix(".json")
    }

    func corrupt(_ reason: String) -> StoreError { .corruptFile(path: archive.path, reason: reason) }

    /// The versions in `versions/`, predecessors first; at least `expectedCount` of them.
    func versions(expectedCount: Int) throws -> [Version] {
        guard decodedVersions.count >= expectedCount else {
            throw corrupt("it holds \(decodedVersions.count) versions, the manifest says \(expectedCount)")
        }
        return try Self.predecessorsFirst(decodedVersions) {
            corrupt("version \($0) lacks a predecessor in the snapshot")
        }
    }

    /// `versions` in the order `History.topologicallySorted` gives (by generation, then timestamp and ID), worked out
    /// on indices: a History's dictionaries took 30–40 ms for 10,000 versions, and the staging store builds one anyway.
    /// `stranded` makes the error for a version whose predecessor is missing (or lies on a cycle).
    static func predecessorsFirst(_ versions: [Version], stranded: (Version.ID) -> StoreError) throws -> [Version] {
        var indexOf: [Version.ID: Int] = [:]
        indexOf.reserveCapacity(versions.count)
        for (index, version) in versions.enumerated() where indexOf.updateValue(index, forKey: version.id) != nil {
            throw StoreError.versionAlreadyExists(version.id)
        }
        // Kahn's algorithm: a version is placed once all its predecessors are; its generation is one more than theirs.
        var waitingFor = [Int](repeating: 0, count: versions.count)
        var successors = [[Int]](repeating: [], count: versions.count)
        var ready: [Int] = []
        for (index, version) in versions.enumerated() {
            for predecessor in version.predecessors?.ids ?? [] {
                guard let predecessorIndex = indexOf[predecessor] else { throw stranded(version.id) }
                successors[predecessorIndex].append(index)
                waitingFor[index] += 1
            }
            if waitingFor[index] == 0 { ready.append(index) }
        }
        var generation = [Int](repeating: 0, count: versions.count)
        var byGeneration: [[Int]] = []
        var placed = 0
        while let index = ready.popLast() {
            placed += 1
            if generation[index] >= byGeneration.count { byGeneration.append([]) }
            byGeneration[generation[index]].append(index)
            for successor in successors[index] {
                generation[successor] = max(generation[successor], generation[index] + 1)
                waitingFor[successor] -= 1
                if waitingFor[successor] == 0 { ready.append(successor) }
            }
        }
        guard placed == versions.count else { throw stranded(versions[waitingFor.firstIndex { $0 > 0 }!].id) }
        return History.joined(generations: byGeneration.map { $0.map { versions[$0] } })
    }

    private static func decodeVersion(_ entry: ZipArchiveReader.Entry, in archive: ZipArchiveReader) throws -> Version {
        let name = entry.name
        func corrupt(_ reason: String) -> StoreError { .corruptFile(path: archive.path, reason: reason) }
        let version: Version
        do {
            let data = try archive.data(entry, limit: 16 << 20)
            version = try Version.fastDecoded(from: data) ?? JSONDecoder().decode(Version.self, from: data)
        } catch let error as ZipError {
            throw error
        } catch {
            throw corrupt("the version file \(name) is not a version: \(RemoteFormat.describe(error))")
        }
        guard UpstreamLayout.versionPath(version.id) == name else {
            throw corrupt("the version file \(name) holds version \(version.id)")
        }
        return version
    }

    func contents(_ entry: ZipArchiveReader.Entry) throws -> Data {
        try UpstreamLayout.decompressIfNeeded(
            try archive.data(entry, limit: Int64(Self.decodeLimit)), limit: Self.decodeLimit)
    }

    /// Whether the archive holds the map node `key` of `version`.
    func hasNode(_ key: String, version: Version.ID) -> Bool {
        nodeFiles[UpstreamNodeReference(key: key, version: version)] != nil
            || files[UpstreamLayout.nodePath(key, version: version)] != nil
    }

    /// The contents of the map node `key` of `version`, and its path (for messages).
    private func nodeData(_ key: String, version: Version.ID) throws -> (data: Data, path: () -> String) {
        let path = { UpstreamLayout.nodePath(key, version: version) }
        guard let entry = nodeFiles[UpstreamNodeReference(key: key, version: version)] ?? files[path()] else {
            throw corrupt("the map node \(path()) is missing")
        }
        return (try contents(entry), path)
    }

    /// A sub-node's value references, for comparing versions' copies of it.
    func bucket(_ key: String, version: Version.ID) throws -> UpstreamBucket {
        let (data, path) = try nodeData(key, version: version)
        do { return try UpstreamBucket(json: data) } catch is UpstreamBucket.NotValues {
            throw corrupt("the map node \(key) of version \(version) lists nodes, not values")
        } catch {
            throw corrupt("the map node \(path()) is not a map node: \(error)")
        }
    }

    func node(_ key: String, version: Version.ID, keepingKeyStrings: Bool = true) throws -> UpstreamMapNode {
        let (data, path) = try nodeData(key, version: version)
        do { return try UpstreamMapNodeParser.parse(data, keepingKeyStrings: keepingKeyStrings) } catch {
            throw corrupt("the map node \(path()) is not a map node: \(error)")
        }
    }

    /// Imports every version into `store` (which must be empty); returns how many.
    func importAll(into store: Store, expectedCount: Int) throws -> Int {
        let versions = try versions(expectedCount: expectedCount)
        let stagingFolder = store.temporaryFile("zip-import")
        defer { try? FileManager.default.removeItem(at: stagingFolder) }
        let staged: Staged
        do {
            staged = try stage(
                versions, in: stagingFolder.appendingPathComponent("written-sub-nodes"), source: .writtenSubNodes)
        } catch let error where error is UpstreamMapReader.HeadMismatch || error is StoreError {
            // Not built by upstream's rule (or damaged): read every root, which is authoritative, or fail on that.
            staged = try stage(versions, in: stagingFolder.appendingPathComponent("root-nodes"), source: .rootNodes)
        }
        try store.restoreStagedSnapshot(
            from: try SnapshotArchiveReader(url: URL(fileURLWithPath: staged.path), entries: staged.entries),
            headers: staged.headers, history: staged.history)
        return versions.count
    }

    /// An archive built by a staging store: its path, where its bundles lie, their headers and their history.
    private struct Staged {
        var path: String
        var entries: [SnapshotArchiveReader.Entry]
        var headers: [StoredVersion]
        var history: History
    }

    /// Rebuilds the versions through a staging store into one llvs-bundles-v1 archive in `folder`.
    /// A thread of its own reads the archive and works out each version's changes while this one commits them,
    /// at most `workAheadBudget` bytes ahead: on two cores the reading and the committing each take about half.
    private func stage(_ versions: [Version], in folder: URL, source: UpstreamMapReader.Source) throws -> Staged {
        let archivePath = folder.appendingPathComponent("snapshot.bundles").path
        try POSIX.makeDirectories(folder.path)
        let stagingStorage = try StagingArchiveStorage(path: archivePath)
        // It reads back only the nodes on the path the previous version changed.
        let staging = try Store(
            creatingAt: folder, descriptor: StoreDescriptor(storage: "staging"), mapNodeCacheLimit: 4096
        ) { _, _, _ in stagingStorage }
        staging.reserveCapacity(forVersions: versions.count)
        // Handed over in batches: a wake-up of the other thread per version would cost more than many versions' work.
        let handoff = OrderedHandoff<[StagedStep]>(budget: Self.workAheadBudget)
        let readerDone = DispatchSemaphore(value: 0)
        let importer = self
        Thread {
            defer {
                handoff.finish()
                readerDone.signal()
            }
            var batch: [StagedStep] = []
            var batchWeight = 0
            /// False when the committing side has stopped (the batch's files are then released here).
            func handOver() -> Bool {
                defer { (batch, batchWeight) = ([], 0) }
                if batch.isEmpty || handoff.put(batch, weight: batchWeight) { return true }
                for case .version(_, let changes) in batch { changes.received.discard() }
                return false
            }
            var maps = UpstreamMapReader(importer: importer, versions: versions, source: source)
            do {
                for version in versions {
                    let changes = try maps.changes(of: version, temporaryFile: { staging.temporaryFile("value") })
                    batch.append(.version(version, changes))
                    batchWeight += Self.weight(of: changes)
                    if batch.count >= Self.batchSize || batchWeight >= Self.workAheadBudget / 16 {
                        guard handOver() else { return }
                    }
                }
                if source == .writtenSubNodes { try maps.checkHeads() }
            } catch {
                batch.append(.failed(error))
            }
            _ = handOver()
        }.start()
        defer {
            // Stops the reader (when this one failed first) and releases what it had read ahead, before returning.
            for case .version(_, let changes) in handoff.cancel().joined() { changes.received.discard() }
            readerDone.wait()
        }
        while let steps = handoff.take() {
            for (index, step) in steps.enumerated() {
                do {
                    switch step {
                    case .failed(let error):
                        throw error
                    case .version(let version, let changes):
                        defer { changes.received.discard() }
                        let received = try changes.read(from: self)
                        do { try staging.addVersion(version, receiving: received) } catch let error as StoreError {
                            throw corrupt("version \(version.id) cannot be rebuilt: \(error)")
                        }
                    }
                } catch {
                    for case .version(_, let changes) in steps[(index + 1)...] { changes.received.discard() }
                    throw error
                }
            }
        }
        let (headers, entries) = try stagingStorage.finish()
        let history = staging.history
        // Its caches (thousands of decoded map nodes) are freed off the way to the restore.
        releaseInBackground(staging)
        return Staged(path: archivePath, entries: entries, headers: headers, history: history)
    }

    /// How far (in bytes of values, roughly) the reading thread may run ahead of the committing one.
    static let workAheadBudget = 32 << 20
    /// Versions handed over at once (fewer when their values pass a sixteenth of the budget).
    static let batchSize = 64

    /// What the reading thread hands the committing one: a version and its changes, or why it stopped.
    private enum StagedStep: Sendable {
        case version(Version, UpstreamMapReader.VersionChanges)
        case failed(any Error)
    }

    /// The memory a version's changes hold until committed: their in-memory values (the unread ones once read)
    /// and a little per change.
    private static func weight(of changes: UpstreamMapReader.VersionChanges) -> Int {
        changes.received.changes.reduce(256) { total, change in
            switch change {
            case .insert(let value), .update(let value): total + value.data.count + 64
            case .remove, .preserve, .preserveRemoval: total + 64
            }
        } + changes.unread.reduce(0) { $0 + Int($1.entry.size) + 64 }
    }
}
