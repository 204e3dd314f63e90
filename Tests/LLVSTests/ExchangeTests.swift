import Foundation
import Testing
import LLVSConformance
@testable import LLVS
import LLVSSupport

@Suite struct ExchangeTests {
    let directory = TemporaryDirectory()

    enum Kind: CaseIterable { case memory, fileSystem, cloudFolder, flakyCloudFolder }

    func exchanges(_ kind: Kind, stores: [Store]) -> [any Exchange] {
        switch kind {
        case .memory:
            let remote = MemoryRemote()
            return stores.map { MemoryExchange(store: $0, remote: remote, concurrency: 4) }
        case .fileSystem:
            let folder = directory.child("remote")
            return stores.map { FileSystemExchange(rootDirectoryURL: folder, store: $0, concurrency: 4) }
        case .cloudFolder:
            let fileSystem = LocalFolderFileSystem(root: directory.child("cloud"))
            return stores.map {
                CloudFileSystemExchange(store: $0, fileSystem: fileSystem, basePath: "apps/notes", concurrency: 4)
            }
        case .flakyCloudFolder:
            // One operation in ten fails (503, dropped connections, 429); the shared retry policy absorbs them.
            let flaky = FaultInjectingFileSystem(
                LocalFolderFileSystem(root: directory.child("cloud")), failureRate: 0.1, seed: 42)
            let fileSystem = RetryingFileSystem(flaky, policy: RetryPolicy(maximumAttempts: 8, sleep: { _ in }))
            return stores.map { CloudFileSystemExchange(store: $0, fileSystem: fileSystem, concurrency: 4) }
        }
    }

    @Test(arguments: Kind.allCases, StorageKind.allCases)
    func twoStoresConvergeAfterConcurrentEdits(kind: Kind, storage: StorageKind) async throws {
        let a = try StoreCoordinator(store: try makeStore(in: directory, name: "a", storage: storage))
        let b = try StoreCoordinator(store: try makeStore(in: directory, name: "b", storage: storage))
        let ex = exchanges(kind, stores: [a.store, b.store])

        try await a.save(inserting: [Value("shared", "from a"), Value("a-only", "1")])
        _ = try await a.exchange(with: ex[0])
        _ = try await b.exchange(with: ex[1])
        #expect(try await b.value(id: "shared")?.string == "from a")

        // Concurrent edits on both sides, including a conflict.
        try await a.save(updating: [Value("shared", "a edit")], removing: ["a-only"])
        try await b.save(inserting: [Value("b-only", "2")], updating: [Value("shared", "b edit")])
        _ = try await a.exchange(with: ex[0])
        _ = try await b.exchange(with: ex[1])
        _ = try await a.exchange(with: ex[0])

        let aValues = try await a.values().map { "\($0.id)=\($0.string)" }
        let bValues = try await b.values().map { "\($0.id)=\($0.string)" }
        #expect(aValues == bValues)
        #expect(aValues.contains("b-only=2"))
        #expect(!aValues.contains { $0.hasPrefix("a-only") })
        #expect(a.store.heads == b.store.heads)
        #expect(await a.currentVersionId == b.currentVersionId)
    }

    @Test(arguments: Kind.allCases, StorageKind.allCases)
    func threeStoresConverge(kind: Kind, storage: StorageKind) async throws {
        let coordinators = try (0..<3).map {
            try StoreCoordinator(store: try makeStore(in: directory, name: "s\($0)", storage: storage))
        }
        let ex = exchanges(kind, stores: coordinators.map(\.store))
        for (i, c) in coordinators.enumerated() {
            try await c.save(inserting: (0..<20).map { Value("s\(i)-\($0)", "\($0)") } + [Value("common", "\(i)")])
        }
        for _ in 0..<2 { for (i, c) in coordinators.enumerated() { _ = try await c.exchange(with: ex[i]) } }
        let states = try await coordinators.asyncMap { try await $0.values().map { "\($0.id)=\($0.string)" } }
        #expect(states[0].count == 61)
        #expect(states.allSatisfy { $0 == states[0] })
    }

    @Test(arguments: StorageKind.allCases) func aVersionWhosePredecessorNeverArrivesDoesNotBlockOthers(
        storage: StorageKind
    ) async throws {
        let source = try makeStore(in: directory, name: "source", storage: storage)
        let root = try source.save(nil, insert: ["a": "1"])
        let child = try source.save(root.id, insert: ["b": "2"])
        let other = try source.save(nil, insert: ["c": "3"])
        let remote = MemoryRemote()
        _ = try await MemoryExchange(store: source, remote: remote).send()
        // Take the root away from the remote: its child can never be placed, the unrelated root can.
        let damaged = MemoryRemote()
        for id in [child.id, other.id] {
            await damaged.put(
                source.version(identifiedBy: id)!,
                changes: try RemoteFormat.encodeChanges(try source.valueChanges(madeInVersionIdentifiedBy: id)))
        }
        let target = try makeStore(in: directory, name: "target", storage: storage)
        let report = try await MemoryExchange(store: target, remote: damaged).retrieve()
        #expect(report.retrieved == [other.id])
        #expect(report.waitingForPredecessors == [child.id])
        #expect(try target.strings(at: other.id) == ["c": "3"])
    }

    /// A listing that misses a version (one that lags behind the service's writes) does not keep its descendants
    /// out: the version they name as predecessor is read by its name; one the remote does not serve at all is
    /// reported as not readable yet, not as a failure.
    @Test(arguments: StorageKind.allCases) func aPredecessorTheListingMissedIsReadByName(
        storage: StorageKind
    ) async throws {
        let source = try makeStore(in: directory, name: "source", storage: storage)
        let root = try source.save(nil, insert: ["a": "1"])
        let child = try source.save(root.id, insert: ["b": "2"])
        let grandchild = try source.save(child.id, insert: ["c": "3"])
        let remote = MemoryRemote()
        _ = try await MemoryExchange(store: source, remote: remote).send()
        let target = try makeStore(in: directory, name: "target", storage: storage)
        let lagging = ListingLeavingOut(
            inner: MemoryExchange(store: target, remote: remote), hidden: [root.id, child.id])
        let report = try await lagging.retrieve()
        #expect(Set(report.retrieved) == [root.id, child.id, grandchild.id])
        #expect(report.failures.isEmpty && report.notYetReadable.isEmpty && report.waitingForPredecessors.isEmpty)
        #expect(try target.strings(at: grandchild.id) == ["a": "1", "b": "2", "c": "3"])

        let damaged = MemoryRemote()
        await damaged.put(
            source.version(identifiedBy: child.id)!,
            changes: try RemoteFormat.encodeChanges(try source.valueChanges(madeInVersionIdentifiedBy: child.id)))
        let other = try makeStore(in: directory, name: "other", storage: storage)
        let partial = try await MemoryExchange(store: other, remote: damaged).retrieve()
        #expect(partial.failures.isEmpty)
        #expect(partial.notYetReadable == [root.id])
        #expect(partial.waitingForPredecessors == [child.id])
    }

    @Test(arguments: StorageKind.allCases) func aMalformedRemoteFileIsNamedAndOtherVersionsStillArrive(
        storage: StorageKind
    ) async throws {
        let source = try makeStore(in: directory, name: "source", storage: storage)
        let good = try source.save(nil, insert: ["a": "1"])
        let bad = try source.save(nil, insert: ["b": "2"])
        let folder = directory.child("remote")
        _ = try await FileSystemExchange(rootDirectoryURL: folder, store: source).send()
        let badPath = folder.appendingPathComponent("changes/\(bad.id)")
        try Data("[{\"insert\": 42}]".utf8).write(to: badPath)

        let target = try makeStore(in: directory, name: "target", storage: storage)
        let report = try await FileSystemExchange(rootDirectoryURL: folder, store: target).retrieve()
        #expect(report.retrieved == [good.id])
        #expect(report.failures.count == 1)
        #expect("\(report.failures[0].error)".contains(badPath.path))
        #expect(target.version(identifiedBy: bad.id) == nil)
    }

    @Test(arguments: StorageKind.allCases) func theRemoteLayoutIsLLVSs(storage: StorageKind) async throws {
        let store = try makeStore(in: directory, storage: storage)
        let v1 = try store.save(nil, insert: ["x/y": "1"])
        let folder = directory.child("remote")
        let report = try await FileSystemExchange(rootDirectoryURL: folder, store: store).send()
        #expect(report.sent == [v1.id])
        let versionData = try Data(contentsOf: folder.appendingPathComponent("versions/\(v1.id)"))
        let object = try parsedJSON(versionData) as! [String: Any]
        let version = object["version"] as! [String: Any]
        #expect(version["identifier"] as? String == v1.id.rawValue)
        #expect(version["metadata"] as? [Any] != nil)
        let changes =
            try parsedJSON(Data(contentsOf: folder.appendingPathComponent("changes/\(v1.id)"))) as! [[String: Any]]
        let insert = changes[0]["insert"] as! [String: Any]
        #expect(insert["id"] as? String == "x/y")
        #expect(insert["data"] as? String == "MQ==")
        #expect(insert["storedVersionId"] as? String == v1.id.rawValue)
        // Nothing more to send the second time.
        #expect(try await FileSystemExchange(rootDirectoryURL: folder, store: store).send().sent.isEmpty)
    }

    @Test(arguments: StorageKind.allCases) func unsafeVersionIdsAreRefusedAsFileNames(storage: StorageKind) async throws
    {
        let folder = directory.child("remote")
        try FileManager.default.createDirectory(
            at: folder.appendingPathComponent("versions"), withIntermediateDirectories: true)
        let store = try makeStore(in: directory, storage: storage)
        let exchange = FileSystemExchange(rootDirectoryURL: folder, store: store)
        await #expect(throws: ExchangeError.unsafeIdentifier("../escape")) {
            try await exchange.fetchVersion("../escape")
        }
    }
}

/// Pulling the example remote that LLVS itself wrote gives the values its README lists.
@Suite struct ExampleRemoteTests {
    let directory = TemporaryDirectory()
    let v1 = Version.ID("00000000-0000-0000-0000-000000000001")
    let v2 = Version.ID("00000000-0000-0000-0000-000000000002")
    let v3 = Version.ID("00000000-0000-0000-0000-000000000003")
    let v4 = Version.ID("00000000-0000-0000-0000-000000000004")

    @Test(arguments: StorageKind.allCases) func pullingTheExampleGivesTheExpectedValues(
        storage: StorageKind
    ) async throws {
        let store = try makeStore(in: directory, storage: storage)
        let report = try await FileSystemExchange(rootDirectoryURL: TestPaths.exampleRemote, store: store).retrieve()
        #expect(report.failures.isEmpty)
        #expect(Set(report.retrieved) == [v1, v2, v3, v4])
        #expect(store.heads == [v4])

        func expect(_ version: Version.ID, _ values: [String: [UInt8]], stored: [String: Version.ID]) throws {
            let actual = try store.values(at: version)
            #expect(Dictionary(uniqueKeysWithValues: actual.map { ($0.id.rawValue, [UInt8]($0.data)) }) == values)
            #expect(Dictionary(uniqueKeysWithValues: actual.map { ($0.id.rawValue, $0.storedVersionId!) }) == stored)
        }
        let one = Array("one".utf8), two = Array("two".utf8), binary: [UInt8] = [0, 255, 16]
        try expect(
            v1, ["alpha": one, "beta": two, "notes/today": binary],
            stored: ["alpha": v1, "beta": v1, "notes/today": v1])
        try expect(v2, ["alpha": Array("uno".utf8), "notes/today": binary], stored: ["alpha": v2, "notes/today": v1])
        try expect(
            v3, ["alpha": Array("eins".utf8), "beta": two, "gamma": Array("three".utf8), "notes/today": binary],
            stored: ["alpha": v3, "beta": v1, "gamma": v3, "notes/today": v1])
        try expect(
            v4, ["alpha": Array("eins".utf8), "gamma": Array("three".utf8), "notes/today": binary],
            stored: ["alpha": v3, "gamma": v3, "notes/today": v1])
        #expect(store.version(identifiedBy: v3)?.branch == "import")
        #expect(store.heads.compactMap(store.version(identifiedBy:)).filter { $0.branch == "import" }.isEmpty)
    }

    @Test(arguments: StorageKind.allCases) func pullingTheExampleThroughACloudFileSystem(
        storage: StorageKind
    ) async throws {
        let store = try makeStore(in: directory, storage: storage)
        let exchange = CloudFileSystemExchange(
            store: store, fileSystem: LocalFolderFileSystem(root: TestPaths.exampleRemote))
        let report = try await exchange.retrieve()
        #expect(report.failures.isEmpty)
        #expect(store.heads == [v4])
        #expect(try store.value(id: "alpha", at: v4)?.storedVersionId == v3)
        #expect(try store.value(id: "beta", at: v4) == nil)
        #expect(try await exchange.snapshotManifest()?.format == "zip-v1")
    }

    @Test(arguments: StorageKind.allCases) func sendingThePulledStoreReproducesTheExample(
        storage: StorageKind
    ) async throws {
        let store = try makeStore(in: directory, storage: storage)
        _ = try await FileSystemExchange(rootDirectoryURL: TestPaths.exampleRemote, store: store).retrieve()
        let copy = directory.child("copy")
        _ = try await FileSystemExchange(rootDirectoryURL: copy, store: store).send()
        for folder in ["versions", "changes"] {
            for id in [v1, v2, v3, v4] {
                let original = try Data(contentsOf: TestPaths.exampleRemote.appendingPathComponent("\(folder)/\(id)"))
                let written = try Data(contentsOf: copy.appendingPathComponent("\(folder)/\(id)"))
                if folder == "changes" {
                    // The order of a changes array is not significant.
                    let a = try JSONSerialization.jsonObject(with: original) as! [NSObject]
                    let b = try JSONSerialization.jsonObject(with: written) as! [NSObject]
                    #expect(Set(a) == Set(b), "changes/\(id)")
                } else {
                    #expect(try parsedJSON(original) == parsedJSON(written), "versions/\(id)")
                }
            }
        }
    }
}

extension Sequence {
    func asyncMap<T>(_ transform: (Element) async throws -> T) async rethrows -> [T] {
        var result: [T] = []
        for element in self { result.append(try await transform(element)) }
        return result
    }
}

/// An exchange whose listing leaves some versions out, though it serves them by name, as a service with listings that
/// lag behind its writes does.
struct ListingLeavingOut: Exchange {
    var inner: MemoryExchange
    var hidden: Set<Version.ID>
    var store: Store { inner.store }
    var concurrency: Int { inner.concurrency }
    func remoteVersionIds() async throws -> Set<Version.ID> { try await inner.remoteVersionIds().subtracting(hidden) }
    func fetchVersion(_ id: Version.ID) async throws -> Version { try await inner.fetchVersion(id) }
    func fetchChanges(of id: Version.ID) async throws -> EncodedChanges { try await inner.fetchChanges(of: id) }
    func send(_ version: Version, changes: EncodedChanges) async throws {
        try await inner.send(version, changes: changes)
    }
}
