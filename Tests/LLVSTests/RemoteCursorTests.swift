import Foundation
import Synchronization
import Testing
@testable import LLVS

/// A local folder with a change feed of its own writes and removals, so the exchange's use of a feed is tested
/// without a service: the cursor is the number of feed entries seen.
final class FeedingFolder: CloudChangeFeed {
    let base: LocalFolderFileSystem
    private let feed = Mutex<[(folder: String, name: String, present: Bool)]>([])
    let feedCalls = Atomic<Int>(0)
    let listings = Atomic<Int>(0)
    /// Cursors below this are refused.
    let oldestAccepted = Atomic<Int>(0)

    init(root: URL) { base = LocalFolderFileSystem(root: root) }

    private func record(_ path: String, present: Bool) throws {
        let components = try CloudPath.components(path)
        feed.withLock { $0.append((components.dropLast().joined(separator: "/"), components.last ?? "", present)) }
    }

    /// Removes a file without telling the feed (a service that forgets to report a permanent deletion).
    func removeSilently(_ path: String) async throws { try await base.removeFile(path) }

    var capabilities: CloudCapabilities { base.capabilities }
    func stager(for path: String) async throws -> FileStager { try await base.stager(for: path) }
    func exists(_ path: String) async throws -> Bool { try await base.exists(path) }
    func list(_ folder: String) async throws -> [CloudItem] { try await base.list(folder) }
    func listNames(_ folder: String) async throws -> [String] {
        listings.add(1, ordering: .relaxed)
        return try await base.listNames(folder)
    }
    func metadata(_ path: String) async throws -> CloudItem { try await base.metadata(path) }
    func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        try await base.upload(source, to: path, mode: mode)
        try record(path, present: true)
    }
    func read(_ path: String, range: ByteRange?) async throws -> Data { try await base.read(path, range: range) }
    func download(_ path: String, to destination: DownloadDestination) async throws {
        try await base.download(path, to: destination)
    }
    func makeFolder(_ path: String) async throws { try await base.makeFolder(path) }
    func removeFile(_ path: String) async throws { try await base.removeFile(path); try record(path, present: false) }
    func removeFolder(_ path: String) async throws { try await base.removeFolder(path) }

    func changeCursor(watching folders: [String]) async throws -> String {
        feedCalls.add(1, ordering: .relaxed)
        return String(feed.withLock { $0.count })
    }

    func changes(in folders: [String], since cursor: String) async throws -> CloudChangeSet {
        feedCalls.add(1, ordering: .relaxed)
        guard let start = Int(cursor), start >= oldestAccepted.load(ordering: .relaxed) else {
            throw CloudFileSystemError.cursorExpired("refused \(cursor)")
        }
        return feed.withLock { entries in
            var set = CloudChangeSet(cursor: String(entries.count))
            for entry in entries.dropFirst(start) where folders.contains(entry.folder) {
                set.note(entry.name, in: entry.folder, present: entry.present)
            }
            return set
        }
    }
}

@Suite struct RemoteCursorTests {
    let directory = TemporaryDirectory()

    func coordinator(_ name: String) throws -> StoreCoordinator {
        try StoreCoordinator(store: try makeStore(in: directory, name: name))
    }

    func exchange(
        _ coordinator: StoreCoordinator, _ remote: FeedingFolder, identity: String = "remote"
    ) -> CloudFileSystemExchange {
        CloudFileSystemExchange(
            store: coordinator.store, fileSystem: remote, basePath: "sync", concurrency: 4,
            cursorFile: RemoteCursorFile(store: coordinator.store, identity: identity))
    }

    @Test func theFeedReplacesTheListingOnceAPositionIsSaved() async throws {
        let remote = FeedingFolder(root: directory.child("remote"))
        let a = try coordinator("a"), b = try coordinator("b")
        try await a.save(inserting: [Value(id: "k", data: Data("1".utf8))])
        #expect(try await a.exchange(with: exchange(a, remote)).listing == .fullListing)
        #expect(try await b.exchange(with: exchange(b, remote)).retrieve.retrieved.count == 1)
        let listingsBefore = remote.listings.load(ordering: .relaxed)
        try await a.save(inserting: [Value(id: "k2", data: Data("2".utf8))])
        let sent = try await a.exchange(with: exchange(a, remote))
        let received = try await b.exchange(with: exchange(b, remote))
        #expect(sent.listing == .changeFeed && sent.send.sent.count == 1)
        #expect(received.listing == .changeFeed && received.retrieve.retrieved.count == 1)
        #expect(remote.listings.load(ordering: .relaxed) == listingsBefore, "no listing once the feed is in use")
    }

    @Test func aRefusedPositionListsInFullAndMissesNothing() async throws {
        let remote = FeedingFolder(root: directory.child("remote"))
        let a = try coordinator("a"), b = try coordinator("b")
        try await a.save(inserting: [Value(id: "k", data: Data("1".utf8))])
        _ = try await a.exchange(with: exchange(a, remote))
        _ = try await b.exchange(with: exchange(b, remote))
        remote.oldestAccepted.store(1_000, ordering: .relaxed)
        try await a.save(inserting: [Value(id: "k2", data: Data("2".utf8))])
        _ = try await a.exchange(with: exchange(a, remote))
        let received = try await b.exchange(with: exchange(b, remote))
        #expect(
            received.listing == .fullListingAfterExpiredCursor("refused 2"),
            "b's position was taken after a's first two uploads")
        #expect(received.retrieve.retrieved.count == 1)
    }

    /// A version file the feed named but the remote does not serve is not a failure (a service whose reads lag its
    /// feed serves it a sync or two later); after `missesBeforeForgetting` syncs in a row it is taken for removed and
    /// no longer asked for.
    @Test func aVersionFileRemovedWithoutTheFeedSayingIsForgottenAfterAFewMisses() async throws {
        let remote = FeedingFolder(root: directory.child("remote"))
        let a = try coordinator("a"), b = try coordinator("b")
        try await a.save(inserting: [Value(id: "k", data: Data("1".utf8))])
        _ = try await b.exchange(with: exchange(b, remote))  // b's position predates a's version
        let version = try await a.save(inserting: [Value(id: "k2", data: Data("2".utf8))])
        _ = try await a.exchange(with: exchange(a, remote))
        try await remote.removeSilently("sync/versions/\(version.id.rawValue)")
        let first = try await b.exchange(with: exchange(b, remote))
        #expect(first.retrieve.failures.isEmpty)
        #expect(first.retrieve.notYetReadable == [version.id], "the feed named it, but its version file is gone")
        #expect(first.retrieve.retrieved.count == 1)
        for miss in 2...CloudFileSystemExchange.missesBeforeForgetting {
            let again = try await b.exchange(with: exchange(b, remote))
            #expect(again.listing == .changeFeed)
            #expect(again.retrieve.notYetReadable == [version.id], "asked for again at miss \(miss)")
        }
        let after = try await b.exchange(with: exchange(b, remote))
        #expect(
            after.retrieve.notYetReadable.isEmpty && after.retrieve.failures.isEmpty,
            "the missing version is not asked for again")
    }

    @Test func aPositionFileOfAnotherRemoteOrDamagedIsIgnored() throws {
        let store = try makeStore(in: directory, name: "s")
        let one = RemoteCursorFile(store: store, identity: "one")
        try one.save(.init(cursor: "c", versionIds: ["A", "B"]))
        #expect(one.load() == .init(cursor: "c", versionIds: ["A", "B"]))
        #expect(RemoteCursorFile(store: store, identity: "two").load() == nil)
        try Data("{\"remote\":\"one\"".utf8).write(to: URL(fileURLWithPath: one.path))
        #expect(one.load() == nil)
    }
}
