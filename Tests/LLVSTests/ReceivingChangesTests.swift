import Foundation
import LLVSConformance
import Testing
@testable import LLVS
import LLVSSupport
import Synchronization

/// How a retrieve reads changes files: small ones into memory, large ones (and those of a version that gives no
/// size) to a file, with a file to fall back on when the in-memory read fails.
@Suite struct ReceivingChangesTests {
    let directory = TemporaryDirectory()

    /// Counts which kind of download each `changes/` file took; `failInMemory` makes every in-memory read of one
    /// fail, as a connector's in-memory limit would for changes far larger than their values.
    final class CountingDownloads: ForwardingFileSystem {
        let base: any CloudFileSystem
        let failInMemory: Bool
        let counts = Mutex((inMemory: 0, toFile: 0))
        init(base: any CloudFileSystem, failInMemory: Bool = false) {
            self.base = base
            self.failInMemory = failInMemory
        }
        func read(_ path: String, range: ByteRange?) async throws -> Data {
            if path.contains("/changes/"), range == nil {
                counts.withLock { $0.inMemory += 1 }
                if failInMemory { throw CloudFileSystemError.tooLargeForMemory(path: path, limit: 1 << 20) }
            }
            return try await base.read(path, range: range)
        }
        func download(_ path: String, to destination: DownloadDestination) async throws {
            if path.contains("/changes/") { counts.withLock { $0.toFile += 1 } }
            try await base.download(path, to: destination)
        }
    }

    /// A remote of `count` versions: small ones, and every fifth holding a value over the in-memory limit.
    func remote(versions count: Int) async throws -> (store: Store, fileSystem: LocalFolderFileSystem, large: Int) {
        let source = try makeStore(in: directory, name: "source")
        var head: Version?
        var large = 0
        for i in 0..<count {
            let big = i % 5 == 4
            if big { large += 1 }
            let data =
                big
                ? Data(repeating: UInt8(i % 251), count: Int(CloudFileSystemExchange.inMemoryChangesLimit) + 1)
                : Data("value \(i)".utf8)
            head = try source.makeVersion(
                basedOnPredecessor: head?.id, inserting: [Value(id: Value.ID("v\(i)"), data: data)])
        }
        let fileSystem = LocalFolderFileSystem(root: directory.child("remote"))
        let sent = try await CloudFileSystemExchange(store: source, fileSystem: fileSystem, basePath: "sync").send()
        #expect(sent.failures.isEmpty && sent.sent.count == count)
        return (source, fileSystem, large)
    }

    @Test func smallChangesAreReadIntoMemoryAndLargeOnesToAFile() async throws {
        let (source, base, large) = try await remote(versions: 40)
        let counting = CountingDownloads(base: base)
        let target = try makeStore(in: directory, name: "target")
        let report = try await CloudFileSystemExchange(
            store: target, fileSystem: counting, basePath: "sync", concurrency: 4
        ).retrieve()
        #expect(report.failures.isEmpty && report.retrieved.count == 40)
        #expect(counting.counts.withLock { $0 } == (inMemory: 40 - large, toFile: large))
        let head = try #require(source.heads.first)
        #expect(try target.values(at: head).map(\.data) == source.values(at: head).map(\.data))
    }

    @Test func aFailedInMemoryReadFallsBackToAFile() async throws {
        let (source, base, large) = try await remote(versions: 20)
        let counting = CountingDownloads(base: base, failInMemory: true)
        let target = try makeStore(in: directory, name: "target")
        let report = try await CloudFileSystemExchange(
            store: target, fileSystem: counting, basePath: "sync", concurrency: 4
        ).retrieve()
        #expect(report.failures.isEmpty && report.retrieved.count == 20)
        #expect(counting.counts.withLock { $0 } == (inMemory: 20 - large, toFile: 20))
        #expect(target.history.count == source.history.count)
    }
}

/// The ordered pipeline a retrieve adds versions through: every result, in the items' order, never more than
/// `ahead` waiting, and a failure handed over in its place.
@Suite struct OrderedConcurrencyTests {
    @Test(arguments: [(1, 1), (4, 4), (4, 16), (8, 64)])
    func resultsArriveInOrderWithinTheWindow(limit: Int, ahead: Int) async {
        let items = Array(0..<300)
        let started = Mutex(0)
        var consumed: [Int] = []
        var failures: [Int] = []
        var mostAhead = 0
        await forEachConcurrentlyInOrder(
            items, limit: limit, ahead: ahead,
            { (item: Int) async throws -> Int in
                started.withLock { $0 += 1 }
                // Later items finish first as often as not, so order is the pipeline's doing, not the scheduler's.
                for _ in 0..<(item * 7919 % 13) { await Task.yield() }
                if item % 50 == 49 { throw CloudFileSystemError.notFound(path: "item \(item)") }
                return item * 2
            }
        ) { item, result in
            mostAhead = max(mostAhead, started.withLock { $0 } - consumed.count - failures.count)
            switch result {
            case .success(let doubled): #expect(doubled == item * 2); consumed.append(item)
            case .failure: failures.append(item)
            }
        }
        #expect(consumed == items.filter { $0 % 50 != 49 })
        #expect(failures == items.filter { $0 % 50 == 49 })
        #expect(mostAhead <= max(limit, ahead))
    }
}

/// Paths split on bytes: the same components, and the same refusals, as before.
@Suite struct CloudPathTests {
    @Test func componentsAndJoins() throws {
        #expect(try CloudPath.components("/a/b/c/") == ["a", "b", "c"])
        #expect(try CloudPath.components("//") == [])
        #expect(try CloudPath.components("") == [])
        #expect(try CloudPath.components("versions/é日本/x") == ["versions", "é日本", "x"])
        for bad in ["a//b", "a/./b", "a/../b", "..", "a/b\0c"] {
            #expect(throws: CloudFileSystemError.self, "\(bad)") { try CloudPath.components(bad) }
        }
        #expect(CloudPath.join("", "/base/", "versions", "ID") == "base/versions/ID")
        #expect(CloudPath.join("a//b", "c") == "a/b/c")
    }

    @Test func remoteFileNamesAreRefusedWhereUnsafe() {
        for bad in ["", ".hidden", "a/b", "a\0b"] {
            #expect(throws: ExchangeError.self, "\(bad)") { try RemoteFormat.checkFileName(bad) }
        }
        #expect(throws: Never.self) { try RemoteFormat.checkFileName("7F2A-é") }
    }
}
