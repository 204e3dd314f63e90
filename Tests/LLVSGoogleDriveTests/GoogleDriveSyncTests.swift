import Foundation
import LLVS
import LLVSTestSupport
import LLVSGoogleDrive
import LLVSMocks
import Testing

/// Stores syncing through the mock Drive with CloudFileSystemExchange, as `llvs sync` does.
@Suite struct GoogleDriveSyncTests {
    func store(_ fixture: DriveFixture, _ name: String) throws -> Store {
        try Store(creatingAt: fixture.local(name))
    }

    func save(_ store: Store, _ predecessor: Version.ID?, _ values: [String: String]) throws -> Version {
        try store.makeVersion(
            basedOnPredecessor: predecessor,
            inserting: values.map { Value(id: Value.ID($0.key), data: Data($0.value.utf8)) })
    }

    @Test func anAccessTokenExpiringInTheMiddleOfASyncIsRefreshedOnceAndTheSyncCompletes() async throws {
        let fixture = try DriveFixture()
        let source = try store(fixture, "source")
        var head: Version.ID?
        for i in 0..<40 { head = try save(source, head, ["k\(i)": "v\(i)"]).id }
        let mock = fixture.mock
        let exchange = CloudFileSystemExchange(
            store: source, fileSystem: fixture.fileSystem, basePath: "stores/demo", concurrency: 8,
            progress: { progress in if progress.done == 10 { mock.expireAccessTokens() } })
        let report = try await exchange.send()
        #expect(report.failures.isEmpty)
        #expect(report.sent.count == 40)
        #expect(await fixture.tokenSource.refreshCount == 1)
        #expect(mock.oauth.refreshCount == 1)
        #expect(mock.log.contains { $0.status == 401 }, "some requests met the expired token")
        let remote = try await exchange.remoteVersionIds()
        #expect(remote == Set(source.history.versions.keys))
    }

    @Test func twoStoresSyncThroughTheMockAndConverge() async throws {
        let fixture = try DriveFixture()
        let a = try store(fixture, "a"), b = try store(fixture, "b")
        let base = try save(a, nil, ["shared": "base"])
        func exchange(_ store: Store) -> CloudFileSystemExchange {
            CloudFileSystemExchange(store: store, fileSystem: fixture.fileSystem, basePath: "stores/converge")
        }
        _ = try await exchange(a).send()
        _ = try await exchange(b).retrieve()
        _ = try save(a, base.id, ["from-a": "1"])
        _ = try save(b, base.id, ["from-b": "2"])
        for store in [a, b] { _ = try await exchange(store).send() }
        for store in [a, b] { _ = try await exchange(store).retrieve() }
        #expect(Set(a.history.versions.keys) == Set(b.history.versions.keys))
        #expect(a.history.versions.count == 3)
        #expect(a.heads == b.heads)
        #expect(a.heads.count == 2)
    }

    /// A version's two files are named by its ID, which never repeats: they are created without a look for a file of
    /// that name to replace, so sending one version costs its two uploads and nothing else.
    @Test func aVersionIsSentWithItsTwoUploadsAndNothingElse() async throws {
        let fixture = try DriveFixture()
        let source = try store(fixture, "source")
        let exchange = CloudFileSystemExchange(store: source, fileSystem: fixture.fileSystem, basePath: "stores/push")
        let first = try save(source, nil, ["a": "1"])
        #expect(try await exchange.send().sent == [first.id])
        let second = try save(source, first.id, ["b": "2"])
        let before = fixture.mock.log.count
        let report = try await exchange.send(remoteVersionIds: [first.id])
        #expect(report.sent == [second.id] && report.failures.isEmpty)
        let made = fixture.mock.log.dropFirst(before).map {
            "\($0.method) \($0.target.split(separator: "?").first ?? "")"
        }
        #expect(made == ["POST /upload/drive/v3/files", "POST /upload/drive/v3/files"], "\(made)")
        #expect(try await exchange.remoteVersionIds() == [first.id, second.id])
    }
}
