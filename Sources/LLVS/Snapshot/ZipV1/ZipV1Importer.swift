import Foundation
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

    init(archive: ZipArchiveReader) {
        self.archive = archive
        var files: [String: ZipArchiveReader.Entry] = [:]
        var writtenSubNodes: [Version.ID: [String]] = [:]
        var nodeFiles: [UpstreamNodeReference: ZipArchiveReader.Entry] = [:]
        for entry in archive.entries where !entry.isDirectory {
            // Only the store's own folders count (upstream restores just these); Coordinator.json and others are not the store's.
            guard entry.name.hasPrefix(UpstreamLayout.versionsFolder + "/") || entry.name.hasPrefix(UpstreamLayout.valuesFolder + "/")
                    || entry.name.hasPrefix(UpstreamLayout.mapFolder + "/") else { continue }
            files[entry.name] = entry
            if let node = UpstreamLayout.nodeLocation(ofPath: entry.name) {
                nodeFiles[node] = entry
                if node.key != UpstreamLayout.rootNodeKey { writtenSubNodes[node.version, default: []].append(node.key) }
            }
        }
        self.files = files
        self.writtenSubNodes = writtenSubNodes
        self.nodeFiles = nodeFiles
    }

    func corrupt(_ reason: String) -> StoreError { .corruptFile(path: archive.path, reason: reason) }

    /// The versions in `versions/`, predecessors first; at least `expectedCount` of them.
    func versions(expectedCount: Int) throws -> [Version] {
        let versionFiles = files.filter { name, _ in name.hasPrefix(UpstreamLayout.versionsFolder + "/") && name.hasSuffix(".json") }.sorted { $0.key < $1.key }
        // Decoded on every core, in contiguous shares: thousands of small JSON files, each independent of the others.
        let shareCount = max(1, min(ProcessInfo.processInfo.activeProcessorCount, versionFiles.count / 256))
        let shares = Mutex([Result<[Version], any Error>?](repeating: nil, count: shareCount))
        DispatchQueue.concurrentPerform(iterations: shareCount) { share in
            let range = (versionFiles.count * share / shareCount)..<(versionFiles.count * (share + 1) / shareCount)
            let result = Result { try versionFiles[range].map { name, entry in try decodeVersion(name: name, entry: entry) } }
            shares.withLock { $0[share] = result }
        }
        let versions = try shares.withLock { $0 }.flatMap { try $0!.get() }
        guard versions.count >= expectedCount else {
            throw corrupt("it holds \(versions.count) versions, the manifest says \(expectedCount)")
        }
        var history = History()
        if let stranded = try history.add(unordered: versions).first {
            throw corrupt("version \(stranded.id) lacks a predecessor in the snapshot")
        }
        return history.topologicallySorted()
    }

    private func decodeVersion(name: String, entry: ZipArchiveReader.Entry) throws -> Version {
        let version: Version
        do {
            let data = try archive.data(entry, limit: 16 << 20)
            version = try Version.fastDecoded(from: data) ?? JSONDecoder().decode(Version.self, from: data)
        } catch let error as ZipError {
            throw error
        } catch {
            throw corrupt("the version file \(name) is not a version: \(RemoteFormat.describe(error))")
        }
        guard UpstreamLayout.versionPath(version.id) == name else { throw corrupt("the version file \(name) holds version \(version.id)") }
        return version
    }

    /// Reads a file of the store, undoing LLZF; nil when the archive lacks it.
    func file(_ path: String) throws -> Data? {
        try files[path].map(contents)
    }

    private func contents(_ entry: ZipArchiveReader.Entry) throws -> Data {
        try UpstreamLayout.decompressIfNeeded(try archive.data(entry, limit: Int64(Self.decodeLimit)), limit: Self.decodeLimit)
    }

    /// Whether the archive holds the map node `key` of `version`.
    func hasNode(_ key: String, version: Version.ID) -> Bool {
        nodeFiles[UpstreamNodeReference(key: key, version: version)] != nil || files[UpstreamLayout.nodePath(key, version: version)] != nil
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
        let staged: (path: String, headers: [StoredVersion])
        do {
            staged = try stage(versions, in: stagingFolder.appendingPathComponent("written-sub-nodes"), source: .writtenSubNodes)
        } catch let error where error is UpstreamMapReader.HeadMismatch || error is StoreError {
            // Not built by upstream's rule (or damaged): read every root, which is authoritative, or fail on that.
            staged = try stage(versions, in: stagingFolder.appendingPathComponent("root-nodes"), source: .rootNodes)
        }
        try store.restoreStagedSnapshot(from: URL(fileURLWithPath: staged.path), headers: staged.headers)
        return versions.count
    }

    /// Rebuilds the versions through a staging store into one llvs-bundles-v1 archive in `folder`; returns its path
    /// and its versions' headers.
    /// A thread of its own reads the archive and works out each version's changes while this one commits them,
    /// at most `workAheadBudget` bytes ahead: on two cores the reading and the committing each take about half.
    private func stage(_ versions: [Version], in folder: URL, source: UpstreamMapReader.Source) throws -> (path: String, headers: [StoredVersion]) {
        let archivePath = folder.appendingPathComponent("snapshot.bundles").path
        try POSIX.makeDirectories(folder.path)
        let stagingStorage = try StagingArchiveStorage(path: archivePath)
        // It reads back only the nodes on the path the previous version changed.
        let staging = try Store(creatingAt: folder, descriptor: StoreDescriptor(storage: "staging"), mapNodeCacheLimit: 4096) { _, _, _ in stagingStorage }
        // Handed over in batches: one wake-up of the other thread per version was a tenth of the import's time.
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
                for case .version(_, let received) in batch { received.discard() }
                return false
            }
            var maps = UpstreamMapReader(importer: importer, versions: versions, source: source)
            do {
                for version in versions {
                    let received = try maps.changes(of: version, temporaryFile: { staging.temporaryFile("value") })
                    batch.append(.version(version, received))
                    batchWeight += Self.weight(of: received)
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
            for case .version(_, let received) in handoff.cancel().joined() { received.discard() }
            readerDone.wait()
        }
        while let steps = handoff.take() {
            for (index, step) in steps.enumerated() {
                do {
                    switch step {
                    case .failed(let error):
                        throw error
                    case .version(let version, let received):
                        defer { received.discard() }
                        do { try staging.addVersion(version, receiving: received) } catch let error as StoreError {
                            throw corrupt("version \(version.id) cannot be rebuilt: \(error)")
                        }
                    }
                } catch {
                    for case .version(_, let received) in steps[(index + 1)...] { received.discard() }
                    throw error
                }
            }
        }
        return (archivePath, try stagingStorage.finish())
    }

    /// How far (in bytes of values, roughly) the reading thread may run ahead of the committing one.
    static let workAheadBudget = 32 << 20
    /// Versions handed over at once (fewer when their values pass a sixteenth of the budget).
    static let batchSize = 64

    /// What the reading thread hands the committing one: a version and its changes, or why it stopped.
    private enum StagedStep: Sendable {
        case version(Version, ReceivedChanges)
        case failed(any Error)
    }

    /// The memory a version's changes hold until committed: their in-memory values and a little per change.
    private static func weight(of received: ReceivedChanges) -> Int {
        received.changes.reduce(256) { total, change in
            switch change {
            case .insert(let value), .update(let value): total + value.data.count + 64
            case .remove, .preserve, .preserveRemoval: total + 64
            }
        }
    }
}
