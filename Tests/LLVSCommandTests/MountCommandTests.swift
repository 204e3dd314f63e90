import Foundation
import LLVSHTTP
import LLVSSupport
import LLVSTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs mount` on this machine's FUSE: a store with three backups and app values on two branches, mounted, browsed
/// with the file system's own calls and compared with the trees backed up and with `llvs get`, then unmounted by
/// Ctrl-C; a mount point a killed mount left behind is named with the command that clears it.
extension BackupCommandTests {
    static let fuseAvailable =
        FileManager.default.fileExists(atPath: "/dev/fuse") && SearchPath.find("fusermount3") != nil

    /// A running `llvs mount`, ready once it said so on standard output.
    struct RunningMount {
        let process: ChildProcess
        let point: String
        /// What it said once mounted.
        let line: String

        /// SIGINT, as Ctrl-C: the mount comes down and the process ends.
        func stop() {
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
        }
    }

    func mount(at point: String, store: String, errors: String? = nil) throws -> RunningMount {
        try mount(at: point, with: ["--store", store], errors: errors)
    }

    func mount(at point: String, with arguments: [String], errors: String? = nil) throws -> RunningMount {
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        let output = Pipe()
        let process = try startLLVS(["mount", point] + arguments, output: output, errors: errors)
        // Waits for the line the mount prints once the kernel has it (or for the end of its output, if it failed).
        var said = Data()
        while !said.contains(UInt8(ascii: "\n")) {
            let piece = output.fileHandleForReading.availableData
            if piece.isEmpty { break }
            said.append(piece)
        }
        let line = String(decoding: said, as: UTF8.self)
        guard line.hasPrefix("Mounted") else {
            process.waitUntilExit()
            throw CocoaError(.fileReadUnknown, userInfo: [NSLocalizedDescriptionKey: "llvs mount said: \(line)"])
        }
        return RunningMount(process: process, point: point, line: line)
    }

    @Test(.enabled(if: fuseAvailable || CIEnvironment.requiresEveryTest, "needs /dev/fuse and fusermount3 (fuse3)"))
    func aMountShowsEveryBackupAndEveryVersionAsTheyWere() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        // Three backups: a first tree; a change, an addition and a removal; a large file added.
        try write(path("tree/notes.txt"), Data("first".utf8))
        try write(path("tree/docs/plan.md"), Data("# plan".utf8))
        try write(path("tree/docs/old.txt"), Data("old".utf8))
        try FileManager.default.createSymbolicLink(atPath: path("tree/link"), withDestinationPath: "notes.txt")
        chmod(path("tree/notes.txt"), 0o640)
        var trees: [[String: String]] = []
        for round in 0..<3 {
            if round == 1 {
                try write(path("tree/notes.txt"), Data("second, longer".utf8))
                try write(path("tree/docs/new.txt"), Data("new".utf8))
                try FileManager.default.removeItem(atPath: path("tree/docs/old.txt"))
            }
            if round == 2 {
                try write(path("tree/big.bin"), SeededGenerator.bytes(12 << 20, seed: 7))
            }
            let backup = try await llvs("backup", path("tree"), "--name", "tree", "--store", store)
            #expect(backup.status == 0, "\(backup.error)")
            trees.append(try snapshot(of: path("tree")))
        }
        // App values on two branches.
        let base = try await llvs("put", "notes/a", "-", "--store", store, input: Data("A".utf8))
        let baseVersion = base.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await llvs("put", "notes/b", "-", "--store", store, input: Data("B".utf8)).status == 0)
        #expect(
            try await llvs(
                "put", "notes/c", "-", "--on", baseVersion, "--branch", "side", "--store", store,
                input: Data("C".utf8)
            ).status == 0)

        let mounted = try mount(at: path("mnt"), store: store)
        defer { if mounted.process.isRunning { mounted.stop() } }
        let root = path("mnt")
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: root)) == [
                "sources", "versions", "heads", "current",
            ])
        let times = try FileManager.default.contentsOfDirectory(atPath: root + "/sources/tree").sorted()
        #expect(times.count == 4 && times.last == "latest", "\(times)")
        for (index, time) in times.dropLast().enumerated() {
            let seen = try snapshot(of: root + "/sources/tree/" + time)
            let differing = Set(seen.keys).union(trees[index].keys).filter { seen[$0] != trees[index][$0] }.sorted()
            #expect(
                differing.isEmpty,
                "backup \(index + 1) at \(time): \(differing.map { "\($0): \(seen[$0] ?? "-") vs \(trees[index][$0] ?? "-")" })"
            )
        }
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: root + "/sources/tree/latest") == times[2])
        #expect(
            try String(contentsOfFile: root + "/sources/tree/latest/notes.txt", encoding: .utf8) == "second, longer")

        // Reads at any offset, across chunk boundaries, give the file's bytes.
        let source = try Data(contentsOf: URL(fileURLWithPath: path("tree/big.bin")))
        let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: root + "/sources/tree/latest/big.bin"))
        for offset in [0, 1 << 20, (4 << 20) - 100, 5_555_555, (12 << 20) - 10] {
            try handle.seek(toOffset: UInt64(offset))
            let piece = try handle.read(upToCount: 300_000) ?? Data()
            #expect(piece == source.subdata(in: offset..<min(offset + 300_000, source.count)), "at \(offset)")
        }
        // A file held open does not keep the mount up once asked down; this one is closed here.
        try handle.close()
        // Nothing can be written.
        #expect(open(root + "/sources/tree/latest/notes.txt", O_WRONLY) == -1 && errno == EROFS)

        // Versions: each value as a file, as `llvs get` gives it; heads and current as links.
        let heads = try FileManager.default.contentsOfDirectory(atPath: root + "/heads")
        #expect(heads.count == 2, "\(heads)")
        for head in heads {
            let folder = root + "/heads/" + head + "/notes"
            for name in try FileManager.default.contentsOfDirectory(atPath: folder) {
                let got = try await llvs("get", "notes/" + name, "--at", head, "--store", store)
                #expect(
                    try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)) == got.output, "\(head) \(name)")
            }
        }
        let current = try FileManager.default.destinationOfSymbolicLink(atPath: root + "/current")
        #expect(current.hasPrefix("versions/"))
        #expect(try String(contentsOfFile: root + "/current/notes/a", encoding: .utf8) == "A")

        mounted.stop()
        #expect(mounted.process.terminationStatus == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: root).isEmpty, "unmounted")
    }

    /// A chunk whose stored bytes were changed is an I/O error on the file holding it, told once with its path; the
    /// other files read as they were.
    @Test(.enabled(if: fuseAvailable || CIEnvironment.requiresEveryTest, "needs /dev/fuse and fusermount3 (fuse3)"))
    func aDamagedChunkIsAnErrorOnThatFileAloneToldOnce() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        let victim = SeededGenerator.bytes(700_000, seed: 4242)
        try write(path("tree/victim.bin"), victim)
        try write(path("tree/fine.bin"), SeededGenerator.bytes(700_000, seed: 4243))
        #expect(try await llvs("backup", path("tree"), "--name", "tree", "--store", store).status == 0)
        // One byte flipped in the stored copy of the victim's bytes (kept plain: they do not compress).
        #expect(try flipStoredByte(of: victim.subdata(in: 400_000..<400_064), in: store))

        let errors = path("mount.err")
        let mounted = try mount(at: path("mnt"), store: store, errors: errors)
        let latest = path("mnt") + "/sources/tree/latest/"
        for _ in 0..<2 {
            let fd = open(latest + "victim.bin", O_RDONLY)
            #expect(fd >= 0)
            var buffer = [UInt8](repeating: 0, count: 65536)
            #expect(read(fd, &buffer, buffer.count) == -1 && errno == EIO)
            close(fd)
        }
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: latest + "fine.bin"))
                == SeededGenerator.bytes(700_000, seed: 4243))
        mounted.stop()
        let told = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(told.components(separatedBy: "victim.bin").count == 2, "told once, with the path: \(told)")
    }

    /// The requests a WebDAV mock answered so far (`GET /llvs-mock/requests`): method, target and Range header.
    func requestsAnswered(by mock: MockProcess) async throws -> [(method: String, target: String, range: String?)] {
        let url = try #require(URL(string: mock.url)?.deletingLastPathComponent())
        let base = try #require(URL(string: "/llvs-mock/requests", relativeTo: url)?.absoluteURL)
        let answer = try await quickClient().send(HTTPRequest(url: base))
        #expect(answer.status == 200)
        return try answer.body.split(separator: UInt8(ascii: "\n")).map { line in
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line)) as? [String: Any])
            return (object["method"] as? String ?? "", object["target"] as? String ?? "", object["range"] as? String)
        }
    }

    /// From a WebDAV remote, nothing is cloned: the mount reads version files and indexes, never a changes file whole;
    /// every file of both backups reads as it was backed up, each through ranged reads; and a chunk read once (a
    /// large file unchanged between the backups, read again under the second backup's folder) costs no request.
    @Test(.enabled(if: fuseAvailable || CIEnvironment.requiresEveryTest, "needs /dev/fuse and fusermount3 (fuse3)"))
    func aMountFromAWebDAVRemoteReadsWhatIsReadAndOnlyOnce() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        let mock = try #require(try await addRemote("webdav") as? MockProcess)
        let big = SeededGenerator.bytes(9 << 20, seed: 11)
        try write(path("tree/big.bin"), big)
        try write(path("tree/docs/a.txt"), Data("first".utf8))
        try write(path("tree/docs/deeper/b.txt"), SeededGenerator.bytes(3_000, seed: 12))
        var trees: [[String: String]] = []
        for round in 0..<2 {
            if round == 1 { try write(path("tree/docs/a.txt"), Data("second".utf8)) }
            let backup = try await llvs("backup", path("tree"), "--name", "tree", "--store", store, "--to", "home")
            #expect(backup.status == 0, "\(backup.error)")
            trees.append(try snapshot(of: path("tree")))
        }
        let before = try await requestsAnswered(by: mock).count

        let mounted = try mount(at: path("mnt"), with: ["--from", "home"])
        defer { if mounted.process.isRunning { mounted.stop() } }
        #expect(mounted.line.contains("(2 versions; contents are read as they are needed)"), "\(mounted.line)")
        let opening = try await requestsAnswered(by: mock).dropFirst(before)
        // What the mount needs to show the backups (their records) is read by range, never a changes file whole.
        func wholeChanges(_ request: (method: String, target: String, range: String?)) -> Bool {
            request.method == "GET" && request.target.contains("/changes/") && request.range == nil
        }
        #expect(!opening.contains(where: wholeChanges), "\(opening)")
        #expect(opening.contains { $0.method == "GET" && $0.target.contains("/indexes/") })

        let times = try FileManager.default.contentsOfDirectory(atPath: path("mnt/sources/tree")).sorted()
        #expect(times.count == 3 && times.last == "latest", "\(times)")
        let backups = path("mnt/sources/tree") + "/"
        #expect(try snapshot(of: backups + times[0]) == trees[0])
        let read = try await requestsAnswered(by: mock)
        let contents = read.dropFirst(before).filter { $0.method == "GET" && $0.target.contains("/changes/") }
        #expect(contents.count > opening.count(where: { $0.target.contains("/changes/") }))
        #expect(!contents.contains(where: wholeChanges), "\(contents)")

        // The big file again, under the other backup (another file to the kernel, the same chunks): once the second
        // backup's listing is read (its root changed with docs/), no request.
        let second = backups + times[1] + "/big.bin"
        #expect(try FileManager.default.attributesOfItem(atPath: second)[.size] as? Int == big.count)
        let listed = try await requestsAnswered(by: mock)
        let again = try Data(contentsOf: URL(fileURLWithPath: second))
        #expect(again == big)
        let after = try await requestsAnswered(by: mock)
        #expect(after.count == listed.count, "\(after.dropFirst(listed.count))")
        #expect(listed.count - read.count <= 2, "\(listed.dropFirst(read.count))")
        #expect(try snapshot(of: backups + times[1]) == trees[1])

        mounted.stop()
        #expect(mounted.process.terminationStatus == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path("mnt")).isEmpty, "unmounted")
    }

    /// From an encrypted remote (sealed files, read by range through the encryption layer): app values on two
    /// branches and a backup, each head's values as `llvs get` gives them, the backup as it was made.
    @Test(.enabled(if: fuseAvailable || CIEnvironment.requiresEveryTest, "needs /dev/fuse and fusermount3 (fuse3)"))
    func aMountFromAnEncryptedRemoteShowsEveryHeadAndBackup() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        let base = try await llvs("put", "notes/a", "-", "--store", store, input: Data("A".utf8))
        let baseVersion = base.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await llvs("put", "notes/b", "-", "--store", store, input: Data("B".utf8)).status == 0)
        let side = try await llvs(
            "put", "notes/c", "-", "--on", baseVersion, "--branch", "side", "--store", store,
            input: SeededGenerator.bytes(6 << 20, seed: 21))
        #expect(side.status == 0, "\(side.error)")
        try write(path("tree/x/y.bin"), SeededGenerator.bytes(700_000, seed: 22))
        try write(path("tree/z.txt"), Data("z".utf8))
        let added = try await llvs(
            "remote", "add", "home", "file://" + path("remote"), "--encrypt", "--passphrase-stdin", "--store", store,
            input: Data("mount pass\n".utf8))
        #expect(added.status == 0, "\(added.error)")
        #expect(try await llvs("push", "--store", store).status == 0)
        let backup = try await llvs("backup", path("tree"), "--name", "tree", "--to", "home", "--store", store)
        #expect(backup.status == 0, "\(backup.error)")
        let tree = try snapshot(of: path("tree"))

        let mounted = try mount(at: path("mnt"), with: ["--from", "home", "--store", store])
        defer { if mounted.process.isRunning { mounted.stop() } }
        #expect(mounted.line.contains("contents are read as they are needed") && !mounted.line.contains("whole"))
        let root = path("mnt")
        let latest = try FileManager.default.destinationOfSymbolicLink(atPath: root + "/sources/tree/latest")
        #expect(try snapshot(of: root + "/sources/tree/" + latest) == tree)
        let heads = try FileManager.default.contentsOfDirectory(atPath: root + "/heads")
        #expect(heads.count == 2, "\(heads)")
        for head in heads {
            let folder = root + "/heads/" + head + "/notes"
            let names = try FileManager.default.contentsOfDirectory(atPath: folder)
            #expect(names.count == 2, "\(head): \(names)")
            for name in names {
                let got = try await llvs("get", "notes/" + name, "--at", head, "--store", store)
                #expect(
                    try Data(contentsOf: URL(fileURLWithPath: folder + "/" + name)) == got.output, "\(head) \(name)")
            }
        }
        mounted.stop()
        #expect(mounted.process.terminationStatus == 0)
    }

    @Test(.enabled(if: fuseAvailable || CIEnvironment.requiresEveryTest, "needs /dev/fuse and fusermount3 (fuse3)"))
    func aMountPointLeftByAKilledMountIsNamedWithTheCommandThatClearsIt() async throws {
        let store = path("store")
        #expect(try await llvs("init", "--store", store).status == 0)
        let mounted = try mount(at: path("mnt"), store: store)
        kill(mounted.process.processIdentifier, SIGKILL)
        mounted.process.waitUntilExit()
        defer { _ = try? runFusermount(["-u", path("mnt")]) }
        let again = try await llvs("mount", path("mnt"), "--store", store)
        #expect(again.status == 1, "\(again.error)")
        #expect(again.error.contains("fusermount3 -u \(path("mnt"))"), "\(again.error)")
    }

    func runFusermount(_ arguments: [String]) throws -> Int32 {
        let fusermount = try #require(SearchPath.find("fusermount3"))
        return try #require(ChildProcess.output(of: fusermount, arguments)).status
    }
}
