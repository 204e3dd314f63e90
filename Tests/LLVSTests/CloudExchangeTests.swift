import Foundation
import LLVSConformance
import Testing
@testable import LLVS
import LLVSSupport

/// CloudFileSystemExchange over the local-folder file system: interruptions, the written format, snapshots.
@Suite struct CloudExchangeTests {
    let directory = TemporaryDirectory()

    func exchange(_ store: Store, _ fileSystem: any CloudFileSystem) -> CloudFileSystemExchange {
        CloudFileSystemExchange(store: store, fileSystem: fileSystem, basePath: "sync", concurrency: 4)
    }

    /// A store with `count` linear versions and a branch, each changing a couple of values.
    func populatedStore(name: String, versions count: Int, storage: StorageKind = .file) throws -> Store {
        let store = try makeStore(in: directory, name: name, storage: storage)
        var head = try store.save(nil, insert: ["root": "0"])
        for i in 1..<count {
            head = try store.save(head.id, insert: ["v\(i)": "\(i)"], update: ["root": "\(i)"])
        }
        let branch = try store.save(head.id, insert: ["side": "branch"], branch: "side")
        _ = try store.merge(version: head.id, with: branch.id)
        return store
    }

    func sameContents(_ a: Store, _ b: Store) throws -> Bool {
        guard a.heads == b.heads, a.history.count == b.history.count else { return false }
        return try a.heads.allSatisfy { try a.strings(at: $0) == b.strings(at: $0) }
    }

    @Test(arguments: [1, 2, 3, 5, 8, 13])
    func aSendInterruptedAtAnyUploadResumesWithNothingLostOrDuplicated(failAt: Int) async throws {
        let source = try populatedStore(name: "source", versions: 6)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let broken = FaultInjectingFileSystem(
            remote,
            rule: { operation, number, _ in
                operation == .upload && number >= failAt ? .server(status: 500, message: "the link died") : nil
            })
        let first = try await exchange(source, broken).send()
        #expect(!first.failures.isEmpty)
        let second = try await exchange(source, remote).send()
        #expect(second.failures.isEmpty)
        #expect(Set(first.sent + second.sent) == Set(source.history.versions.keys))
        #expect(Set(first.sent).isDisjoint(with: second.sent))

        let target = try makeStore(in: directory, name: "target")
        let pulled = try await exchange(target, remote).retrieve()
        #expect(pulled.failures.isEmpty && pulled.waitingForPredecessors.isEmpty)
        #expect(try sameContents(source, target))
    }

    @Test(arguments: [1, 2, 4, 7, 11])
    func aRetrieveInterruptedAtAnyDownloadResumes(failAt: Int) async throws {
        let source = try populatedStore(name: "source", versions: 6)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        _ = try await exchange(source, remote).send()
        let target = try makeStore(in: directory, name: "target")
        let broken = FaultInjectingFileSystem(
            remote,
            rule: { operation, number, _ in
                operation == .download && number >= failAt ? .transient("connection lost") : nil
            })
        let first = try await exchange(target, broken).retrieve()
        #expect(!first.failures.isEmpty || !first.waitingForPredecessors.isEmpty)
        let second = try await exchange(target, remote).retrieve()
        #expect(second.failures.isEmpty)
        #expect(Set(first.retrieved).isDisjoint(with: second.retrieved))
        #expect(try sameContents(source, target))
    }

    @Test func changesGoUpBeforeTheirVersionAndDecodeAsTheFormatSays() async throws {
        let source = try populatedStore(name: "source", versions: 3)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let recorder = FaultInjectingFileSystem(remote)
        let order = OrderRecorder()
        recorder.setRule { operation, _, path in
            if operation == .upload { order.append(path) }
            return nil
        }
        _ = try await exchange(source, recorder).send()
        let uploads = order.paths
        for id in source.history.versions.keys {
            let changes = try #require(uploads.firstIndex(of: "sync/changes/\(id)"))
            let version = try #require(uploads.firstIndex(of: "sync/versions/\(id)"))
            #expect(changes < version)
            let versionData = try await remote.download("sync/versions/\(id)")
            #expect(try RemoteFormat.decodeVersion(versionData, path: "v") == source.version(identifiedBy: id))
            let changesData = try await remote.download("sync/changes/\(id)")
            #expect(
                try RemoteFormat.decodeChanges(changesData, path: "c")
                    == source.valueChanges(madeInVersionIdentifiedBy: id))
        }
    }

    @Test func anIncrementalSyncListsOnceAndMovesOnlyTheNewVersion() async throws {
        let a = try StoreCoordinator(store: try populatedStore(name: "a", versions: 20))
        let b = try StoreCoordinator(store: try makeStore(in: directory, name: "b"))
        let remote = FaultInjectingFileSystem(LocalFolderFileSystem(root: directory.child("remote")))
        _ = try await a.exchange(with: exchange(a.store, remote))
        _ = try await b.exchange(with: exchange(b.store, remote))
        try await a.save(inserting: [Value("new", "one more")])
        remote.resetCounts()
        _ = try await a.exchange(with: exchange(a.store, remote))
        #expect(remote.counts == [.list: 1, .upload: 2])
        remote.resetCounts()
        _ = try await b.exchange(with: exchange(b.store, remote))
        #expect(remote.counts == [.list: 1, .download: 2])
        #expect(try await b.value(id: "new")?.string == "one more")
    }

    // MARK: Snapshots

    @Test(
        arguments: [(StorageKind.file, StorageKind.file), (.sqlite, .sqlite), (.file, .sqlite), (.sqlite, .file)],
        [ZipV1Snapshot.format, SnapshotArchive.format])
    func aSnapshotBootstrapsAnEmptyStoreThenSyncsWhatCameAfter(
        storages: (from: StorageKind, to: StorageKind), format: String
    ) async throws {
        let (from, to) = storages
        let source = try StoreCoordinator(store: try populatedStore(name: "source", versions: 30, storage: from))
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let sourceExchange = exchange(source.store, remote)
        _ = try await source.exchange(with: sourceExchange)
        let manifest = try await sourceExchange.sendSnapshot(format: format)
        #expect(manifest.format == format)
        #expect(manifest.versionCount == source.store.history.count)
        #expect(manifest.latestVersionId == source.store.mostRecentHead?.id)
        try await source.save(inserting: [Value("after", "the snapshot")])
        _ = try await source.exchange(with: sourceExchange)

        let target = try StoreCoordinator(store: try makeStore(in: directory, name: "target", storage: to))
        let outcome = try await target.bootstrapFromSnapshot(using: exchange(target.store, remote))
        #expect(outcome == .restored(manifest))
        #expect(try sameContents(source.store, target.store))
        #expect(try await target.value(id: "after")?.string == "the snapshot")
        // The restored store takes saves like any other.
        try await target.save(inserting: [Value("later", "x")])
    }

    @Test func aSecondSnapshotReplacesTheFirstAfterItsManifestIsInPlace() async throws {
        let store = try populatedStore(name: "source", versions: 5)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let first = try await exchange(store, remote).sendSnapshot()
        _ = try store.save(store.mostRecentHead!.id, insert: ["more": "1"])
        let second = try await exchange(store, remote).sendSnapshot()
        #expect(first.snapshotId != second.snapshotId)
        #expect(try await remote.listNames("sync/snapshots").sorted() == [second.snapshotId, "manifest.json"].sorted())
        #expect(try await remote.listNames("sync/snapshots/\(second.snapshotId)") == ["chunk-000"])
    }

    /// Older LLVS (`fileStorage-v1`) left its chunks directly in `snapshots/`; a new snapshot removes them with the
    /// old manifest's snapshot, and leaves other files there alone.
    @Test func aReplacedFileStorageV1SnapshotLeavesNoLooseChunks() async throws {
        let store = try populatedStore(name: "source", versions: 3)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let old = SnapshotManifest(
            snapshotId: "old", format: "fileStorage-v1", createdAt: 0, latestVersionId: store.mostRecentHead!.id,
            versionCount: 3, chunkCount: 2, totalSize: 10, sha256: nil)
        try await remote.upload(try JSONEncoder().encode(old), to: "sync/snapshots/manifest.json")
        try await remote.upload(Data("12345".utf8), to: "sync/snapshots/chunk-000")
        try await remote.upload(Data("67890".utf8), to: "sync/snapshots/chunk-001")
        try await remote.upload(Data("mine".utf8), to: "sync/snapshots/notes.txt")
        let new = try await exchange(store, remote).sendSnapshot()
        #expect(
            try await remote.listNames("sync/snapshots").sorted()
                == [new.snapshotId, "manifest.json", "notes.txt"].sorted())
    }

    /// A store of twelve versions, each adding a megabyte of random bytes (`blob0`…`blob11`), so deflate cannot shrink
    /// its zip-v1 snapshot below three chunks; and its last version.
    func storeOfTwelveRandomMegabytes(seed: UInt64) throws -> (store: Store, head: Version) {
        let store = try makeStore(in: directory, name: "source")
        var head: Version?
        for i in 0..<12 {
            let blob = SeededGenerator.bytes(1_000_000, seed: seed &* 100 &+ UInt64(i))
            head = try store.makeVersion(
                basedOnPredecessor: head?.id, inserting: [Value(id: Value.ID("blob\(i)"), data: blob)])
        }
        return (store, try #require(head))
    }

    @Test func aBigSnapshotIsCutIntoChunksOfAtMostFiveMillionBytes() async throws {
        let (store, head) = try storeOfTwelveRandomMegabytes(seed: 12)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let manifest = try await exchange(store, remote).sendSnapshot()
        #expect(manifest.chunkCount == 3)
        for index in 0..<manifest.chunkCount {
            let item = try await remote.metadata(
                "sync/snapshots/\(manifest.snapshotId)/\(SnapshotManifest.chunkName(index))")
            #expect(
                item.size == Int64(index < 2 ? 5_000_000 : manifest.size(ofChunk: 2)),
                "cut at every 5,000,000 bytes, as LLVS does")
        }
        let target = try StoreCoordinator(store: try makeStore(in: directory, name: "target"))
        #expect(try await target.bootstrapFromSnapshot(using: exchange(target.store, remote)) == .restored(manifest))
        #expect(try target.store.value(id: "blob11", at: head.id)?.data.count == 1_000_000)
        // Through a window narrower than the chunk count too: chunks are written at their offsets as they arrive and
        // hashed in order.
        for concurrency in [1, 2] {
            let narrow = try StoreCoordinator(store: try makeStore(in: directory, name: "target-\(concurrency)"))
            let narrowExchange = CloudFileSystemExchange(
                store: narrow.store, fileSystem: remote, basePath: "sync", concurrency: concurrency)
            #expect(try await narrow.bootstrapFromSnapshot(using: narrowExchange) == .restored(manifest))
            #expect(try narrow.store.value(id: "blob11", at: head.id)?.data.count == 1_000_000)
        }
    }

    /// A local folder whose first snapshot chunk is only sent once the last one has been asked for: a download that
    /// waits for the first chunk before starting more never gets it (the test's time limit then cancels the wait).
    final class HoldsTheFirstChunk: ForwardingFileSystem {
        let base: any CloudFileSystem
        let lastChunk: String
        /// Finished when the last chunk is asked for; its end is the event the first chunk waits for.
        private let lastAskedFor = AsyncStream<Void>.makeStream()

        init(base: any CloudFileSystem, lastChunk: String) {
            self.base = base
            self.lastChunk = lastChunk
        }

        private func hold(_ path: String) async throws {
            if path.hasSuffix("/" + lastChunk) { lastAskedFor.continuation.finish() }
            if path.hasSuffix("/chunk-000") {
                // Ends when the stream is finished, or when the task is cancelled.
                for await _ in lastAskedFor.stream {}
                try Task.checkCancellation()
            }
        }

        func read(_ path: String, range: ByteRange?) async throws -> Data {
            try await hold(path)
            return try await base.read(path, range: range)
        }

        /// Chunks go straight into their places in the file.
        func download(_ path: String, to destination: DownloadDestination) async throws {
            try await hold(path)
            try await base.download(path, to: destination)
        }
    }

    /// With two chunks in flight, the second arriving starts the third while the first is still on its way; the
    /// chunks that came early are hashed from the file once the first is in.
    @Test(.timeLimit(.minutes(10))) func aSlowChunkHoldsBackNoOther() async throws {
        let (store, head) = try storeOfTwelveRandomMegabytes(seed: 13)
        let local = LocalFolderFileSystem(root: directory.child("remote"))
        let manifest = try await exchange(store, local).sendSnapshot()
        #expect(manifest.chunkCount == 3)
        let remote = HoldsTheFirstChunk(base: local, lastChunk: SnapshotManifest.chunkName(2))
        let target = try StoreCoordinator(store: try makeStore(in: directory, name: "target"))
        let exchange = CloudFileSystemExchange(
            store: target.store, fileSystem: remote, basePath: "sync", concurrency: 2)
        #expect(try await target.bootstrapFromSnapshot(using: exchange) == .restored(manifest))
        #expect(try target.store.value(id: "blob11", at: head.id)?.data.count == 1_000_000)
    }

    /// The damaged chunk is refused (its SHA-256 fails), nothing of the snapshot enters the store, and every version
    /// is pulled instead.
    @Test func aCorruptedChunkIsRefusedAndEveryVersionIsPulledInstead() async throws {
        let (store, remote, manifest) = try await remoteWithSnapshot(versions: 10)
        let chunk = "sync/snapshots/\(manifest.snapshotId)/chunk-000"
        var bytes = try await remote.download(chunk)
        bytes[bytes.count / 2] ^= 0x01
        try await remote.upload(bytes, to: chunk)

        let (target, outcome) = try await bootstrap(from: remote)
        switch outcome {
        case .fellBackToFullPull(let reason):
            #expect(reason.contains("SHA-256") || reason.contains("sha256") || reason.contains("checksum"), "\(reason)")
        default: Issue.record("expected a fall-back, got \(outcome)")
        }
        #expect(target.store.history.count == store.history.count)
        try await target.save(inserting: [Value("usable", "yes")])
    }

    /// A remote holding `count` versions of a new store and a snapshot of them.
    private func remoteWithSnapshot(
        versions count: Int
    ) async throws -> (Store, LocalFolderFileSystem, SnapshotManifest) {
        let store = try populatedStore(name: "source", versions: count)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        _ = try await exchange(store, remote).send()
        return (store, remote, try await exchange(store, remote).sendSnapshot())
    }

    /// A new store started from `remote`'s snapshot, and what the bootstrap did.
    private func bootstrap(from remote: LocalFolderFileSystem) async throws -> (StoreCoordinator, BootstrapOutcome) {
        let target = try StoreCoordinator(store: try makeStore(in: directory, name: "target"))
        return (target, try await target.bootstrapFromSnapshot(using: exchange(target.store, remote)))
    }

    /// A reader places each chunk at its offset (LLVS cuts at every 5,000,000 bytes), so chunks cut elsewhere are
    /// refused by name, even when their bytes join up to the manifest's hash; every version is pulled instead.
    @Test func chunksCutAtOtherOffsetsAreRefusedAndEveryVersionIsPulledInstead() async throws {
        var (store, remote, manifest) = try await remoteWithSnapshot(versions: 6)
        let folder = "sync/snapshots/\(manifest.snapshotId)"
        let whole = try await remote.download("\(folder)/chunk-000")
        #expect(manifest.chunkCount == 1 && whole.count == manifest.totalSize)
        try await remote.upload(whole.prefix(whole.count / 2), to: "\(folder)/chunk-000")
        try await remote.upload(whole.dropFirst(whole.count / 2), to: "\(folder)/chunk-001")
        manifest.chunkCount = 2
        try await remote.upload(try JSONEncoder().encode(manifest), to: "sync/snapshots/manifest.json")

        let (target, outcome) = try await bootstrap(from: remote)
        guard case .fellBackToFullPull(let reason) = outcome else {
            Issue.record("expected a fall-back, got \(outcome)"); return
        }
        #expect(reason.contains("chunk-00") && reason.contains("cut into chunks of 5000000 bytes"), "\(reason)")
        #expect(target.store.history.count == store.history.count)
    }

    @Test func aSnapshotInAFormatThisBuildDoesNotReadIsSkippedForAFullSync() async throws {
        let store = try populatedStore(name: "source", versions: 4)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        _ = try await exchange(store, remote).send()
        var manifest = try await exchange(store, remote).sendSnapshot()
        manifest.format = "future-v9"
        try await remote.upload(try JSONEncoder().encode(manifest), to: "sync/snapshots/manifest.json")

        let target = try StoreCoordinator(store: try makeStore(in: directory, name: "target"))
        let outcome = try await target.bootstrapFromSnapshot(using: exchange(target.store, remote))
        #expect(outcome == .skippedUnreadableFormat("future-v9"))
        #expect(outcome.message.contains("future-v9"))
        #expect(try sameContents(store, target.store))
    }

    /// A manifest of a format this build does not read follows its own rules (a 30 MB snapshot in 2 chunks; an ID this package would not
    /// write): it is skipped before any check, and a later `llvs snapshot` replaces it without touching a folder its
    /// ID cannot name.
    @Test func aSnapshotOfAnotherFormatIsSkippedBeforeAnyCheckOfItsSizes() async throws {
        let store = try populatedStore(name: "source", versions: 4)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        _ = try await exchange(store, remote).send()
        let foreign = SnapshotManifest(
            snapshotId: "../outside", format: "future-v9", createdAt: 0, latestVersionId: store.mostRecentHead!.id,
            versionCount: 4, chunkCount: 2, totalSize: 30_000_000, sha256: nil)
        try await remote.upload(try JSONEncoder().encode(foreign), to: "sync/snapshots/manifest.json")
        try await remote.upload(Data("keep".utf8), to: "outside/keep.txt")

        let target = try StoreCoordinator(store: try makeStore(in: directory, name: "target"))
        #expect(
            try await target.bootstrapFromSnapshot(using: exchange(target.store, remote))
                == .skippedUnreadableFormat("future-v9"))
        #expect(try sameContents(store, target.store))
        let replaced = try await exchange(store, remote).sendSnapshot()
        #expect(replaced.isReadable)
        #expect(try await remote.download("outside/keep.txt") == Data("keep".utf8))
    }

    @Test func aSnapshotReplacedWhileAReaderDownloadsFailsCleanly() async throws {
        let store = try populatedStore(name: "source", versions: 4)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let old = try await exchange(store, remote).sendSnapshot()
        // A writer replaces the snapshot between the reader's manifest and its chunks.
        _ = try store.save(store.mostRecentHead!.id, insert: ["x": "y"])
        _ = try await exchange(store, remote).sendSnapshot()
        let target = try makeStore(in: directory, name: "target")
        let file = directory.child("download")
        await #expect(throws: CloudFileSystemError.notFound(path: "sync/snapshots/\(old.snapshotId)/chunk-000")) {
            try await exchange(target, remote).downloadSnapshot(old, to: file)
        }
        #expect(!FileManager.default.fileExists(atPath: file.path))
        #expect(target.history.isEmpty)
    }

    @Test func bootstrappingAStoreThatHasVersionsIsRefused() async throws {
        let store = try populatedStore(name: "source", versions: 3)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        _ = try await exchange(store, remote).sendSnapshot()
        let busy = try StoreCoordinator(store: try makeStore(in: directory, name: "busy"))
        try await busy.save(inserting: [Value("mine", "1")])
        await #expect(throws: StoreError.storeNotEmpty(path: busy.store.rootURL.path)) {
            try await busy.bootstrapFromSnapshot(using: exchange(busy.store, remote))
        }
    }

    @Test func aSnapshotMissingAPredecessorIsRefusedWhole() throws {
        // An archive holding only the second of two versions cannot be restored.
        let source = try makeStore(in: directory, name: "source")
        let v1 = try source.save(nil, insert: ["a": "1"])
        let v2 = try source.save(v1.id, insert: ["b": "2"])
        let storage = source.storage as! FileStorage
        let url = directory.child("partial.snapshot")
        let writer = try SnapshotArchiveWriter(destination: url)
        try storage.writeBundles(of: [v2.id], to: writer)
        _ = try writer.finish()
        for kind in StorageKind.allCases {
            let target = try makeStore(in: directory, name: "target-\(kind)", storage: kind)
            #expect(throws: StoreError.self) { try target.restoreSnapshot(from: url) }
            #expect(target.history.isEmpty)
            #expect(try openStore(target.rootURL).history.isEmpty)
            _ = try target.save(nil, insert: ["fine": "yes"])
        }
    }

    @Test func hostileManifestsAreRefused() throws {
        func manifest(id: String = "ok", chunks: Int = 1, size: Int64 = 10) -> SnapshotManifest {
            SnapshotManifest(
                snapshotId: id, format: SnapshotArchive.format, createdAt: 0, latestVersionId: "v",
                versionCount: 1, chunkCount: chunks, totalSize: size, sha256: nil)
        }
        #expect(throws: ExchangeError.self) { try manifest(id: "../escape").validate(path: "m") }
        #expect(throws: ExchangeError.self) { try manifest(id: "").validate(path: "m") }
        #expect(throws: ExchangeError.self) { try manifest(id: String(repeating: "a", count: 129)).validate(path: "m") }
        #expect(throws: ExchangeError.self) { try manifest(chunks: 1, size: 5_000_001).validate(path: "m") }
        #expect(throws: ExchangeError.self) { try manifest(chunks: 1_000_000, size: 10).validate(path: "m") }
        try manifest(id: "00000000-0000-0000-0000-0000000000A1").validate(path: "m")
    }

    @Test func theSnapshotPolicyIsOffByDefaultAndTakesOneWhenDue() async throws {
        let store = try populatedStore(name: "source", versions: 25)
        let coordinator = try StoreCoordinator(store: store)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let plain = try await coordinator.exchange(with: exchange(store, remote))
        #expect(plain.snapshot == nil)
        await coordinator.setSnapshotPolicy(.automatic)
        let first = try await coordinator.exchange(with: exchange(store, remote))
        #expect(first.snapshot?.versionCount == store.history.count)
        // Too soon for another, whatever the count.
        try await coordinator.save(inserting: (0..<25).map { Value("extra\($0)", "x") })
        #expect(try await coordinator.exchange(with: exchange(store, remote)).snapshot == nil)

        let policy = SnapshotPolicy(isEnabled: true, minimumInterval: 7 * 86_400, minimumNewVersions: 20)
        let last = first.snapshot!
        #expect(
            !policy.isDue(
                lastSnapshot: last, versionCount: last.versionCount + 30,
                now: Date(timeIntervalSinceReferenceDate: last.createdAt + 86_400)))
        #expect(
            !policy.isDue(
                lastSnapshot: last, versionCount: last.versionCount + 5,
                now: Date(timeIntervalSinceReferenceDate: last.createdAt + 8 * 86_400)))
        #expect(
            policy.isDue(
                lastSnapshot: last, versionCount: last.versionCount + 20,
                now: Date(timeIntervalSinceReferenceDate: last.createdAt + 7 * 86_400)))
        #expect(!SnapshotPolicy.disabled.isDue(lastSnapshot: nil, versionCount: 1000, now: Date()))
    }
}

/// Collects paths from a synchronous rule.
final class OrderRecorder: Sendable {
    private let storage = Mutex<[String]>([])
    func append(_ path: String) { storage.withLock { $0.append(path) } }
    var paths: [String] { storage.withLock { $0 } }
}

import Synchronization
