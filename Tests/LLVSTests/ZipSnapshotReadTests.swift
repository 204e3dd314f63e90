import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// Reading LLVS apps' zip-v1 snapshots: the small golden fixture (made by upstream LLVS's own code: LLZF + LZFSE
/// files, decomposed names, two chunks) restores on both storages to the values upstream's Store returns.
@Suite struct ZipSnapshotReadTests {
    let directory = TemporaryDirectory()
    static let fixture = TestPaths.packageRoot.appendingPathComponent(
        "Tests/LLVSTests/Fixtures/llvs-zip-snapshot-small")

    /// expected.json: per version, each value as base64 (or sha256 and size for the large one) and its stored version.
    struct Expected: Decodable {
        enum Content: Decodable, Equatable {
            case bytes(Data)
            case large(sha256: String, size: Int)
            init(from decoder: any Decoder) throws {
                let container = try decoder.singleValueContainer()
                if let base64 = try? container.decode(String.self) {
                    self = .bytes(Data(base64Encoded: base64)!)
                } else {
                    struct Large: Decodable { var sha256: String; var size: Int }
                    let large = try container.decode(Large.self)
                    self = .large(sha256: large.sha256, size: large.size)
                }
            }
        }
        struct VersionInfo: Decodable { var id: String; var label: String; var inSnapshot: Bool }
        var heads: [String]
        var versions: [VersionInfo]
        var values: [String: [String: Content]]
        var storedVersionIds: [String: [String: String]]
    }

    static func expected() throws -> Expected {
        try JSONDecoder().decode(Expected.self, from: Data(contentsOf: fixture.appendingPathComponent("expected.json")))
    }

    /// A copy of the fixture's remote (a client may write into a remote).
    func remoteCopy() throws -> LocalFolderFileSystem {
        let copy = directory.child("remote")
        try FileManager.default.copyItem(at: Self.fixture.appendingPathComponent("remote"), to: copy)
        return LocalFolderFileSystem(root: copy)
    }

    func check(_ store: Store, against expected: Expected, versions: [Expected.VersionInfo]) throws {
        for info in versions {
            let id = Version.ID(info.id)
            let references = try store.valueReferences(at: id)
            #expect(
                Set(references.map(\.valueId.rawValue)) == Set(expected.values[info.id]?.keys ?? [:].keys),
                "\(info.label)")
            for reference in references {
                let value = try #require(try store.value(id: reference.valueId, at: id))
                let content: Expected.Content =
                    value.data.count >= 65_536
                    ? .large(sha256: SHA256.hex(value.data), size: value.data.count) : .bytes(value.data)
                #expect(
                    content == expected.values[info.id]?[reference.valueId.rawValue],
                    "\(info.label) \(reference.valueId)")
                #expect(
                    reference.storedVersionId.rawValue
                        == expected.storedVersionIds[info.id]?[reference.valueId.rawValue],
                    "\(info.label) \(reference.valueId)")
            }
        }
    }

    @Test(arguments: StorageKind.allCases)
    func aCloneOfTheFixtureUsesItsSnapshotAndGivesUpstreamsValues(storage: StorageKind) async throws {
        let expected = try Self.expected()
        let coordinator = try StoreCoordinator(store: try makeStore(in: directory, name: "clone", storage: storage))
        let exchange = CloudFileSystemExchange(
            store: coordinator.store, fileSystem: try remoteCopy(), basePath: "", concurrency: 4)
        let outcome = try await coordinator.bootstrapFromSnapshot(using: exchange)
        let manifest = try #require(
            { if case .restored(let manifest) = outcome { manifest } else { nil } }(),
            "not restored: \(outcome.message)")
        #expect(manifest.format == "zip-v1")
        #expect(coordinator.store.history.count == 12)
        #expect(coordinator.store.heads.map(\.rawValue) == expected.heads)
        try check(coordinator.store, against: expected, versions: expected.versions)
        // And the same from a store opened afresh (what was restored is on disk, not only in memory).
        let reopened = try openStore(coordinator.store.rootURL)
        try check(reopened, against: expected, versions: expected.versions)
        // The history taken over from the import's staging store is the one storage gives when read back.
        let adopted = coordinator.store.history, readBack = reopened.history
        #expect(adopted.versions == readBack.versions)
        #expect(adopted.heads == readBack.heads)
        #expect(
            adopted.versions.keys.allSatisfy {
                adopted.generation(of: $0) == readBack.generation(of: $0)
                    && Set(adopted.successors(of: $0)) == Set(readBack.successors(of: $0))
            })
        // The staged archive became the file storage's pack (or was read into SQLite): nothing is left behind.
        let left =
            (try? FileManager.default.contentsOfDirectory(atPath: coordinator.store.temporaryDirectory.path)) ?? []
        #expect(left.isEmpty, "\(left)")
        if storage == .file {
            // One pack is the snapshot's 10 versions; the 2 pulled after it, received in bulk, are a second one.
            let packs = try FileManager.default.contentsOfDirectory(
                atPath: (coordinator.store.storage as! FileStorage).packsPath)
            #expect(manifest.versionCount == 10)
            #expect(packs.filter { $0.hasSuffix(FileStorage.packExtension) }.count == 2 && packs.count == 2, "\(packs)")
        }
    }

    @Test func theArchiveIsReadDirectlyToo() throws {
        let expected = try Self.expected()
        let chunks = Self.fixture.appendingPathComponent("remote/snapshots/C0FFEE01-0000-4000-8000-5A0000000001")
        var archive = try Data(contentsOf: chunks.appendingPathComponent("chunk-000"))
        archive.append(try Data(contentsOf: chunks.appendingPathComponent("chunk-001")))
        let url = directory.child("snapshot.zip")
        try archive.write(to: url)
        let store = try makeStore(in: directory, name: "direct")
        #expect(try store.restoreSnapshot(from: url, format: "zip-v1", versionCount: 10) == 10)
        try check(store, against: expected, versions: expected.versions.filter(\.inSnapshot))
    }
}
