import Foundation
import LLVSSupport
import Testing

@testable import LLVS

/// A snapshot of a store a prune released values of (`llvs-bundles-v2`): the released records go beside it, so the
/// store restored from it, on either storage, lists them as released, reads every other value, and a read of every
/// value it keeps passes as a check does; a zip-v1 snapshot of it is refused, naming the way out.
@Suite struct SnapshotReleasedRecordsTests {
    let directory = TemporaryDirectory()

    /// A store whose first version's "gone" a prune released, and the record released.
    func prunedStore(_ storage: StorageKind, name: String) throws -> (Store, [Version], RecordLocation) {
        let store = try makeStore(in: directory, name: name, storage: storage)
        let root = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: [
                Value(id: "kept", data: SeededGenerator.bytes(20_000, seed: 1)),
                Value(id: "gone", data: SeededGenerator.bytes(30_000, seed: 2)),
                Value(id: "after", data: SeededGenerator.bytes(5_000, seed: 3)),
            ])
        let next = try store.makeVersion(
            basedOnPredecessor: root.id, updating: [Value(id: "kept", data: Data("newer".utf8))], removing: ["gone"])
        let gone = try #require(try store.storedEntry(id: "gone", at: root.id)).location
        try store.listReleased([gone])
        _ = try store.releaseRecords([gone])
        return (store, [root, next], gone)
    }

    /// What `llvs check --read-data` asks of a store: every value of every version reads whole, but those listed as
    /// released.
    func expectEveryKeptValueReads(_ store: Store) throws {
        let released = try store.releasedRecords()
        try store.forEachEntry(inMapsOf: store.history.versions.keys.sorted()) { entry in
            if !released.contains(entry.location) {
                #expect(throws: Never.self) { try store.readStoredValue(entry) { _ in } }
            }
        }
    }

    @Test(arguments: [(StorageKind.file, StorageKind.file), (.file, .sqlite), (.sqlite, .file), (.sqlite, .sqlite)])
    func aSnapshotCarriesWhatAPruneReleased(from: StorageKind, to: StorageKind) throws {
        let (source, versions, gone) = try prunedStore(from, name: "source")
        let file = directory.child("snapshot")
        let summary = try source.writeSnapshot(to: file, format: SnapshotArchive.format)
        #expect(summary.format == SnapshotArchive.formatWithReleased && summary.released == [gone])

        let restored = try makeStore(in: directory, name: "restored", storage: to)
        let count = try restored.restoreSnapshot(
            from: file, format: summary.format, versionCount: summary.versionCount, released: summary.released)
        #expect(count == 2)
        #expect(try restored.releasedRecords().contains(gone))
        #expect(throws: StoreError.valueReleased("gone", storedIn: versions[0].id)) {
            try restored.value(id: "gone", at: versions[0].id)
        }
        for version in versions {
            for id: Value.ID in ["kept", "after"] {
                #expect(try restored.value(id: id, at: version.id)?.data == source.value(id: id, at: version.id)?.data)
            }
        }
        try expectEveryKeptValueReads(restored)
        // And on: a snapshot of the restored store says the same.
        let again = try restored.writeSnapshot(to: directory.child("again"), format: SnapshotArchive.format)
        #expect(again.format == SnapshotArchive.formatWithReleased && again.released == [gone])
    }

    @Test func aStoreWithoutReleasedRecordsStillWritesVersionOne() throws {
        let store = try makeStore(in: directory, name: "plain")
        try store.makeVersion(basedOnPredecessor: nil, inserting: [Value(id: "a", data: Data("a".utf8))])
        let summary = try store.writeSnapshot(to: directory.child("snapshot"), format: SnapshotArchive.format)
        #expect(summary.format == SnapshotArchive.format && summary.released.isEmpty)
    }

    @Test func aZipSnapshotOfAPrunedStoreIsRefusedNamingTheWayOut() throws {
        let (source, _, _) = try prunedStore(.file, name: "source")
        #expect(throws: StoreError.self) {
            try source.writeSnapshot(to: directory.child("zip"), format: ZipV1Snapshot.format)
        }
        do {
            _ = try source.writeSnapshot(to: directory.child("zip"), format: ZipV1Snapshot.format)
        } catch {
            #expect("\(error)".contains("llvs-bundles-v1"))
        }
    }

    /// Through a remote: the list goes up beside the chunks, and a new store that starts from the snapshot knows
    /// the released record; a manifest of this format is one a build before it skips (it pulls instead).
    @Test func aBootstrapFromTheSnapshotListsTheReleasedRecords() async throws {
        let (source, versions, gone) = try prunedStore(.file, name: "source")
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let exchange = CloudFileSystemExchange(
            store: source, fileSystem: remote, basePath: "sync", concurrency: 4, codec: CompactRemoteCodec())
        #expect(try await exchange.send().failures.isEmpty)
        let manifest = try await exchange.sendSnapshot(format: SnapshotArchive.format)
        #expect(manifest.format == SnapshotArchive.formatWithReleased)
        #expect(try await remote.exists("sync/snapshots/\(manifest.snapshotId)/released"))

        let fresh = try makeStore(in: directory, name: "fresh")
        let coordinator = try StoreCoordinator(store: fresh)
        let freshExchange = CloudFileSystemExchange(
            store: fresh, fileSystem: remote, basePath: "sync", concurrency: 4, codec: CompactRemoteCodec())
        #expect(try await coordinator.bootstrapFromSnapshot(using: freshExchange) == .restored(manifest))
        #expect(try fresh.releasedRecords().contains(gone))
        #expect(try fresh.value(id: "after", at: versions[1].id) == source.value(id: "after", at: versions[1].id))
        try expectEveryKeptValueReads(fresh)
    }
}
