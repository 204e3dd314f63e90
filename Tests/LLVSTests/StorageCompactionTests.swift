import Foundation
import LLVSSupport
import Testing

@testable import LLVS

/// A compaction moves a file store's records into one compacted pack (`FileStorage+Compacting`): every version reads
/// as before, in this process and in another; what was released stays released; a snapshot gives back the very
/// bundles the version files held; a kill between the pack and the removal of the old files loses nothing; and the
/// pack takes less room than the files it replaced.
@Suite struct StorageCompactionTests {
    let directory = TemporaryDirectory()

    /// A store with four versions: many small values (the map has branches and many leaves), one compressible and one
    /// incompressible value past a read span, updates, removals and a merge; and a released record.
    func history() throws -> (Store, [Version.ID], RecordLocation) {
        let store = try makeStore(in: directory)
        var small: [Value] = []
        for index in 0..<600 {
            small.append(
                Value(
                    id: Value.ID("small/\(index)"),
                    data: Data("value \(index) ".utf8) + SeededGenerator.bytes(index % 50, seed: UInt64(index))))
        }
        let root = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: small + [
                Value(id: "text", data: Data(String(repeating: "compressible line\n", count: 200_000).utf8)),
                Value(id: "noise", data: SeededGenerator.bytes(3 << 20, seed: 7)),
                Value(id: "gone", data: SeededGenerator.bytes(50_000, seed: 8)),
            ])
        let left = try store.makeVersion(
            basedOnPredecessor: root.id,
            updating: (0..<200).map { Value(id: Value.ID("small/\($0)"), data: Data("left \($0)".utf8)) },
            removing: ["gone"])
        let right = try store.makeVersion(
            basedOnPredecessor: root.id,
            inserting: (0..<100).map {
                Value(id: Value.ID("right/\($0)"), data: SeededGenerator.bytes(700, seed: UInt64($0)))
            })
        let merged = try store.makeVersion(
            basedOn: Version.Predecessors(idOfFirst: left.id, idOfSecond: right.id),
            storing: [.update(Value(id: "text", data: Data("merged".utf8)))])
        let gone = try #require(try store.storedEntry(id: "gone", at: root.id)).location
        try store.listReleased([gone])
        _ = try store.releaseRecords([gone])
        return (store, [root.id, left.id, right.id, merged.id], gone)
    }

    /// Every value of every version, but the released one.
    func contents(_ store: Store, _ versions: [Version.ID]) throws -> [Version.ID: [Value.ID: Data]] {
        var result: [Version.ID: [Value.ID: Data]] = [:]
        for version in versions {
            var values: [Value.ID: Data] = [:]
            try store.forEachValueId(at: version) { id in
                if id != "gone" { values[id] = try store.value(id: id, at: version)?.data }
            }
            result[version] = values
        }
        return result
    }

    func versionFiles(_ store: Store) throws -> [String] {
        let root = store.rootURL.appendingPathComponent("versions").path
        return try FileManager.default.subpathsOfDirectory(atPath: root).filter { $0.count > 3 }
    }

    func packs(_ store: Store) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: store.rootURL.appendingPathComponent("packs").path)
    }

    @Test func everyVersionReadsAsBeforeHereAndInAnotherStore() throws {
        let (store, versions, gone) = try history()
        let before = try contents(store, versions)
        let other = try openStore(store.rootURL)  // another process: it listed the version files before the compaction

        let report = try #require(try store.compactStorage())
        #expect(report.versions == 4 && report.replacedFiles == 4)
        #expect(try versionFiles(store).isEmpty)
        #expect(try packs(store).count == 1)
        #expect(try contents(store, versions) == before)
        #expect(throws: StoreError.valueReleased("gone", storedIn: versions[0])) {
            try store.value(id: "gone", at: versions[0])
        }
        #expect(try contents(other, versions) == before)
        let reopened = try openStore(store.rootURL)
        #expect(Set(reopened.history.versions.keys) == Set(versions))
        #expect(try contents(reopened, versions) == before)

        // Saves go on; the next compaction takes the small pack in with the new version, and a store that knew the
        // first pack (and had not opened it) finds the second.
        let next = try store.makeVersion(
            basedOnPredecessor: versions[3], updating: [Value(id: "small/500", data: Data("later".utf8))])
        let third = try openStore(store.rootURL)
        let again = try #require(try store.compactStorage())
        #expect(again.versions == 5 && again.replacedFiles == 2)
        #expect(try packs(store).count == 1)
        #expect(try contents(store, versions) == before)
        #expect(try contents(third, versions) == before)
        #expect(try third.value(id: "small/500", at: next.id)?.data == Data("later".utf8))
        #expect(try store.value(id: "small/500", at: next.id)?.data == Data("later".utf8))
        _ = gone
    }

    @Test func aSnapshotGivesBackTheBundlesTheVersionFilesHeld() throws {
        let (store, versions, gone) = try history()
        let first = try store.writeSnapshot(to: directory.child("before"), format: SnapshotArchive.format)
        _ = try store.compactStorage()
        let second = try store.writeSnapshot(to: directory.child("after"), format: SnapshotArchive.format)
        #expect(second.released == first.released && first.released == [gone])
        #expect(try Data(contentsOf: directory.child("after")) == Data(contentsOf: directory.child("before")))

        let restored = try makeStore(in: directory, name: "restored")
        _ = try restored.restoreSnapshot(
            from: directory.child("after"), format: second.format, versionCount: second.versionCount,
            released: second.released)
        #expect(try contents(restored, versions) == contents(store, versions))
        // The restored store's versions are in the snapshot's pack: a compaction takes the pack whole.
        let report = try #require(try restored.compactStorage())
        #expect(report.versions == 4 && report.replacedFiles == 1)
        #expect(try packs(restored).allSatisfy { $0.hasSuffix(".cpack") })
        #expect(try contents(restored, versions) == contents(store, versions))
    }

    @Test func aKillBeforeTheOldFilesWentLosesNothingAndTheNextCompactionRemovesThem() throws {
        let (store, versions, _) = try history()
        let before = try contents(store, versions)
        let root = store.rootURL.appendingPathComponent("versions")
        let saved = directory.child("saved")
        try FileManager.default.copyItem(at: root, to: saved)
        _ = try store.compactStorage()
        // What a kill after the pack was linked in and before the old files were removed leaves.
        try FileManager.default.removeItem(at: root)
        try FileManager.default.copyItem(at: saved, to: root)

        let reopened = try openStore(store.rootURL)
        #expect(reopened.history.versions.count == 4)
        #expect(try contents(reopened, versions) == before)
        let report = try #require(try reopened.compactStorage())
        #expect(report.versions == 0 && report.replacedFiles == 4)
        #expect(try versionFiles(reopened).isEmpty)
        #expect(try contents(reopened, versions) == before)
    }

    @Test func aKillBeforeAPackCompactedAgainWentLeavesItStaleForTheNextCompaction() throws {
        let (store, versions, _) = try history()
        _ = try store.compactStorage()
        let packsFolder = store.rootURL.appendingPathComponent("packs")
        let first = try #require(try packs(store).first)
        try FileManager.default.copyItem(
            at: packsFolder.appendingPathComponent(first), to: directory.child("first-pack"))
        let next = try store.makeVersion(
            basedOnPredecessor: versions[3], updating: [Value(id: "small/1", data: Data("later".utf8))])
        _ = try store.compactStorage()
        let second = try #require(try packs(store).first)
        try FileManager.default.copyItem(
            at: directory.child("first-pack"), to: packsFolder.appendingPathComponent(first))

        let reopened = try openStore(store.rootURL)
        #expect(try reopened.value(id: "small/1", at: next.id)?.data == Data("later".utf8))
        let before = try contents(store, versions)
        #expect(try contents(reopened, versions) == before)
        let report = try #require(try reopened.compactStorage())
        #expect(report.versions == 0 && report.replacedFiles == 1)
        #expect(try packs(reopened) == [second])
        #expect(try contents(reopened, versions) == before)
    }

    @Test func aRecordReleasedInAPackFreesItsSpaceAndReadsAsReleased() throws {
        let (store, versions, _) = try history()
        _ = try store.compactStorage()
        let pack = store.rootURL.appendingPathComponent("packs/" + (try #require(try packs(store).first))).path
        let allocated = POSIX.allocatedBytes(pack)
        let noise = try #require(try store.storedEntry(id: "noise", at: versions[0])).location
        try store.listReleased([noise])
        _ = try store.releaseRecords([noise])
        #expect(POSIX.allocatedBytes(pack) <= allocated - (3 << 20) + (8 << 10))
        #expect(throws: StoreError.valueReleased("noise", storedIn: versions[0])) {
            try store.value(id: "noise", at: versions[3])
        }
        // Released again (a rerun of a prune): nothing changes.
        _ = try store.releaseRecords([noise])
        #expect(try store.value(id: "small/3", at: versions[3])?.data == Data("left 3".utf8))
    }

    @Test func anSQLiteStoreGivesBackThePagesAPruneFreed() throws {
        let store = try makeStore(in: directory, name: "sqlite", storage: .sqlite)
        let root = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: (0..<8).map {
                Value(id: Value.ID("big/\($0)"), data: SeededGenerator.bytes(500_000, seed: UInt64($0)))
            }
                + [Value(id: "kept", data: Data("kept".utf8))])
        let next = try store.makeVersion(basedOnPredecessor: root.id, removing: (0..<7).map { Value.ID("big/\($0)") })
        let gone = try (0..<7).map {
            try #require(try store.storedEntry(id: Value.ID("big/\($0)"), at: root.id)).location
        }
        try store.listReleased(gone)
        _ = try store.releaseRecords(gone)
        let report = try #require(try store.compactStorage())
        #expect(report.bytesAfter < report.bytesBefore - 3_000_000, "\(report)")
        #expect(try store.value(id: "big/7", at: next.id)?.data == SeededGenerator.bytes(500_000, seed: 7))
        #expect(try store.value(id: "kept", at: next.id)?.data == Data("kept".utf8))
        #expect(throws: StoreError.valueReleased("big/0", storedIn: root.id)) {
            try store.value(id: "big/0", at: root.id)
        }
    }

    @Test func theMapsTakeLessRoomInThePack() throws {
        let store = try makeStore(in: directory)
        var previous: Version.ID?
        for round in 0..<12 {
            let changes = (0..<2_000).filter { ($0 + round) % 4 == 0 }.map {
                Value(id: Value.ID("file/\($0)"), data: Data("round \(round) value \($0)".utf8))
            }
            let version =
                if let previous {
                    try store.makeVersion(basedOnPredecessor: previous, updating: changes)
                } else {
                    try store.makeVersion(
                        basedOnPredecessor: nil,
                        inserting: (0..<2_000).map { Value(id: Value.ID("file/\($0)"), data: Data("\($0)".utf8)) })
                }
            previous = version.id
        }
        let report = try #require(try store.compactStorage())
        #expect(report.bytesAfter * 2 < report.bytesBefore, "\(report)")
    }

    @Test func aDamagedMapFrameIsNamed() throws {
        let (store, versions, _) = try history()
        _ = try store.compactStorage()
        let pack = store.rootURL.appendingPathComponent("packs/" + (try #require(try packs(store).first))).path
        let reader = try ReadableFile(path: pack)
        let directory = try CompactedPackDirectory.read(from: reader)
        let frame = try #require(directory.frames.first)
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: pack))
        try handle.seek(toOffset: UInt64(frame.offset + frame.storedLength / 2))
        let byte = try #require(try handle.read(upToCount: 1)?.first)
        try handle.seek(toOffset: UInt64(frame.offset + frame.storedLength / 2))
        try handle.write(contentsOf: Data([byte ^ 0x55]))
        try handle.close()

        let reopened = try openStore(store.rootURL)
        #expect {
            try self.contents(reopened, versions)
        } throws: { error in
            "\(error)".contains(pack)
        }
    }
}
