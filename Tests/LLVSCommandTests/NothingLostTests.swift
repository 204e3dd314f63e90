import Foundation
import LLVSSupport
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// Nothing lost, nothing escaped: restores stay inside DEST whatever the store (or a remote it synced with) or DEST
/// holds; user data is never refused for what it looks like; what a remote chose reaches the terminal harmless.
@Suite final class NothingLostTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    @discardableResult
    func llvs(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input)
    }
    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    func meta(_ kind: String, mode: Int = 0o644, target: String? = nil) -> Data {
        var object: [String: Any] = [
            "kind": kind, "size": 0, "modified": 1_700_000_000, "modifiedNanoseconds": 5, "mode": mode,
        ]
        if let target { object["target"] = target }
        return try! JSONSerialization.data(withJSONObject: object)
    }

    /// A store holding a link `link → OUTSIDE` and a file `link/pwned.txt`, as a hostile remote could make it.
    @Test func aFileBelowALinkInTheBackupIsNotWrittenThroughIt() async throws {
        let outside = path("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("put", ".llvs-meta/link", "-", input: meta("symlink", target: outside)).status == 0)
        #expect(try await llvs("put", "link/pwned.txt", "-", input: Data("pwned".utf8)).status == 0)
        #expect(try await llvs("put", ".llvs-meta/link/pwned.txt", "-", input: meta("file")).status == 0)
        #expect(try await llvs("put", "fine.txt", "-", input: Data("fine".utf8)).status == 0)
        #expect(try await llvs("put", ".llvs-meta/fine.txt", "-", input: meta("file")).status == 0)
        let restored = try await llvs("restore", path("dest"))
        #expect(restored.status == 1)
        #expect(restored.error.contains("link/pwned.txt"), "\(restored.error)")
        #expect(!FileManager.default.fileExists(atPath: outside + "/pwned.txt"), "restore wrote outside DEST")
        #expect(try String(contentsOfFile: path("dest/fine.txt"), encoding: .utf8) == "fine")
        #expect(
            try FileManager.default.destinationOfSymbolicLink(atPath: path("dest/link")) == outside,
            "the link itself is restored")
    }

    /// DEST already holds `sub → OUTSIDE` (and a link where a file goes): nothing is written through either.
    @Test func aLinkPlantedInDestIsNeverFollowed() async throws {
        let outside = path("outside")
        try FileManager.default.createDirectory(atPath: outside, withIntermediateDirectories: true)
        let source = path("source")
        try FileManager.default.createDirectory(atPath: source + "/sub", withIntermediateDirectories: true)
        try Data("inner".utf8).write(to: URL(fileURLWithPath: source + "/sub/file.txt"))
        try Data("top".utf8).write(to: URL(fileURLWithPath: source + "/top.txt"))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", source).status == 0)
        let dest = path("dest")
        try FileManager.default.createDirectory(atPath: dest, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: dest + "/sub", withDestinationPath: outside)
        try Data("keep".utf8).write(to: URL(fileURLWithPath: outside + "/victim.txt"))
        try FileManager.default.createSymbolicLink(
            atPath: dest + "/top.txt", withDestinationPath: outside + "/victim.txt")
        let restored = try await llvs("restore", dest)
        #expect(restored.status == 1)
        #expect(restored.error.contains("sub"), "\(restored.error)")
        #expect(!FileManager.default.fileExists(atPath: outside + "/file.txt"), "restore wrote through a planted link")
        #expect(
            try String(contentsOfFile: outside + "/victim.txt", encoding: .utf8) == "keep",
            "restore wrote through a planted leaf link")
        #expect(
            try String(contentsOfFile: dest + "/top.txt", encoding: .utf8) == "top",
            "the leaf link is replaced by the file")
        var info = stat()
        #expect(lstat(dest + "/top.txt", &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
    }

    @Test func setuidSetgidAndStickyBitsAreDroppedUnlessAsked() async throws {
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("put", "tool", "-", input: Data("#!/bin/sh\n".utf8)).status == 0)
        #expect(try await llvs("put", ".llvs-meta/tool", "-", input: meta("file", mode: 0o6755)).status == 0)
        #expect(try await llvs("put", ".llvs-meta/shared", "-", input: meta("directory", mode: 0o1777)).status == 0)
        #expect(try await llvs("restore", path("plain")).status == 0)
        var info = stat()
        #expect(stat(path("plain/tool"), &info) == 0 && info.st_mode & 0o7777 == 0o755)
        #expect(stat(path("plain/shared"), &info) == 0 && info.st_mode & 0o7777 == 0o777)
        #expect(try await llvs("restore", path("kept"), "--keep-special-bits").status == 0)
        #expect(stat(path("kept/tool"), &info) == 0 && info.st_mode & 0o7777 == 0o6755)
        #expect(stat(path("kept/shared"), &info) == 0 && info.st_mode & 0o7777 == 0o1777)
    }

    /// Names a remote chose reach the terminal with their control characters escaped: no forged `llvs:` lines, no
    /// escape sequences.
    @Test func controlCharactersInNamesAreEscaped() async throws {
        #expect(try await llvs("init").status == 0)
        let hostile = "evil\nllvs: all good\u{1B}[31m\u{07}"
        let first = try await llvs("put", "plain", "-", input: Data("x".utf8)).text.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let second = try await llvs("put", hostile, "-", input: Data("x".utf8)).text.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let diff = try await llvs("diff", first, second)
        #expect(diff.status == 0)
        #expect(diff.text == "+ evil\\nllvs: all good\\e[31m\\u{7}\n", "\(diff.text)")
        let missing = try await llvs("get", hostile + "-missing")
        #expect(missing.status == 3)
        #expect(!missing.error.contains("\u{1B}") && !missing.error.contains("\u{07}"), "\(missing.error)")
        #expect(missing.error.split(separator: "\n").count == 1, "a name forged a line: \(missing.error)")
        #expect(missing.error.contains("evil\\nllvs: all good\\e[31m\\u{7}"), "\(missing.error)")
    }
}

extension NothingLostTests {
    /// A file whose bytes begin with `LLZF` is backed up, pushed, cloned and restored intact.
    @Test func aFileBeginningWithLLZFIsClonedIntact() async throws {
        let source = path("source")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        let data = Data("LLZF".utf8) + Data((0..<5000).map { UInt8($0 % 251) })
        try data.write(to: URL(fileURLWithPath: source + "/looks-compressed.bin"))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        #expect(try await llvs("backup", source, "--to", "home").status == 0)
        let cloned = try await tests.run(["clone", "home", path("clone")])
        #expect(cloned.status == 0, "\(cloned.error)")
        #expect(cloned.text.contains("Cloned 1 version"), "\(cloned.text)")
        #expect(try await tests.run(["restore", path("restored"), "--store", path("clone")]).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: path("restored/looks-compressed.bin"))) == data)
    }
}

extension NothingLostTests {
    /// A remote with an unmerged `draft` branch: clone and pull leave its head apart (no merge version), as LLVS's
    /// coordinator does; `--merge-branches` merges it.
    @Test func branchHeadsAreLeftUnmergedUnlessAsked() async throws {
        #expect(try await llvs("init").status == 0)
        let first = try await llvs("put", "a", "-", input: Data("1".utf8)).text.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let main = try await llvs("put", "c", "-", input: Data("3".utf8)).text.trimmingCharacters(
            in: .whitespacesAndNewlines)
        let draft = try await llvs("put", "b", "-", "--on", first, "--branch", "draft", input: Data("2".utf8))
        #expect(draft.status == 0, "\(draft.error)")
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        #expect(try await llvs("push", "home").status == 0)

        let cloned = try await tests.run(["clone", "home", path("clone")])
        #expect(cloned.status == 0, "\(cloned.error)")
        #expect(cloned.text.contains("Cloned 3 versions"), "\(cloned.text)")
        #expect(cloned.text.contains("current \(main)"), "the unbranched head is current: \(cloned.text)")
        let heads = try await tests.run(["heads", "--json", "--store", path("clone")])
        #expect((try JSONSerialization.jsonObject(with: heads.output) as? [Any])?.count == 2, "\(heads.text)")

        #expect(try await tests.run(["init", "--store", path("puller")]).status == 0)
        #expect(try await tests.run(["pull", "home", "--store", path("puller")]).status == 0)
        #expect(
            try await tests.run(["log", "--json", "--store", path("puller")]).text.components(separatedBy: "\"id\"")
                .count - 1 == 3)

        let merged = try await tests.run(["clone", "home", path("merged"), "--merge-branches"])
        #expect(merged.status == 0, "\(merged.error)")
        #expect(merged.text.contains("Cloned 4 versions"), "a merge version of the draft head: \(merged.text)")
    }
}

extension NothingLostTests {
    /// A mistyped remote path: clone and pull say there is no store there (exit 3) and clone makes no folder.
    @Test func aRemoteWithoutAStoreIsAnErrorForCloneAndPull() async throws {
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "typo", "file://" + path("no-such-remote")).status == 0)
        let cloned = try await tests.run(["clone", "typo", path("clone")])
        #expect(cloned.status == 3, "\(cloned.text)")
        #expect(cloned.error.contains("no LLVS store"), "\(cloned.error)")
        #expect(!FileManager.default.fileExists(atPath: path("clone")))
        let pulled = try await llvs("pull", "typo")
        #expect(pulled.status == 3, "\(pulled.text)")
        #expect(try await llvs("put", "a", "-", input: Data("1".utf8)).status == 0)
        #expect(try await llvs("push", "typo").status == 0, "push makes the remote")
        #expect(try await llvs("pull", "typo").status == 0)
    }
}

/// Rewrites a file in place over and over from another thread until stopped.
final class FileRewriter: Sendable {
    private let stopped = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let completedRounds = Atomic<Int>(0)
    private let openFailed = Atomic<Bool>(false)
    let path: String

    /// Whole rewrites of the file so far: a test reads it before and after what must overlap them.
    var rounds: Int { completedRounds.load(ordering: .relaxed) }
    var couldOpen: Bool { !openFailed.load(ordering: .relaxed) }

    init(path: String, size: Int) {
        self.path = path
        let thread = Thread { [self] in
            // In place, as an editor or a database does: the size stays, the bytes change under the reader.
            let fd = open(path, O_WRONLY)
            if fd < 0 { openFailed.store(true, ordering: .relaxed) }
            var round: UInt8 = 1
            while fd >= 0, !stopped.load(ordering: .relaxed) {
                let piece = [UInt8](repeating: round, count: 1 << 20)
                for offset in stride(from: 0, to: size, by: 1 << 20) {
                    _ = piece.withUnsafeBytes { pwrite(fd, $0.baseAddress, min(1 << 20, size - offset), off_t(offset)) }
                }
                round &+= 1
                completedRounds.add(1, ordering: .relaxed)
            }
            if fd >= 0 { close(fd) }
            done.signal()
        }
        thread.start()
    }

    func stop() {
        stopped.store(true, ordering: .relaxed)
        done.wait()
    }
}

extension NothingLostTests {
    /// A file rewritten while `llvs backup` reads it: the backup never ends "damaged", and whatever version it makes
    /// holds bytes that match their record, so get, restore and a clone of it all work.
    @Test func aFileRewrittenDuringBackupNeverDamagesTheVersion() async throws {
        let source = path("source")
        try FileManager.default.createDirectory(atPath: source, withIntermediateDirectories: true)
        try Data("steady".utf8).write(to: URL(fileURLWithPath: source + "/steady.txt"))
        let busy = source + "/busy.bin"
        try Data(repeating: 0, count: 24 << 20).write(to: URL(fileURLWithPath: busy))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        let rewriter = FileRewriter(path: busy, size: 24 << 20)
        let roundsBefore = rewriter.rounds
        var results: [CommandLineTests.Result] = []
        for _ in 0..<3 { results.append(try await llvs("backup", source)) }
        let roundsAfter = rewriter.rounds
        rewriter.stop()
        #expect(rewriter.couldOpen, "the rewriter could not open \(busy)")
        #expect(
            roundsAfter > roundsBefore,
            "the file was rewritten while the backups ran (\(roundsBefore) → \(roundsAfter) rounds)")
        for result in results {
            #expect(result.status == 0 || result.status == 1, "backup ended \(result.status): \(result.error)")
            #expect(result.status != 5)
        }
        let restored = try await llvs("restore", path("restored"))
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try String(contentsOfFile: path("restored/steady.txt"), encoding: .utf8) == "steady")
        if FileManager.default.fileExists(atPath: path("restored/busy.bin")) {
            // The bytes of one moment of the file: each MiB written whole by one pass, the passes in order (a moment
            // in the middle of a pass holds the new pass's MiBs, then the old one's), never a torn MiB.
            let data = try Data(contentsOf: URL(fileURLWithPath: path("restored/busy.bin")))
            #expect(data.count == 24 << 20, "the record and the bytes disagree")
            let pieces = stride(from: 0, to: data.count, by: 1 << 20).map { data[$0..<min($0 + (1 << 20), data.count)] }
            let values = pieces.map { Set($0) }
            #expect(values.allSatisfy { $0.count == 1 }, "a MiB holds bytes of two passes")
            let firsts = values.compactMap(\.first)
            let changes = zip(firsts, firsts.dropFirst()).filter { $0 != $1 }.count
            #expect(changes <= 1, "the file holds more than two passes: \(firsts)")
        } else {
            #expect(
                results.contains { $0.error.contains("busy.bin") },
                "busy.bin was left out without a word: \(results.map(\.error))")
        }
        #expect(try await llvs("push", "home").status == 0)
        let cloned = try await tests.run(["clone", "home", path("clone")])
        #expect(cloned.status == 0, "\(cloned.error)")
    }
}

extension NothingLostTests {
    /// One damaged snapshot chunk: clone warns and pulls every version instead of stopping.
    @Test func aDamagedSnapshotChunkFallsBackToAFullPull() async throws {
        #expect(try await llvs("init").status == 0)
        for index in 0..<5 {
            #expect(
                try await llvs("put", "v\(index)", "-", input: Data(repeating: UInt8(index), count: 1000)).status == 0)
        }
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        #expect(try await llvs("push", "home").status == 0)
        #expect(try await llvs("snapshot", "home").status == 0)
        let snapshots = path("remote/snapshots")
        let chunk = try #require(
            FileManager.default.subpaths(atPath: snapshots)?.first { !$0.hasSuffix(".json") && $0.contains("/") })
        var data = try Data(contentsOf: URL(fileURLWithPath: snapshots + "/" + chunk))
        data[data.count / 2] ^= 0xFF
        try data.write(to: URL(fileURLWithPath: snapshots + "/" + chunk))
        let cloned = try await tests.run(["clone", "home", path("clone")])
        #expect(cloned.status == 0, "\(cloned.error)")
        #expect(cloned.error.contains("pulled every version instead"), "\(cloned.error)")
        #expect(cloned.text.contains("Cloned 5 versions"), "\(cloned.text)")
        #expect(try await tests.run(["get", "v4", "--store", path("clone")]).output == Data(repeating: 4, count: 1000))
    }

    /// A damaged manifest costs the snapshot, never the clone: every version is intact, so it is pulled; the next
    /// sync that takes snapshots writes a good manifest in its place.
    @Test(arguments: ["not json at all", "{\"format\": 7}", ""])
    func aDamagedSnapshotManifestFallsBackToAFullPull(manifest: String) async throws {
        #expect(try await llvs("init").status == 0)
        for index in 0..<3 {
            #expect(
                try await llvs("put", "v\(index)", "-", input: Data(repeating: UInt8(index), count: 100)).status == 0)
        }
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        #expect(try await llvs("push", "home").status == 0)
        #expect(try await llvs("snapshot", "home").status == 0)
        try Data(manifest.utf8).write(to: URL(fileURLWithPath: path("remote/snapshots/manifest.json")))
        for attempt in ["clone", "clone-again"] {
            let cloned = try await tests.run(["clone", "home", path(attempt)])
            #expect(cloned.status == 0, "\(cloned.error)")
            #expect(
                cloned.error.contains("pulled every version instead") && cloned.error.contains("manifest.json"),
                "\(cloned.error)")
            #expect(
                try await tests.run(["get", "v2", "--store", path(attempt)]).output == Data(repeating: 2, count: 100))
        }
        let synced = try await llvs("sync", "home")
        #expect(synced.status == 0, "a damaged manifest does not stop a sync: \(synced.error)")
        #expect(try await llvs("snapshot", "home").status == 0)
        let repaired = try await tests.run(["clone", "home", path("clone-after-snapshot")])
        #expect(
            repaired.status == 0 && repaired.text.contains("Restored snapshot"), "\(repaired.text) \(repaired.error)")
    }
}

extension NothingLostTests {
    /// A WebDAV server that trickles every answer: the command stops at its deadline with a clear error.
    @Test(.timeLimit(.minutes(5))) func aCommandEndsAtItsDeadlineWhateverTheServerDoes() async throws {
        let mock = try MockProcess(["webdav", "--faults", "trickle:1"])
        #expect(try await llvs("init").status == 0)
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "slow", mock.url.replacingOccurrences(of: "http://", with: "webdav://")
            ).status == 0)
        // The conformance suite lists folders early; every listing's body comes at 2 bytes a second, so without the
        // deadline the run would take many minutes (and meet the test's time limit). The message says the deadline
        // ended it, which no other ending prints.
        let pulled = try await tests.run(["conformance", "slow"], environment: ["LLVS_DEADLINE": "3"])
        #expect(pulled.status == 1)
        #expect(pulled.error.contains("LLVS_DEADLINE"), "\(pulled.error)")
        let bad = try await tests.run(["log"], environment: ["LLVS_DEADLINE": "soon"])
        #expect(bad.status == 2)
    }
}

extension NothingLostTests {
    /// `llvs clone` killed with SIGKILL part way: running it again resumes it (no "already a store"), and the
    /// temporary files the killed run left in the store are gone after the next run.
    @Test func aKilledCloneResumesAndLeavesNoTemporaries() async throws {
        let mock = try MockProcess(["webdav", "--faults", "latency=100ms"])
        #expect(try await llvs("init").status == 0)
        for index in 0..<24 {
            #expect(
                try await llvs("put", "v\(index)", "-", input: Data(repeating: UInt8(index), count: 20_000)).status == 0
            )
        }
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "home", mock.url.replacingOccurrences(of: "http://", with: "webdav://")
            ).status == 0)
        #expect(try await llvs("push", "home").status == 0)

        let clone = path("clone")
        let process = ChildProcess()
        process.executableURL = CommandLineTests.binary
        process.arguments = ["clone", "home", clone]
        process.environment = ProcessInfo.processInfo.environment.merging(["XDG_CONFIG_HOME": path("config")]) {
            _, new in new
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        // Waits for the clone itself to be under way (its marker, and a version or a download in its store), on this
        // thread: a fixed wait killed a clone that had not started on a loaded machine, or one already done.
        func underWay() -> Bool {
            guard FileManager.default.fileExists(atPath: clone + "/clone-in-progress") else { return false }
            let packs = (try? FileManager.default.contentsOfDirectory(atPath: clone + "/packs")) ?? []
            let temporaries = (try? FileManager.default.contentsOfDirectory(atPath: clone + "/tmp")) ?? []
            return !packs.isEmpty || !temporaries.isEmpty
        }
        try FileEvents.wait(
            in: [clone, clone + "/packs", clone + "/tmp"], until: underWay, while: { process.isRunning })
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(
            process.terminationReason == .uncaughtSignal,
            "the clone finished before it could be killed; slow the mock down")

        let resumed = try await tests.run(["clone", "home", clone])
        #expect(resumed.status == 0, "\(resumed.error)")
        #expect(try await tests.run(["get", "v23", "--store", clone]).output == Data(repeating: 23, count: 20_000))
        #expect(
            try await tests.run(["log", "--json", "--store", clone]).text.components(separatedBy: "\"id\"").count - 1
                == 24)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: clone + "/tmp")) ?? []
        #expect(leftovers.isEmpty, "left behind: \(leftovers)")
        let packTemporaries = ((try? FileManager.default.contentsOfDirectory(atPath: clone + "/packs")) ?? []).filter {
            $0.hasPrefix(".tmp-")
        }
        #expect(packTemporaries.isEmpty, "left behind: \(packTemporaries)")
        #expect(!FileManager.default.fileExists(atPath: clone + "/clone-in-progress"))
        #expect(
            try await tests.run(["clone", "home", clone]).status == 7, "a finished clone is a store like any other")
    }

    /// What killed writers left on a file:// remote goes with the next push (an hour old, its process gone), and an
    /// abandoned snapshot folder with the next snapshot.
    @Test func remoteLeftoversGoWithTheNextPushAndSnapshot() async throws {
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("put", "a", "-", input: Data("1".utf8)).status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        #expect(try await llvs("push", "home").status == 0)
        let old = Date().addingTimeInterval(-7200)
        let stale = path("remote/versions/.tmp-2147483646-00000000-stale")
        try Data("partial".utf8).write(to: URL(fileURLWithPath: stale))
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: stale)
        let fresh = path("remote/versions/.tmp-2147483646-00000000-fresh")
        try Data("being written elsewhere".utf8).write(to: URL(fileURLWithPath: fresh))
        let orphan = path("remote/snapshots/00000000-ORPHAN")
        try FileManager.default.createDirectory(atPath: orphan, withIntermediateDirectories: true)
        try Data("chunk".utf8).write(to: URL(fileURLWithPath: orphan + "/chunk-000"))
        try FileManager.default.setAttributes([.modificationDate: old], ofItemAtPath: orphan)

        #expect(try await llvs("put", "b", "-", input: Data("2".utf8)).status == 0)
        #expect(try await llvs("push", "home").status == 0)
        #expect(!FileManager.default.fileExists(atPath: stale), "a stale temporary stayed")
        #expect(FileManager.default.fileExists(atPath: fresh), "a recent temporary may be another machine's upload")
        #expect(try await llvs("snapshot", "home").status == 0)
        #expect(!FileManager.default.fileExists(atPath: orphan), "the orphan snapshot folder stayed")
        #expect(try await tests.run(["clone", "home", path("clone")]).status == 0)
    }
}

/// Names as the kernel has them: bytes.
enum RawFiles {
    static func cString(_ bytes: [UInt8]) -> [CChar] { bytes.map { CChar(bitPattern: $0) } + [0] }

    static func write(_ path: [UInt8], _ data: Data) {
        let fd = cString(path).withUnsafeBufferPointer { open($0.baseAddress!, O_WRONLY | O_CREAT | O_TRUNC, 0o644) }
        _ = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
        close(fd)
    }

    static func read(_ path: [UInt8]) -> Data? {
        let fd = cString(path).withUnsafeBufferPointer { open($0.baseAddress!, O_RDONLY) }
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var data = Data()
        var buffer = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n <= 0 { break }
            data.append(contentsOf: buffer[0..<n])
        }
        return data
    }

    static func names(_ path: [UInt8]) -> Set<[UInt8]> {
        guard let directory = cString(path).withUnsafeBufferPointer({ opendir($0.baseAddress!) }) else { return [] }
        defer { closedir(directory) }
        var names = Set<[UInt8]>()
        while let entry = readdir(directory) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            if name != [46], name != [46, 46] { names.insert(name) }
        }
        return names
    }
}

extension NothingLostTests {
    /// Names that are not UTF-8 (a Latin-1 `é`, a lone continuation byte, a folder of such) are backed up, synced,
    /// cloned and restored with exactly their bytes; so is a link whose target is not UTF-8.
    @Test func namesThatAreNotUTF8RoundTripExactly() async throws {
        let source = Array(path("source").utf8)
        mkdir(RawFiles.cString(source), 0o755)
        let latin1: [UInt8] = Array("caf".utf8) + [0xE9] + Array(".txt".utf8)
        let lone: [UInt8] = [0x80, 0x41]
        let folder: [UInt8] = Array("dir".utf8) + [0xFF]
        let lookAlike = Array("pua-\u{10FF41}".utf8)  // a real character of the block the encoding uses
        RawFiles.write(source + [47] + latin1, Data("latin".utf8))
        RawFiles.write(source + [47] + lone, Data("lone".utf8))
        RawFiles.write(source + [47] + lookAlike, Data("look-alike".utf8))
        mkdir(RawFiles.cString(source + [47] + folder), 0o755)
        RawFiles.write(source + [47] + folder + [47] + latin1, Data("inside".utf8))
        _ = symlink(
            RawFiles.cString(Array("target-".utf8) + [0xFE]), RawFiles.cString(source + [47] + Array("link".utf8)))

        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        let backup = try await llvs("backup", path("source"), "--to", "home")
        #expect(backup.status == 0, "\(backup.error)")
        #expect(backup.error.isEmpty, "nothing may be skipped: \(backup.error)")
        #expect(try await tests.run(["clone", "home", path("clone")]).status == 0)
        let restored = try await tests.run(["restore", path("restored"), "--store", path("clone")])
        #expect(restored.status == 0, "\(restored.error)")

        let out = Array(path("restored").utf8)
        #expect(RawFiles.names(out) == [latin1, lone, lookAlike, folder, Array("link".utf8)])
        #expect(RawFiles.read(out + [47] + latin1) == Data("latin".utf8))
        #expect(RawFiles.read(out + [47] + lone) == Data("lone".utf8))
        #expect(RawFiles.read(out + [47] + lookAlike) == Data("look-alike".utf8))
        #expect(RawFiles.read(out + [47] + folder + [47] + latin1) == Data("inside".utf8))
        var buffer = [CChar](repeating: 0, count: 256)
        let count = RawFiles.cString(out + [47] + Array("link".utf8)).withUnsafeBufferPointer {
            readlink($0.baseAddress!, &buffer, 255)
        }
        #expect(count > 0 && buffer.prefix(count).map { UInt8(bitPattern: $0) } == Array("target-".utf8) + [0xFE])
        #expect(
            try await llvs("backup", path("source")).text.contains("Nothing changed"),
            "a second backup finds every name again")
    }
}

extension NothingLostTests {
    /// The repro through llvs: two stores, one file:// remote. Both merge the same two heads (a criss-cross),
    /// one removes x, and the other's next sync must not bring x back.
    @Test func aRemovalSurvivesACrissCrossBetweenTwoStores() async throws {
        func one(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
            try await tests.run(arguments + ["--store", path("one")], input: input)
        }
        func two(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
            try await tests.run(arguments + ["--store", path("two")], input: input)
        }
        #expect(try await tests.run(["remote", "add", "--all-stores", "home", "file://" + path("remote")]).status == 0)
        #expect(try await one("init").status == 0)
        #expect(try await one("put", "x", "-", input: Data("1".utf8)).status == 0)
        #expect(try await one("push", "home").status == 0)
        #expect(try await tests.run(["clone", "home", path("two")]).status == 0)
        // B1 is older than A1: each command is a process of its own that starts after the last one ended, so the
        // wall clock has moved on between the two saves without a pause here.
        #expect(try await two("put", "x", "-", input: Data("2".utf8)).status == 0)  // B1, older
        #expect(try await one("put", "y", "-", input: Data("1".utf8)).status == 0)  // A1, newer
        #expect(try await one("push", "home").status == 0)
        #expect(try await two("push", "home").status == 0)
        #expect(try await one("pull", "home").status == 0)  // M1 = A1 + B1
        #expect(try await two("pull", "home").status == 0)  // M2 = B1 + A1
        // The criss-cross happened: two distinct merges of the same two heads, one in each store.
        func current(_ result: CommandLineTests.Result) throws -> [String: Any] {
            let versions = try #require(try JSONSerialization.jsonObject(with: result.output) as? [[String: Any]])
            return try #require(versions.first { $0["current"] as? Bool == true })
        }
        let m1 = try current(try await one("log", "--json")), m2 = try current(try await two("log", "--json"))
        let parents1 = Set(m1["predecessors"] as? [String] ?? []), parents2 = Set(m2["predecessors"] as? [String] ?? [])
        #expect(m1["id"] as? String != m2["id"] as? String, "the two stores merged into one version: no criss-cross")
        #expect(
            parents1.count == 2 && parents1 == parents2,
            "M1 and M2 should both merge A1 and B1: \(parents1) \(parents2)")
        #expect(try await one("rm", "x").status == 0)
        #expect(try await one("sync", "home").status == 0)
        #expect(try await two("sync", "home").status == 0)
        #expect(try await two("get", "x").status == 3, "x came back after the criss-cross")
        #expect(try await one("sync", "home").status == 0)
        #expect(try await one("get", "x").status == 3)
    }
}

extension NothingLostTests {
    /// What a killed process left in the store's `tmp/` (its own temporaries, and the half-written files of the
    /// atomic writers it had open there) is gone after the next command that opens the store; a live process's stay.
    @Test func aKilledProcessLeavesNothingInTheStoresTemporaryFolder() async throws {
        #expect(try await llvs("init").status == 0)
        let gone = try Self.endedProcessID()
        let folder = path(".llvs/tmp")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        let left = [
            "\(gone)-00000000-0000-0000-0000-000000000000-send",
            ".tmp-\(gone)-11111111-1111-1111-1111-111111111111-\(gone)-22222222-2222-2222-2222-222222222222-snapshot",
        ]
        let alive =
            ".tmp-\(getpid())-33333333-3333-3333-3333-333333333333-\(getpid())-44444444-4444-4444-4444-444444444444-snapshot"
        for name in left + [alive] {
            try Data(repeating: 7, count: 1 << 20).write(to: URL(fileURLWithPath: folder + "/" + name))
        }
        #expect(try await llvs("log").status == 0)
        let remaining = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(remaining == [alive], "left behind: \(remaining)")
    }
}

extension NothingLostTests {
    /// The ID of a process that has ended: what names a killed writer's leftovers.
    static func endedProcessID() throws -> pid_t {
        let ended = ChildProcess()
        ended.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        ended.standardOutput = FileHandle.nullDevice
        ended.executableURL = URL(fileURLWithPath: "/bin/true")
        try ended.run()
        ended.waitUntilExit()
        return ended.processIdentifier
    }

    /// This machine's tag in temporary names, computed as `TemporaryWriter` documents it: FNV-1a of the host name.
    static var thisMachineTag: String {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        var hash: UInt32 = 0x811C_9DC5
        for byte in buffer.prefix(while: { $0 != 0 }) { hash = (hash ^ UInt32(UInt8(bitPattern: byte))) &* 0x0100_0193 }
        return String(format: "%08x", hash)
    }

    /// The local file a `llvs conformance` stopped by `LLVS_DEADLINE` (or killed) left in `$TMPDIR` goes with the next
    /// run; a live run's stays.
    @Test func aStoppedConformanceRunsLocalFileGoesWithTheNextRun() async throws {
        let ended = try Self.endedProcessID(), machine = Self.thisMachineTag
        let temporary = path("tmpdir")
        try FileManager.default.createDirectory(atPath: temporary, withIntermediateDirectories: true)
        let left = temporary + "/llvs-conformance-\(ended)@\(machine)-00000000-0000-0000-0000-000000000000"
        let live = temporary + "/llvs-conformance-\(getpid())@\(machine)-11111111-1111-1111-1111-111111111111"
        for file in [left, live] { try Data(repeating: 1, count: 8 << 20).write(to: URL(fileURLWithPath: file)) }
        let run = try await tests.run(["conformance", "file://" + path("remote")], environment: ["TMPDIR": temporary])
        #expect(run.status == 0, "\(run.text) \(run.error)")
        #expect(!FileManager.default.fileExists(atPath: left), "the ended run's file stayed")
        #expect(FileManager.default.fileExists(atPath: live), "a live run's file is its own")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary) == [(live as NSString).lastPathComponent],
            "the run left files")
    }
}

extension NothingLostTests {
    /// A `.tmp-` file a killed `llvs` of this machine left in a file:// remote's folder goes with the next write
    /// there, however recent; one from another machine (the folder may be synced or mounted) waits for the hour.
    @Test func aKilledWritersTemporaryOnALocalRemoteGoesWithTheNextPush() async throws {
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("put", "a", "-", input: Data("1".utf8)).status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        #expect(try await llvs("push", "home").status == 0)
        let ended = try Self.endedProcessID()
        let ours = path("remote/changes/.tmp-\(ended)@\(Self.thisMachineTag)-00000000-0000-0000-0000-000000000000-X")
        let theirs = path("remote/changes/.tmp-\(ended)@0badc0de-00000000-0000-0000-0000-000000000000-Y")
        for file in [ours, theirs] { try Data("partial".utf8).write(to: URL(fileURLWithPath: file)) }
        #expect(try await llvs("put", "b", "-", input: Data("2".utf8)).status == 0)
        #expect(try await llvs("push", "home").status == 0)
        #expect(!FileManager.default.fileExists(atPath: ours), "this machine's dead writer's temporary stayed")
        #expect(
            FileManager.default.fileExists(atPath: theirs), "another machine's recent temporary may still be written")
    }
}

extension NothingLostTests {
    /// `llvs snapshot` killed while its chunks go up to WebDAV: the next exchange with that remote removes the
    /// half-sent snapshot folder at once (its record in the store says a process of this machine sent it and has
    /// ended), where a folder of unknown origin waits an hour in case another device is still sending it.
    @Test func aKilledSnapshotUploadsFolderGoesWithTheNextPush() async throws {
        #expect(try await llvs("init").status == 0)
        var data = Data(count: 12_000_000)
        data.withUnsafeMutableBytes { raw in
            var seed: UInt64 = 7
            for index in raw.bindMemory(to: UInt64.self).indices {
                seed = seed &* 6364136223846793005 &+ 1442695040888963407
                raw.bindMemory(to: UInt64.self)[index] = seed
            }
        }
        #expect(try await llvs("put", "big", "-", input: data).status == 0)
        // Each request waits a second: the upload lasts seconds, whatever else the machine is doing.
        let mock = try MockProcess(["webdav", "--faults", "latency=1000ms"])
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "home", mock.url.replacingOccurrences(of: "http://", with: "webdav://")
            ).status == 0)
        #expect(try await llvs("push", "home").status == 0)

        let process = ChildProcess()
        process.executableURL = CommandLineTests.binary
        process.arguments = ["snapshot", "home"]
        process.currentDirectoryURL = tests.directory
        process.environment = CommandLineTests.cleanEnvironment.merging(["XDG_CONFIG_HOME": path("config")]) { _, new in
            new
        }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let records = path(".llvs/snapshot-uploads")
        func snapshotFolders() throws -> Set<String> { try WebDAVListing.folders(in: mock.url + "snapshots/") }
        // Waits for the upload itself, on this thread (with the whole suite running, the shared task threads can be
        // busy for longer than the upload): its record in the store, then its folder on the remote, each PROPFIND
        // itself a wait of the mock's second.
        func recorded() -> String? {
            ((try? FileManager.default.contentsOfDirectory(atPath: records)) ?? []).first.map {
                String($0.dropLast(".json".count))
            }
        }
        try FileEvents.wait(in: [records], until: { recorded() != nil }, while: { process.isRunning })
        var folder: String?
        while process.isRunning && folder == nil, let id = recorded() {
            if try snapshotFolders().contains(id) { folder = id }
        }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the snapshot finished before it could be killed")
        let abandoned = try #require(folder)

        // Looking is not cleaning: `status` lists the remote and removes nothing.
        #expect(try await llvs("status", "home").status == 0)
        #expect(try snapshotFolders().contains(abandoned), "llvs status removed the abandoned snapshot folder")
        #expect(try await llvs("put", "small", "-", input: Data("x".utf8)).status == 0)
        #expect(try await llvs("push", "home").status == 0)
        #expect(try !snapshotFolders().contains(abandoned), "the abandoned snapshot folder stayed")
        #expect(((try? FileManager.default.contentsOfDirectory(atPath: records)) ?? []).isEmpty)
        #expect(try await tests.run(["clone", "home", path("clone")]).status == 0)
    }
}

/// The folders in a WebDAV collection, by PROPFIND (Depth 1), read off the hrefs: what a remote holds, seen from outside.
enum WebDAVListing {
    struct ListingFailed: Error, CustomStringConvertible {
        var collection: String
        var status: Int32
        var description: String { "PROPFIND \(collection) failed (python exited \(status))" }
    }

    static func folders(in collection: String) throws -> Set<String> {
        let process = ChildProcess()
        process.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", "-c",
            """
            import sys, urllib.request
            request = urllib.request.Request(sys.argv[1], method="PROPFIND", headers={"Depth": "1"})
            try:
                print(urllib.request.urlopen(request).read().decode())
            except urllib.error.HTTPError as error:
                if error.code != 404: raise
            """, collection,
        ]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        // A PROPFIND that failed (not a 404) would read as an empty folder: that proves nothing.
        guard process.terminationStatus == 0 else {
            throw ListingFailed(collection: collection, status: process.terminationStatus)
        }
        let base = URL(string: collection)!.path
        var names = Set<String>()
        for match in text.matches(of: /<(?:[A-Za-z]+:)?href>([^<]*)<\/(?:[A-Za-z]+:)?href>/) {
            let href = String(match.1).removingPercentEncoding ?? String(match.1)
            let path = URL(string: href)?.path ?? href
            guard path.hasPrefix(base), href.hasSuffix("/") else { continue }
            let name = String(path.dropFirst(base.count)).trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            if !name.isEmpty { names.insert(name) }
        }
        return names
    }
}

extension NothingLostTests {
    /// A bulk receive appends its versions to packs of 512, each synced once and then placed. `llvs clone` of a local
    /// remote killed with SIGKILL at points inside the first pack, at its boundary and inside the second: the store
    /// opens each time, holding only whole versions, and running the clone again completes it.
    @Test func aGroupedBulkReceiveKilledAnywhereLeavesAStoreThatOpensAndARerunCompletes() async throws {
        // Far more than the last kill point: a clone of packs is fast, and one that ended first would test nothing.
        let count = 2000
        let helper = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-test-helper")
        #expect(try await llvs("init", "--store", path("source")).status == 0)
        let saving = ChildProcess()
        saving.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        saving.executableURL = helper
        saving.arguments = ["save-loop", path("source"), "v", "\(count)", "16"]
        saving.standardOutput = FileHandle.nullDevice
        try saving.run()
        saving.waitUntilExit()
        #expect(saving.terminationStatus == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "home", "file://" + path("remote")).status == 0)
        #expect(try await tests.run(["push", "home", "--store", path("source")]).status == 0)

        for (run, killAt) in [40, 515, 640].enumerated() {
            let clone = path("clone-\(run)")
            let process = ChildProcess()
            process.executableURL = CommandLineTests.binary
            process.arguments = ["clone", "home", clone]
            process.environment = CommandLineTests.cleanEnvironment.merging(["XDG_CONFIG_HOME": path("config")]) {
                _, new in new
            }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            /// Versions in the clone's packs, placed or still under a temporary name (bundles, each after its length).
            func written() -> Int {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: clone + "/packs")) ?? []
                // A pack placed between the listing and its read is counted under its new name at the next wake.
                let packs = names.compactMap { FileManager.default.contents(atPath: clone + "/packs/" + $0) }
                return packs.reduce(0) { total, data in
                    var offset = 12, count = 0
                    while offset + 8 <= data.count {
                        let length = data[data.startIndex + offset..<data.startIndex + offset + 8].reversed().reduce(0)
                        { $0 << 8 | Int($1) }
                        guard length > 0, offset + 8 + length <= data.count else { break }
                        offset += 8 + length
                        count += 1
                    }
                    return total + count
                }
            }
            try FileEvents.wait(
                in: [clone, clone + "/packs"], until: { written() >= killAt }, while: { process.isRunning },
                alsoOnWrites: true)
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            #expect(
                process.terminationReason == .uncaughtSignal,
                "the clone ended before \(killAt) version files were written")

            let log = try await tests.run(["log", "--json", "--store", clone])
            #expect(log.status == 0, "the killed clone's store does not open: \(log.error)")
            let resumed = try await tests.run(["clone", "home", clone])
            #expect(resumed.status == 0, "\(resumed.error)")
            #expect(
                try await tests.run(["get", "v-\(count - 1)", "--store", clone]).output
                    == Data(repeating: UInt8((count - 1) % 251), count: 16))
            #expect(
                try await tests.run(["log", "--json", "--store", clone]).text.components(separatedBy: "\"id\"").count
                    - 1 == count)
            let hidden = ((try? FileManager.default.contentsOfDirectory(atPath: clone + "/packs")) ?? []).filter {
                $0.hasPrefix(".tmp-")
            }
            #expect(hidden.isEmpty, "temporary packs left behind: \(hidden)")
        }
    }
}

extension NothingLostTests {
    /// The temporaries a WebDAV upload of a large body goes through (`.llvs-uploads/` on the server), in the mock's
    /// saved state.
    func temporaries(in state: String) throws -> [String] {
        let saved =
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: state + "/state.json")))
            as? [String: Any]
        let entries = saved?["entries"] as? [[String: Any]] ?? []
        return entries.compactMap { $0["path"] as? String }.filter {
            $0.contains(".llvs-upload") && $0 != ".llvs-uploads"
        }
    }

    /// A push killed between a large body's PUT and its MOVE leaves the temporary on the server; the next push of
    /// this machine removes it. The mock answers every MOVE and DELETE 503 (a server busy just then), so the push
    /// holds its temporary while it waits to retry and cannot remove it if it gives up first: the temporary is on the
    /// server when the push ends, killed once the trace shows the refused MOVE or, on a starved machine, given up.
    @Test(.timeLimit(.minutes(5))) func aWebDAVUploadKilledBeforeItsMoveLeavesNoTemporaryAfterTheNextPush() async throws
    {
        let state = path("mock-state")
        #expect(try await llvs("init").status == 0)
        // Bytes that do not compress, so the changes file is large enough to be uploaded through a temporary.
        let value = SeededGenerator.bytes(400 << 10, seed: 11)
        #expect(try await llvs("put", "large", "-", input: value).status == 0)
        do {
            let busy = try MockProcess(["webdav", "--state", state, "--faults", "503@MOVE*1000,503@DELETE*1000"])
            #expect(
                try await llvs("remote", "add", "home", busy.url.replacingOccurrences(of: "http://", with: "webdav://"))
                    .status == 0)
            let push = ChildProcess()
            push.executableURL = CommandLineTests.binary
            push.arguments = ["push", "home"]
            push.currentDirectoryURL = tests.directory
            push.environment = CommandLineTests.cleanEnvironment.merging([
                "XDG_CONFIG_HOME": path("config"), "LLVS_HTTP_TRACE": "1",
            ]) { _, new in new }
            let trace = Pipe()
            push.standardOutput = FileHandle.nullDevice
            push.standardError = trace
            try push.run()
            try trace.fileHandleForWriting.close()
            for await line in SyncWatchTests.lines(of: trace)
            where line.hasPrefix("← 503") && line.contains(".llvs-uploads/") {
                kill(push.processIdentifier, SIGKILL)
                break
            }
            push.waitUntilExit()
            #expect(
                push.terminationReason == .uncaughtSignal || push.terminationStatus != 0,
                "the push cannot have succeeded")
        }
        // The server holds the killed push's temporary; a later push (the server no longer busy) removes it.
        let held = try temporaries(in: state)
        #expect(held.count == 1, "\(held)")
        let mock = try MockProcess(["webdav", "--state", state])
        #expect(try await llvs("remote", "remove", "home").status == 0)
        #expect(
            try await llvs("remote", "add", "home", mock.url.replacingOccurrences(of: "http://", with: "webdav://"))
                .status == 0)
        #expect(try await llvs("put", "another large", "-", input: value + Data([1])).status == 0)
        let again = try await llvs("push", "home")
        #expect(again.status == 0, "\(again.error)")
        let after = try temporaries(in: state)
        #expect(after.isEmpty, "left on the server: \(after)")
        withExtendedLifetime(mock) {}
    }
}
