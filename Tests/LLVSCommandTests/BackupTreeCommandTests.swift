import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The tree layout of `llvs backup` from the command line: several sources in one store, a wrong remote refused
/// before any work, a store of the earlier per-path layout, and a backup killed part way then resumed.
extension BackupCommandTests {
    func write(_ path: String, _ data: Data) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }

    @Test func twoDirectoriesLiveSideBySideInOneStore() async throws {
        try write(path("documents/letter.txt"), Data("dear".utf8))
        try write(path("pictures/cat.jpg"), Data("meow".utf8))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", path("documents")).status == 0)
        let second = try await llvs("backup", path("pictures"), "--name", "pictures")
        #expect(second.status == 0, "\(second.error)")
        #expect(second.text.contains("0 removed"), "backing up another folder removes nothing: \(second.text)")
        let listing = try await llvs("backups")
        #expect(listing.text.contains(path("documents")) && listing.text.contains("pictures"), "\(listing.text)")
        #expect(listing.text.contains("The store keeps all of it, with its history, in "), "\(listing.text)")

        let ambiguous = try await llvs("restore", path("out"))
        #expect(ambiguous.status == 2 && ambiguous.error.contains("--source"), "\(ambiguous.error)")
        #expect(try await llvs("restore", path("out-docs"), "--source", path("documents")).status == 0)
        #expect(try await llvs("restore", path("out-pics"), "--source", "pictures").status == 0)
        #expect(try snapshot(of: path("out-docs")) == snapshot(of: path("documents")))
        #expect(try snapshot(of: path("out-pics")) == snapshot(of: path("pictures")))
        #expect(try await llvs("restore", path("none"), "--source", "music").status == 3)

        try write(path("documents/letter.txt"), Data("dear friend".utf8))
        #expect(try await llvs("backup", path("documents")).status == 0)
        let history = try await llvs("history", "letter.txt", "--source", path("documents"))
        #expect(history.text.split(separator: "\n").count == 2, "added, then changed: \(history.text)")
        #expect(history.text.contains("changed") && history.text.contains("added"))
    }

    @Test func anUnknownRemoteIsRefusedBeforeTheBackupStarts() async throws {
        try write(path("source/a.txt"), Data("a".utf8))
        #expect(try await llvs("init").status == 0)
        let result = try await llvs("backup", path("source"), "--to", "nowhere")
        #expect(result.status != 0)
        #expect(result.error.contains("nowhere"), "\(result.error)")
        #expect(try await llvs("log").text.isEmpty, "no version was made")
    }

    /// A server that is down and a wrong passphrase stop `backup --to` before the walk: no version is made.
    @Test func anUnreachableRemoteOrAWrongPassphraseStopsTheBackupBeforeTheWalk() async throws {
        try write(path("source/a.txt"), Data("a".utf8))
        #expect(try await llvs("init").status == 0)
        // An address nothing listens on any more: a mock's, once it has stopped.
        let gone = try MockProcess(["webdav"]).url.replacingOccurrences(of: "http://", with: "webdav://")
        let added = try await llvs(
            "remote", "add", "down", gone, "--user", "u", "--password-stdin", input: Data("p".utf8))
        #expect(added.status == 0, "\(added.error)")
        let down = try await llvs("backup", path("source"), "--to", "down")
        #expect(down.status != 0 && down.error.contains("127.0.0.1"), "\(down.error)")
        #expect(try await llvs("log").text.isEmpty, "no version was made: \(down.text)")

        let remote = "file://" + path("sealed")
        #expect(
            try await tests.run(
                ["remote", "add", "--all-stores", "sealed", remote, "--encrypt"],
                environment: ["LLVS_PASSPHRASE": "right"]
            ).status == 0)
        #expect(try await tests.run(["init", "--store", path("other")]).status == 0)
        #expect(
            try await tests.run(
                ["push", "sealed", "--store", path("other")], environment: ["LLVS_PASSPHRASE": "right"]
            ).status == 0)
        let wrong = try await tests.run(
            ["backup", path("source"), "--to", "sealed"], environment: ["LLVS_PASSPHRASE": "wrong"])
        #expect(wrong.status == 1 && wrong.error.contains("passphrase"), "\(wrong.error)")
        #expect(try await llvs("log").text.isEmpty, "no version was made: \(wrong.text)")
    }

    /// `backup --to` sends what the remote lacks and nothing else: another store's backup already there is not
    /// downloaded, nor merged.
    @Test func aBackupToARemoteHoldingAnotherStoresBackupDownloadsNoneOfIt() async throws {
        try write(path("theirs/big.bin"), Data(repeating: 7, count: 3 << 20))
        try write(path("mine/a.txt"), Data("mine".utf8))
        let mock = try MockProcess(["webdav", "--user", "u", "--password", "pw"])
        let url = mock.url.replacingOccurrences(of: "http://", with: "webdav://")
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "home", url, "--user", "u", "--password-stdin", input: Data("pw".utf8)
            ).status == 0)
        #expect(try await tests.run(["init", "--store", path("other")]).status == 0)
        #expect(try await tests.run(["backup", path("theirs"), "--to", "home", "--store", path("other")]).status == 0)
        #expect(try await llvs("init").status == 0)
        let traced = try await tests.run(
            ["backup", path("mine"), "--to", "home"], environment: ["LLVS_HTTP_TRACE": "1"])
        #expect(traced.status == 0 && traced.text.contains("Sent 1 version"), "\(traced.text) \(traced.error)")
        // The remote's format record is the one file read.
        let downloads = traced.error.split(separator: "\n").filter {
            $0.contains("→ GET") && !$0.hasSuffix("/llvs-remote.json")
        }
        #expect(downloads.isEmpty, "\(downloads)")
        #expect(
            try await llvs("backups").text.contains(path("theirs")) == false, "nothing of the other store was merged")
        withExtendedLifetime(mock) {}
    }

    /// A store written by the per-path layout (one value per path, a JSON record under `.llvs-meta/`) restores as it
    /// did; the next backup leaves those values out of its version, and the older version still restores with --at.
    @Test func aStoreOfThePerPathLayoutStillRestoresAndConverts() async throws {
        func meta(_ kind: String, size: Int) -> Data {
            try! JSONSerialization.data(withJSONObject: [
                "kind": kind, "size": size, "modified": 1_700_000_000, "modifiedNanoseconds": 5, "mode": 0o640,
            ])
        }
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("put", "notes/old.txt", "-", input: Data("old layout".utf8)).status == 0)
        #expect(try await llvs("put", ".llvs-meta/notes/old.txt", "-", input: meta("file", size: 10)).status == 0)
        #expect(try await llvs("put", ".llvs-meta/notes", "-", input: meta("directory", size: 0)).status == 0)
        let old = try await llvs("log", "--json")
        let oldVersion = try #require(
            (try JSONSerialization.jsonObject(with: old.output) as? [[String: Any]])?.first?["id"] as? String)
        #expect(try await llvs("restore", path("legacy")).status == 0)
        #expect(try String(contentsOfFile: path("legacy/notes/old.txt"), encoding: .utf8) == "old layout")

        try write(path("source/new.txt"), Data("tree layout".utf8))
        let converted = try await llvs("backup", path("source"))
        #expect(converted.status == 0, "\(converted.error)")
        #expect(converted.text.contains("earlier per-path backup layout"), "\(converted.text)")
        #expect(try await llvs("get", "notes/old.txt").status == 3, "the old values are left out of the new version")
        #expect(try await llvs("restore", path("new")).status == 0)
        #expect(try snapshot(of: path("new")) == snapshot(of: path("source")))
        #expect(try await llvs("restore", path("again"), "--at", oldVersion).status == 0)
        #expect(try String(contentsOfFile: path("again/notes/old.txt"), encoding: .utf8) == "old layout")
    }

    /// Killed with SIGKILL while it walks (after 1 to 3 checkpoints) or while it sends (after 2 or 5 versions reached
    /// the remote): the re-run finishes the backup, stores again only what the last checkpoint did not hold, sends only
    /// the versions the remote lacks, and the remote clones to the same tree.
    @Test(arguments: [("walk", 1), ("walk", 3), ("send", 2), ("send", 5)])
    func aKilledBackupResumes(phase: String, events: Int) async throws {
        var seed = UInt64(events) &* 0x9E37_79B9_7F4A_7C15
        for index in 0..<12 {
            var data = Data(count: 3 << 20)
            data.withUnsafeMutableBytes { raw in
                for word in raw.bindMemory(to: UInt64.self).indices {
                    seed = seed &* 6364136223846793005 &+ 1442695040888963407
                    raw.bindMemory(to: UInt64.self)[word] = seed
                }
            }
            try write(path("source/part\(index % 3)/file\(index).bin"), data)
        }
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)

        /// Files in the folder and its sub-folders (one level: `versions/` of a store or a remote), temporaries aside.
        /// Each folder is listed on its own: a whole-tree walk fails when a temporary vanishes under it.
        func files(in folder: String) -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).reduce(0) { count, name in
                guard !name.hasPrefix(".") else { return count }
                guard FileManager.default.isDirectory(folder + "/" + name) else { return count + 1 }
                return count
                    + ((try? FileManager.default.contentsOfDirectory(atPath: folder + "/" + name)) ?? []).filter {
                        !$0.hasPrefix(".")
                    }.count
            }
        }
        let process = try startLLVS(["backup", path("source"), "--checkpoint-every", "2", "--to", "home"])
        // Waits for the events themselves: version files appearing in the store, or on the remote. On this thread,
        // not as a task: with the whole suite running, the shared task threads can be busy for longer than the backup
        // takes, and the kill would come too late.
        let watched = phase == "walk" ? path(".llvs/versions") : path("remote/versions")
        try FileEvents.wait(in: [watched], until: { files(in: watched) >= events }, while: { process.isRunning })
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(
            process.terminationReason == .uncaughtSignal,
            "the backup ended (status \(process.terminationStatus)) before it could be killed")
        let onRemote = files(in: path("remote/versions"))

        let resumed = try await llvs("backup", path("source"), "--to", "home")
        #expect(resumed.status == 0, "\(resumed.error)")
        // 36 MiB of data: the two runs together store it about once (what the killed run wrote after its last
        // checkpoint was never committed: at most a checkpoint of 2 MiB, and the listings).
        func bytes(in folder: String) -> Int {
            ((try? FileManager.default.subpathsOfDirectory(atPath: folder)) ?? []).reduce(0) { total, file in
                total + ((try? FileManager.default.attributesOfItem(atPath: folder + "/" + file)[.size] as? Int) ?? 0)
            }
        }
        #expect(
            bytes(in: path(".llvs/versions")) <= (36 + 3) << 20,
            "the store holds \(bytes(in: path(".llvs/versions"))) bytes for 36 MiB")
        // The re-run sends only what the remote lacked.
        let match = try #require(resumed.text.firstMatch(of: /Sent ([0-9]+) version/))
        let sent = try #require(Int(match.1))
        let versions = files(in: path(".llvs/versions"))
        #expect(
            sent == versions - onRemote,
            "sent \(sent) of \(versions) versions, \(onRemote) already on the remote: \(resumed.text)")
        let cloned = try await tests.run(["clone", "home", path("clone")])
        #expect(cloned.status == 0, "\(cloned.error)")
        #expect(try await tests.run(["restore", path("restored"), "--store", path("clone")]).status == 0)
        #expect(try snapshot(of: path("restored")) == snapshot(of: path("source")))
    }
}

extension FileManager {
    func isDirectory(_ path: String) -> Bool {
        var isFolder: ObjCBool = false
        return fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue
    }
}
