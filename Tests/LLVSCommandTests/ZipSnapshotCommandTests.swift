import Foundation
import LLVSSupport
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
        let json =
            try JSONSerialization.jsonObject(
                with: Data(contentsOf: Self.fixture.appendingPathComponent("expected.json"))) as! [String: Any]
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
        #expect(
            snapshot.status == 0 && snapshot.text.contains("(zip-v1): 12 versions"),
            "\(snapshot.text) \(snapshot.error)")
        let folders = try FileManager.default.contentsOfDirectory(atPath: remote + "/snapshots")
        #expect(!folders.contains(Self.appSnapshotId), "the app's snapshot goes once the new manifest is up")
        #expect(folders.count == 2)
        let second = try await llvs("clone", "app", path("second"))
        #expect(second.text.contains("Restored snapshot") && second.text.contains("(12 versions)"), "\(second.text)")
        try await checkEveryValue(in: path("second"))
        #expect(try await llvs("snapshot", "app", "--format", "tar", "--store", path("first")).status == 2)
    }
}

extension ZipSnapshotCommandTests {
    /// Values that begin with `LLZF`: an LLVS app decompresses any value file longer than 4 bytes that does, so the
    /// snapshot must frame them, and both an independent reader of upstream's rule and llvs's own clone must give
    /// back exactly the bytes stored.
    @Test func valuesBeginningWithLLZFReadBackExactly() async throws {
        var stored = Data("LLZF".utf8)
        stored += Data("bvx-".utf8) + Data([5, 0, 0, 0]) + Data("hello".utf8) + Data("bvx$".utf8)
        var large = Data("LLZF".utf8)
        large += Data((0..<(5 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        let values: [String: Data] = [
            "stream": stored,  // LLZF + a valid LZFSE stream of other bytes
            "end": Data("LLZFbvx$".utf8),  // LLZF + an empty stream
            "large": large,  // past the size that is streamed on import
            "four": Data("LLZF".utf8),  // exactly 4 bytes: upstream keeps it
            "plain": Data("plain value".utf8),
        ]
        let remote = path("remote")
        #expect(try await llvs("init", "--store", path("store")).status == 0)
        for (id, data) in values.sorted(by: { $0.key < $1.key }) {
            try data.write(to: URL(fileURLWithPath: path("value")))
            #expect(try await llvs("put", id, path("value"), "--store", path("store")).status == 0)
        }
        // A remote LLVS apps read: the upstream layout, whose snapshots are zip-v1.
        #expect(
            try await llvs("remote", "add", "--all-stores", "home", "file://" + remote, "--format", "upstream").status
                == 0)
        #expect(try await llvs("push", "home", "--store", path("store")).status == 0)
        let snapshot = try await llvs("snapshot", "home", "--store", path("store"))
        #expect(snapshot.status == 0 && snapshot.text.contains("zip-v1"), "\(snapshot.text) \(snapshot.error)")

        // The independent reader, on the chunks as they are on the remote.
        let folders = try FileManager.default.contentsOfDirectory(atPath: remote + "/snapshots").filter {
            !$0.hasSuffix(".json")
        }
        let folder = remote + "/snapshots/" + (try #require(folders.first))
        let chunks = try FileManager.default.contentsOfDirectory(atPath: folder).filter { $0.hasPrefix("chunk-") }
            .sorted().map { folder + "/" + $0 }
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent(
            "Scripts/upstream-values.py"
        ).path
        let reader = ChildProcess()
        reader.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        reader.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        reader.arguments = ["python3", script] + chunks
        let out = Pipe()
        reader.standardOutput = out
        try reader.run()
        let printed = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        reader.waitUntilExit()
        #expect(reader.terminationStatus == 0)
        let read = Set(printed.split(separator: "\n").compactMap { $0.split(separator: " ").last.map(String.init) })
        let expected = Set(values.values.map { data in SHA256Hex.of(data) })
        #expect(read == expected, "an upstream reader reads other bytes: \(printed)")

        let clone = try await llvs("clone", "home", path("clone"))
        #expect(clone.status == 0 && clone.text.contains("Restored snapshot"), "\(clone.text) \(clone.error)")
        for (id, data) in values {
            #expect(try await llvs("get", id, "--store", path("clone")).output == data, "\(id)")
        }
    }
}

/// SHA-256 in hex, through `sha256sum` (the tests link no crypto library).
enum SHA256Hex {
    static func of(_ data: Data) -> String {
        let process = ChildProcess()
        process.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe(), output = Pipe()
        process.standardInput = input
        process.standardOutput = output
        try? process.run()
        input.fileHandleForWriting.write(data)
        try? input.fileHandleForWriting.close()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        return String(text.prefix(64))
    }
}
