import Foundation
import Synchronization
import Testing
@testable import LLVS

/// File storage lists `versions/` one two-character folder at a time, so a reader can see a version another process
/// just wrote while missing its predecessor, written a moment before into a folder listed earlier. Such a version
/// waits for the next read instead of failing the open or the reload (it once made a concurrent writer's open fail
/// with "needs predecessor …, which the store does not have").
@Suite struct ConcurrentListingTests {
    let directory = TemporaryDirectory()

    /// File storage whose next listing leaves out the versions named in `hidden`, as a listing that raced a writer.
    final class RacingStorage: Storage {
        let base: FileStorage
        let hidden = Mutex<Set<Version.ID>>([])
        init(_ base: FileStorage) { self.base = base }
        var kind: String { base.kind }
        func newlyCommittedVersions() throws -> [StoredVersion] {
            let all = try base.newlyCommittedVersions()
            let held = hidden.withLock { hidden in
                defer { hidden = [] }; return hidden
            }
            guard !held.isEmpty else { return all }
            // Seen later: the held-back versions come with the next listing.
            let shown = all.filter { !held.contains($0.version.id) }
            heldBack.withLock { $0 += all.filter { held.contains($0.version.id) } }
            return shown
        }
        let heldBack = Mutex<[StoredVersion]>([])
        func releaseHeldBack() -> [StoredVersion] {
            heldBack.withLock { held in
                defer { held = [] }; return held
            }
        }
        func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter { try base.makeVersionWriter(for: id) }
        func readStoredRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [StoredRecord] {
            try base.readStoredRecords(at: locations, zone: zone)
        }
        func copyStoredRecord(
            at location: RecordLocation, zone: StorageZone, into write: (RecordEncoding, Data) throws -> Void
        ) throws {
            try base.copyStoredRecord(at: location, zone: zone, into: write)
        }
        func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64 {
            try base.releaseValueRecords(at: locations)
        }
    }

    @Test func aVersionSeenBeforeItsPredecessorWaitsForTheNextListing() throws {
        let url = directory.child("store")
        let writer = try makeStore(at: url, storage: .file)
        let first = try writer.save(nil, insert: ["a": "1"])
        let second = try writer.save(first.id, insert: ["b": "2"])

        // Opening while the listing misses the first version: the second waits, and the retry finds both.
        let racing = Mutex<RacingStorage?>(nil)
        let reader = try Store(openingAt: url) { root, _, _ in
            let storage = RacingStorage(try FileStorage(storeRoot: root))
            storage.hidden.withLock { $0 = [first.id] }
            racing.withLock { $0 = storage }
            return HeldBackReleasing(storage)
        }
        #expect(reader.history.count == 2)
        #expect(reader.heads == [second.id])

        // A reload racing a writer the same way: nothing thrown, nothing lost.
        let third = try writer.save(second.id, insert: ["c": "3"])
        let fourth = try writer.save(third.id, insert: ["d": "4"])
        racing.withLock { $0?.hidden.withLock { $0 = [third.id] } }
        let added = try reader.reloadHistory()
        #expect(Set(added) == [third.id, fourth.id])
        #expect(reader.heads == [fourth.id])
    }

    /// Hands back held versions with the following listing, as the folder listed late would show them.
    final class HeldBackReleasing: Storage {
        let racing: RacingStorage
        init(_ racing: RacingStorage) { self.racing = racing }
        var kind: String { racing.kind }
        func newlyCommittedVersions() throws -> [StoredVersion] {
            let released = racing.releaseHeldBack()
            return try racing.newlyCommittedVersions() + released
        }
        func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter { try racing.makeVersionWriter(for: id) }
        func readStoredRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [StoredRecord] {
            try racing.readStoredRecords(at: locations, zone: zone)
        }
        func copyStoredRecord(
            at location: RecordLocation, zone: StorageZone, into write: (RecordEncoding, Data) throws -> Void
        ) throws {
            try racing.copyStoredRecord(at: location, zone: zone, into: write)
        }
        func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64 {
            try racing.releaseValueRecords(at: locations)
        }
    }
}
