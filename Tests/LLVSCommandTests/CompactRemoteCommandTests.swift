import Foundation
import LLVSSupport
import Testing

/// The remote formats from the command line: a new remote is compact unless asked, a remote that holds the upstream
/// layout keeps it, and what the build before compression wrote (stores of both storages, an upstream remote) reads.
extension BackupCommandTests {
    static let madeBeforeCompression = BuiltProgram.packageRoot().appendingPathComponent(
        "Tests/LLVSCommandTests/Fixtures/made-by-07204be")

    /// SHA-256 of each file under `root`, by relative path (modification times differ in a checkout).
    func contents(of root: String) throws -> [String: String] {
        try snapshot(of: root).compactMapValues { entry in
            entry.hasPrefix("file") ? String(entry.split(separator: " ").last!) : nil
        }
    }

    @Test func aNewRemoteIsCompactAndAnUpstreamOneStaysUpstream() async throws {
        try write(path("tree/notes.txt"), Data(String(repeating: "a line of notes\n", count: 5000).utf8))
        #expect(try await llvs("init", "--store", path("s")).status == 0)
        #expect(try await llvs("remote", "add", "new", "file://" + path("compact"), "--store", path("s")).status == 0)
        let upstreamAdded = try await llvs(
            "remote", "add", "apps", "file://" + path("upstream"), "--format", "upstream", "--store", path("s"))
        #expect(upstreamAdded.status == 0, "\(upstreamAdded.error)")
        #expect(try await llvs("backup", path("tree"), "--to", "new", "--store", path("s")).status == 0)
        #expect(try await llvs("push", "apps", "--store", path("s")).status == 0)
        let compactRecord = try String(contentsOfFile: path("compact/llvs-remote.json"), encoding: .utf8)
        #expect(compactRecord.contains("\"compact\""))
        let upstreamRecord = try String(contentsOfFile: path("upstream/llvs-remote.json"), encoding: .utf8)
        #expect(upstreamRecord.contains("\"upstream\""))
        func bytes(_ folder: String) throws -> Int {
            try FileManager.default.subpathsOfDirectory(atPath: path(folder)).reduce(0) { total, name in
                total + ((try? Data(contentsOf: URL(fileURLWithPath: path(folder + "/" + name))).count) ?? 0)
            }
        }
        #expect(try bytes("compact") * 4 < bytes("upstream"))

        // The earlier build's remote holds versions and no record: it stays upstream when this build pushes to it.
        let fixtureRemote = Self.madeBeforeCompression.appendingPathComponent("remote").path
        try FileManager.default.copyItem(atPath: fixtureRemote, toPath: path("old-remote"))
        #expect(try await llvs("clone", "file://" + path("old-remote"), path("from-old")).status == 0)
        #expect(try await llvs("push", "origin", "--store", path("from-old")).status == 0)
        let oldRecord = try String(contentsOfFile: path("old-remote/llvs-remote.json"), encoding: .utf8)
        #expect(oldRecord.contains("\"upstream\""))

        // Both clone and restore, byte for byte.
        for remote in ["compact", "upstream"] {
            #expect(try await llvs("clone", "file://" + path(remote), path("clone-\(remote)")).status == 0)
            let restored = try await llvs("restore", path("out-\(remote)"), "--store", path("clone-\(remote)"))
            #expect(restored.status == 0, "\(restored.error)")
            #expect(try contents(of: path("out-\(remote)")) == contents(of: path("tree")))
        }
    }

    @Test(arguments: ["store-file", "store-sqlite"]) func aStoreTheEarlierBuildWroteStillReads(
        store: String
    ) async throws {
        let fixture = Self.madeBeforeCompression
        try FileManager.default.copyItem(atPath: fixture.appendingPathComponent(store).path, toPath: path(store))
        let big = try await llvs("get", "big", "--store", path(store))
        let expected = try Data(contentsOf: fixture.appendingPathComponent("big.txt"))
        #expect(big.status == 0 && big.output == expected)
        #expect(try await llvs("get", "greeting", "--store", path(store)).text == "hello\n")
        let restored = try await llvs("restore", path("out"), "--store", path(store))
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try contents(of: path("out")) == contents(of: fixture.appendingPathComponent("tree").path))
        // This build writes on top of it (compressed values), and all of it still reads.
        try write(path("more/file.txt"), Data(String(repeating: "more ", count: 10_000).utf8))
        #expect(try await llvs("backup", path("more"), "--store", path(store)).status == 0)
        #expect(try await llvs("get", "big", "--store", path(store)).output == big.output)
    }
}
