import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

@testable import LLVSCommandLine

/// The habits people bring from git and restic: `--version`, short options, dates as they write them, exit codes a
/// script can rely on, Ctrl-C, `push -u`, working inside a clone, and merges that say what they decided.
extension BackupCommandTests {
    @Test func versionIsPrinted() async throws {
        for words in [["--version"], ["version"]] {
            let shown = try await tests.run(words)
            #expect(shown.status == 0)
            #expect(shown.text.hasPrefix("llvs "), "\(shown.text)")
            #expect(shown.text.contains("store format"), "\(shown.text)")
        }
    }

    /// Each backup command's help lists its options and shows how it is used.
    @Test func everyBackupCommandsHelpHasOptionsAndExamples() async throws {
        for command in [
            "backup", "restore", "snapshots", "ls", "dump", "find", "diff", "history", "stats", "forget", "prune",
            "check", "mount", "generate",
        ] {
            let help = try await tests.run([command, "--help"])
            #expect(help.status == 0, "\(command)")
            #expect(
                help.text.contains("options:") && help.text.contains("examples:\n  llvs \(command)"), "\(help.text)")
        }
    }

    @Test func shortOptionsStandForTheirLongForms() async throws {
        try write(path("src/kept.txt"), Data("kept".utf8))
        try write(path("src/skipped.tmp"), Data("skipped".utf8))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", path("src"), "-e", "*.tmp").status == 0)
        let listed = try await llvs("ls", "latest")
        #expect(listed.text.contains("kept.txt") && !listed.text.contains("skipped.tmp"), "\(listed.text)")
        let dry = try await llvs("forget", "-n", "--keep-last", "1")
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.text.contains("--dry-run"), "\(dry.text)")
        let help = try await llvs("forget", "--help")
        #expect(help.text.contains("-n, --dry-run"), "\(help.text)")
        let unknown = try await llvs("forget", "-z", "--keep-last", "1")
        #expect(unknown.status == 2 && unknown.error.contains("unknown option"), "\(unknown.error)")
    }

    @Test func momentsAreReadAsPeopleWriteThem() throws {
        let utc = try #require(TimeZone(identifier: "UTC"))
        let now = try #require(RFC3339Date.parse("2026-12-06T12:00:00Z"))
        #expect(MomentText.parse("2026-12-06T10:00:00Z", now: now, timeZone: utc) == now.addingTimeInterval(-7200))
        #expect(MomentText.parse("2026-12-06", now: now, timeZone: utc) == now.addingTimeInterval(-43200))
        #expect(MomentText.parse("2026-12-06T11:30", now: now, timeZone: utc) == now.addingTimeInterval(-1800))
        #expect(MomentText.parse("3d", now: now, timeZone: utc) == now.addingTimeInterval(-3 * 86400))
        #expect(MomentText.parse("12h", now: now, timeZone: utc) == now.addingTimeInterval(-12 * 3600))
        for wrong in ["", "yesterday", "2026-13-01", "2026-02-30", "3", "3x", "12/06/2026"] {
            #expect(MomentText.parse(wrong, now: now, timeZone: utc) == nil, "\(wrong)")
        }
    }

    @Test func beforeTakesADayOrASpan() async throws {
        try write(path("src/file.txt"), Data("one".utf8))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", path("src")).status == 0)
        let tomorrow = Date().addingTimeInterval(2 * 86400).formatted(.iso8601.year().month().day())
        let restored = try await llvs("restore", path("out"), "--before", tomorrow)
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try String(contentsOfFile: path("out/file.txt"), encoding: .utf8) == "one")
        let tooEarly = try await llvs("restore", path("out-2"), "--before", "3d")
        #expect(tooEarly.status == 3 && tooEarly.error.contains("No version was saved before"), "\(tooEarly.error)")
        let wrong = try await llvs("restore", path("out-3"), "--before", "last tuesday")
        #expect(wrong.status == 2 && wrong.error.contains("--before needs"), "\(wrong.error)")
    }

    /// Exit 3 means "no such thing" and nothing else, so a script can tell "not there" from "went wrong".
    @Test func exitThreeOnlyForWhatIsNotThere() async throws {
        #expect(try await llvs("init").status == 0)
        let emptyRestore = try await llvs("restore", path("out"))
        #expect(emptyRestore.status == 1 && emptyRestore.error.contains("empty"), "\(emptyRestore.error)")
        let emptyHistory = try await llvs("history", "some/file")
        #expect(emptyHistory.status == 1, "\(emptyHistory.error)")
        #expect(try await llvs("get", "no-such-value").status == 3)
        let unreadable = try await llvs("put", "id", path("no-such-file"))
        #expect(unreadable.status == 1 && unreadable.error.contains("Cannot read"), "\(unreadable.error)")
        let notADirectory = try await llvs("backup", path("no-such-folder"))
        #expect(notADirectory.status == 2, "\(notADirectory.error)")
        #expect(try await llvs("sync", "no-such-remote").status == 3)
    }

    /// Ctrl-C in the middle of a backup says the next run resumes and exits 130; the next run finishes the backup.
    @Test func ctrlCDuringABackupSaysTheNextRunResumes() async throws {
        for index in 0..<40 {
            try write(path("src/file\(index).bin"), SeededGenerator.bytes(1 << 20, seed: UInt64(index + 1)))
        }
        #expect(try await llvs("init").status == 0)
        let errors = path("backup.err")
        let process = try startLLVS(["backup", path("src"), "--checkpoint-every", "2"], errors: errors)
        let versions = path(".llvs/versions")
        func committed() -> Int {
            ((try? FileManager.default.subpathsOfDirectory(atPath: versions)) ?? []).filter {
                $0.hasSuffix(".json") || !$0.contains(".")
            }.count
        }
        try FileEvents.wait(in: [versions], until: { committed() >= 1 }, while: { process.isRunning })
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit, "the backup ended before it was interrupted")
        #expect(process.terminationStatus == 130)
        let told = try String(contentsOfFile: errors, encoding: .utf8)
        #expect(told.contains("interrupted") && told.contains("resumes"), "\(told)")

        let resumed = try await llvs("backup", path("src"))
        #expect(resumed.status == 0, "\(resumed.error)")
        #expect(try await llvs("restore", path("out")).status == 0)
        #expect(try snapshot(of: path("out")) == snapshot(of: path("src")))
    }

    /// As git moves upstream only with `-u`: a push or pull naming a remote leaves the default alone.
    @Test func pushAndPullOfANamedRemoteKeepTheDefault() async throws {
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("put", "a", "-", input: Data("1".utf8)).status == 0)
        #expect(try await llvs("remote", "add", "main", "file://" + path("main")).status == 0)
        #expect(try await llvs("remote", "add", "spare", "file://" + path("spare")).status == 0)
        #expect(try await llvs("push", "main").status == 0)
        #expect(try await llvs("push", "spare").status == 0)
        #expect(try await llvs("pull", "spare").status == 0)
        #expect(try String(contentsOfFile: path(".llvs/last-remote"), encoding: .utf8) == "main\n")
        #expect(try await llvs("push", "-u", "spare").status == 0)
        #expect(try String(contentsOfFile: path(".llvs/last-remote"), encoding: .utf8) == "spare\n")
        // A mistyped remote name gets a suggestion, in every command that names a remote.
        let typo = try await llvs("push", "spaer")
        #expect(typo.status == 3 && typo.error.contains("Did you mean spare?"), "\(typo.error)")
        let removeTypo = try await llvs("remote", "remove", "mian")
        #expect(removeTypo.status == 3 && removeTypo.error.contains("Did you mean main?"), "\(removeTypo.error)")
    }

    @Test func statusWorksInsideAClone() async throws {
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("put", "a", "-", input: Data("1".utf8)).status == 0)
        #expect(try await llvs("remote", "add", "main", "file://" + path("main")).status == 0)
        #expect(try await llvs("push", "main").status == 0)
        #expect(try await tests.run(["clone", "file://" + path("main"), path("copy")]).status == 0)
        let status = try await tests.run(["status"], in: URL(fileURLWithPath: path("copy")))
        #expect(status.status == 0, "\(status.error)")
        #expect(status.text.contains("Store \(path("copy"))"), "\(status.text)")
        let value = try await tests.run(["get", "a"], in: URL(fileURLWithPath: path("copy")))
        #expect(value.text == "1")
    }

    @Test func reusingANameForAnotherDirectoryIsRefusedUnlessForced() async throws {
        try write(path("one/a.txt"), Data("a".utf8))
        try write(path("two/b.txt"), Data("b".utf8))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", path("one"), "--name", "docs").status == 0)
        let refused = try await llvs("backup", path("two"), "--name", "docs")
        #expect(refused.status == 2, "\(refused.error)")
        #expect(refused.error.contains(path("one")) && refused.error.contains("--force"), "\(refused.error)")
        #expect(try await llvs("ls", "latest", "--source", "docs").text.contains("a.txt"))
        let forced = try await llvs("backup", path("two"), "--name", "docs", "--force")
        #expect(forced.status == 0, "\(forced.error)")
        #expect(try await llvs("ls", "latest", "--source", "docs").text.contains("b.txt"))
    }

    /// A sync that merged a value changed on both sides names it, says whose value was kept and how to get the other.
    @Test func aSyncTellsWhichConflictingValuesItDecided() async throws {
        let here = path("here"), there = path("there")
        #expect(try await llvs("init", "--store", here).status == 0)
        #expect(try await llvs("put", "note", "-", "--store", here, input: Data("one".utf8)).status == 0)
        #expect(try await llvs("remote", "add", "home", "file://" + path("home"), "--store", here).status == 0)
        #expect(try await llvs("push", "home", "--store", here).status == 0)
        #expect(try await tests.run(["clone", "file://" + path("home"), there]).status == 0)
        #expect(try await llvs("put", "note", "-", "--store", there, input: Data("theirs".utf8)).status == 0)
        #expect(try await llvs("push", "--store", there).status == 0)
        #expect(try await llvs("put", "note", "-", "--store", here, input: Data("mine".utf8)).status == 0)
        let synced = try await llvs("sync", "home", "--store", here)
        #expect(synced.status == 0, "\(synced.error)")
        #expect(synced.text.contains("1 value was changed on both sides"), "\(synced.text)")
        #expect(synced.text.contains("note: kept this store's value"), "\(synced.text)")
        #expect(synced.text.contains("--arbiter branch"), "\(synced.text)")
        // The version it names holds the other value.
        let other = try #require(synced.text.firstMatch(of: /the other is at version ([0-9A-F-]+)/)?.1)
        let got = try await llvs("get", "note", "--at", String(other), "--store", here)
        #expect(got.text == "theirs")
        // Nothing conflicted the second time: nothing is told.
        let again = try await llvs("sync", "home", "--store", here)
        #expect(!again.text.contains("both sides"), "\(again.text)")
    }
}
