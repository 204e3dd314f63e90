import Foundation
import Testing
@testable import LLVS

@Suite struct CoordinatorTests {
    let directory = TemporaryDirectory()

    @Test(arguments: StorageKind.allCases) func currentVersionSurvivesARestart(storage: StorageKind) async throws {
        let url = directory.child("store")
        let saved: Version
        do {
            let coordinator = try StoreCoordinator(store: try makeStore(at: url, storage: storage))
            try await coordinator.save(inserting: [Value("a", "1")])
            saved = try await coordinator.save(updating: [Value("a", "2")])
            // A newer head elsewhere must not replace the current version on restart.
            _ = try coordinator.store.save(nil, insert: ["other": "x"], timestamp: saved.timestamp + 100)
        }
        let restarted = try StoreCoordinator(store: try openStore(url))
        #expect(await restarted.currentVersionId == saved.id)
        #expect(try await restarted.value(id: "a")?.string == "2")
    }

    @Test(arguments: StorageKind.allCases) func savesOnANamedBranch(storage: StorageKind) async throws {
        let coordinator = try StoreCoordinator(store: try makeStore(in: directory, storage: storage))
        let version = try await coordinator.save(inserting: [Value("a", "1")], branch: "import")
        #expect(version.branch == "import")
    }

    @Test(arguments: StorageKind.allCases) func mergesHeadsIntoTheCurrentVersion(storage: StorageKind) async throws {
        let store = try makeStore(in: directory, storage: storage)
        let coordinator = try StoreCoordinator(store: store)
        let base = try await coordinator.save(inserting: [Value("a", "1")])
        _ = try store.save(base.id, insert: ["b": "2"])
        try await coordinator.save(inserting: [Value("c", "3")])
        let merged = try #require(try await coordinator.mergeHeads())
        #expect(merged.isMerge)
        #expect(try await coordinator.values().map(\.string) == ["1", "2", "3"])
    }

    @Test(arguments: StorageKind.allCases) func observersSeeEveryNewCurrentVersion(storage: StorageKind) async throws {
        let coordinator = try StoreCoordinator(store: try makeStore(in: directory, storage: storage))
        let updates = await coordinator.versionUpdates()
        let first = try await coordinator.save(inserting: [Value("a", "1")])
        let second = try await coordinator.save(inserting: [Value("b", "2")])
        var seen: [Version.ID?] = []
        for await id in updates {
            seen.append(id)
            if seen.count == 3 { break }
        }
        #expect(seen == [nil, first.id, second.id])
    }

    @Test(arguments: StorageKind.allCases) func reloadingPicksUpAnotherProcesssVersions(
        storage: StorageKind
    ) async throws {
        let url = directory.child("store")
        let coordinator = try StoreCoordinator(store: try makeStore(at: url, storage: storage))
        let other = try openStore(url)
        let version = try other.save(nil, insert: ["from": "elsewhere"])
        #expect(try await coordinator.reloadHistory() == [version.id])
        #expect(await coordinator.currentVersionId == version.id)
    }
}
