import Foundation
import Testing

/// `llvs clone` from a remote an LLVS app snapshotted (zip-v1, LLZF files, decomposed names), and `llvs snapshot`
/// replacing that snapshot with one of its own that the next clone restores: a mixed fleet, from the command line.
@Suite final class ZipSnapshotCommandTests {
    let tests: CommandLineTests
    init() throws { tests = try CommandLineTests() }

    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("LLVSTests/Fixtures/llvs-zip-snapshot-small")
    static let appSnapshotId = "C0FFEE01-0000-4000-8000-5A0000000001"

    @discardableResult
    func llvs(_ arguments: String...) async throws -> CommandLineTests.Result { try await tests.run(arguments) }
    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    /// expected.json's values: base64, or {sha256, size} for the large one.
    func expectedValues() throws -> (versions: [String], values: [String: [String: Any]]) {
        let json = try JSONSerialization.jsonObject(with: Data(contentsOf: Self.fixture.appendingPathComponent("expected.json"))) as! [String: Any]
        let versions = (json["versions"] as! [[String: Any]]).map { $0["id"] as! String }
        return (versions, json["values"] as! [String: [String: Any]])
    }

    func checkEveryValue(in store: String) async throws {
        let (versions, values) = try expectedValues()
        let allIds = Set(values.values.flatMap(\.keys))
        for version in versions {
            let expected = values[version] ?? [:]
            for id in allIds.sorted() {
                let got = try await llvs("get", id, "--at", version, "--store", store)
                guard let want = expected[id] else {
                    #expect(got.status != 0, "\(id) should be absent at \(version)")
                    continue
                }
                #expect(got.status == 0, "\(id) at \(version): \(got.error)")
                if let base64 = want as? String {
                    #expect(got.output == Data(base64Encoded: base64), "\(id) at \(version)")
                } else if let large = want as? [String: Any] {
                    #expect(got.output.count == large["size"] as? Int, "\(id) at \(version)")
                }
            }
        }
    }

    @Test(arguments: ["file", "sqlite"])
    func aCloneOfAnAppsRemoteStartsFromItsSnapshot(storage: String) async throws {
        let remote = path("remote")
        try FileManager.default.copyItem(atPath: Self.fixture.appendingPathComponent("remote").path, toPath: remote)
        #expect(try await llvs("remote", "add", "--all-stores", "app", "file://" + remote).status == 0)
        let clone = try await llvs("clone", "app", path("store"), "--storage", storage)
        #expect(clone.status == 0, "\(clone.error)")
        #expect(clone.text.contains("Restored snapshot \(Self.appSnapshotId) (10 versions)"), "\(clone.text)")
        #expect(try await llvs("log", "--store", path("store")).text.split(separator: "\n").count >= 12)
        try await checkEveryValue(in: path("store"))
    }

    @Test func aSnapshotByLLVSReplacesTheAppsAndTheNextCloneRestoresIt() async throws {
        let remote = path("remote")
        try FileManager.default.copyItem(atPath: Self.fixture.appendingPathComponent("remote").path, toPath: remote)
        #expect(try await llvs("remote", "add", "--all-stores", "app", "file://" + remote).status == 0)
        #expect(try await llvs("clone", "app", path("first")).status == 0)
        let snapshot = try await llvs("snapshot", "app", "--store", path("first"))
        #expect(snapshot.status == 0 && snapshot.text.contains("(zip-v1): 12 versions"), "\(snapshot.text) \(snapshot.error)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: remote + "/snapshots")
        #expect(!folders.contains(Self.appSnapshotId), "the app's snapshot goes once the new manifest is up")
        #expect(folders.count == 2)
        let second = try await llvs("clone", "app", path("second"))
        #expect(second.text.contains("Restored snapshot") && second.text.contains("(12 versions)"), "\(second.text)")
        try await checkEveryValue(in: path("second"))
        #expect(try await llvs("snapshot", "app", "--format", "tar", "--store", path("first")).status == 2)
    }
}
