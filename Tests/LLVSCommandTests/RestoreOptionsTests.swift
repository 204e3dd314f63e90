import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `restore` and `backup` as a restic user drives them: dry runs, patterns, paths as the file system spells them,
/// JSON events, and a restore straight from a remote.
extension BackupCommandTests {
    /// A small tree: documents, a cache, a nested PDF.
    func documents() throws {
        try write(path("src/docs/report.pdf"), Data("pdf".utf8))
        try write(path("src/docs/notes.txt"), Data("notes".utf8))
        try write(path("src/docs/old/2019.pdf"), Data("old pdf".utf8))
        try write(path("src/cache/blob.bin"), Data(repeating: 7, count: 5000))
        try write(path("src/top.txt"), Data("top".utf8))
    }

    /// The lines of standard output, each a JSON object.
    func events(_ result: CommandLineTests.Result) throws -> [[String: Any]] {
        try result.text.split(separator: "\n").map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
        }
    }

    @Test func aBackupDryRunSaysWhatItWouldReadAndStoresNothing() async throws {
        try documents()
        #expect(try await llvs("init").status == 0)
        let dry = try await llvs("backup", path("src"), "--dry-run", "--exclude", "cache")
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.text.contains("Would back up") && dry.text.contains("4 file(s) to read"), "\(dry.text)")
        #expect(try await llvs("log").text.isEmpty, "a dry run commits nothing")
        #expect(try await llvs("snapshots").text.contains("No backups"))

        #expect(try await llvs("backup", path("src")).status == 0)
        try write(path("src/top.txt"), Data("changed top".utf8))
        let again = try await llvs("backup", path("src"), "-n", "--json")
        #expect(again.status == 0, "\(again.error)")
        let summary = try #require(try events(again).last)
        #expect(summary["type"] as? String == "summary")
        #expect(summary["dryRun"] as? Bool == true)
        #expect(summary["filesRead"] as? Int == 1 && summary["filesUnchanged"] as? Int == 4, "\(summary)")
        #expect(try await llvs("snapshots", "--json").text.components(separatedBy: "\"version\"").count == 2)
    }

    @Test func backupJSONIsOneEventALineEndingInASummary() async throws {
        try documents()
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "home", "file://" + path("remote")).status == 0)
        let backup = try await llvs("backup", path("src"), "--json", "--to", "home")
        #expect(backup.status == 0, "\(backup.error)")
        let lines = try events(backup)
        #expect(lines.dropLast().allSatisfy { $0["type"] as? String == "progress" }, "\(lines)")
        let summary = try #require(lines.last)
        #expect(summary["type"] as? String == "summary" && summary["changed"] as? Bool == true, "\(summary)")
        #expect(summary["files"] as? Int == 5 && summary["sent"] as? Int == 1, "\(summary)")
        let date = try #require(summary["date"] as? String)
        #expect(RFC3339Date.parse(date) != nil, "\(date)")
        // The lines for people went to standard error.
        #expect(backup.error.contains("Backed up"), "\(backup.error)")

        let pushed = try await llvs("push", "--json")
        #expect(try events(pushed).last?["sent"] as? Int == 0)
        let cloned = try await llvs("clone", "home", path("copy"), "--json")
        let clone = try #require(try events(cloned).last)
        #expect(clone["type"] as? String == "summary" && clone["versions"] as? Int == 1, "\(clone)")
        let synced = try await llvs("sync", "--json")
        let sync = try #require(try events(synced).last)
        #expect(sync["retrieved"] as? Int == 0 && sync["version"] is String, "\(sync)")
        let pulled = try await llvs("pull", "--json")
        #expect(try events(pulled).last?["type"] as? String == "summary")
    }

    @Test func restorePatternsDryRunAndPathsAsTheFileSystemSpellsThem() async throws {
        try documents()
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("backup", path("src")).status == 0)

        let dry = try await llvs("restore", path("dry"), "-n", "--include", "*.pdf")
        #expect(dry.status == 0, "\(dry.error)")
        #expect(dry.text.contains("Would restore 4 entries"), "\(dry.text)")
        #expect(!FileManager.default.fileExists(atPath: path("dry")), "a dry run makes nothing")

        #expect(try await llvs("restore", path("pdfs"), "--include", "*.pdf").status == 0)
        #expect(
            try Set(FileManager.default.subpathsOfDirectory(atPath: path("pdfs"))) == [
                "docs", "docs/report.pdf", "docs/old", "docs/old/2019.pdf",
            ])
        // A folder only passed through gets its mode and time too.
        var restoredInfo = stat(), sourceInfo = stat()
        lstat(path("pdfs/docs"), &restoredInfo)
        lstat(path("src/docs"), &sourceInfo)
        #expect(restoredInfo.st_mtim.tv_sec == sourceInfo.st_mtim.tv_sec)
        #expect(restoredInfo.st_mode == sourceInfo.st_mode)

        #expect(try await llvs("restore", path("nocache"), "-e", "/cache", "--exclude", "old/").status == 0)
        #expect(
            try Set(FileManager.default.subpathsOfDirectory(atPath: path("nocache"))) == [
                "docs", "docs/report.pdf", "docs/notes.txt", "top.txt",
            ])

        // An absolute path inside the backed-up directory, as a shell completes it.
        let absolute = try await llvs("restore", path("one"), path("src/docs/notes.txt"))
        #expect(absolute.status == 0, "\(absolute.error)")
        #expect(try String(contentsOfFile: path("one/docs/notes.txt"), encoding: .utf8) == "notes")
        let history = try await llvs("history", path("src/docs/notes.txt"))
        #expect(history.status == 0 && !history.text.isEmpty, "\(history.error)")

        let json = try await llvs("restore", path("all"), "--json")
        let lines = try events(json)
        let summary = try #require(lines.last)
        #expect(summary["type"] as? String == "summary" && summary["entries"] as? Int == 8, "\(summary)")
        let progress = try #require(lines.dropLast().last)
        #expect(progress["entriesDone"] as? Int == 8 && progress["bytesDone"] as? Int == summary["bytes"] as? Int)
        #expect(try snapshot(of: path("all")) == snapshot(of: path("src")))

        let none = try await llvs("restore", path("none"), "--include", "*.doc")
        #expect(none.status == 3 && none.error.contains("patterns"), "\(none.error)")
    }

    /// On a machine with no store: restore straight from the remote's URL; the temporary store is gone after, and so
    /// is one a killed restore left.
    @Test func aRestoreFromARemoteNeedsNoStoreOfItsOwn() async throws {
        try documents()
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "home", "file://" + path("remote")).status == 0)
        #expect(try await llvs("backup", path("src"), "--to", "home").status == 0)

        let temporary = path("tmp")
        // What a killed restore left (its process gone) is removed; a running one's is not.
        let uuid = UUID().uuidString
        let abandoned = "llvs-restore-999999999-\(uuid)", running = "llvs-restore-\(getpid())-\(uuid)"
        for name in [abandoned, running] {
            try FileManager.default.createDirectory(atPath: temporary + "/" + name, withIntermediateDirectories: true)
        }
        let restored = try await tests.run(
            ["restore", path("elsewhere"), "docs", "--from", "file://" + path("remote"), "--store", path("none")],
            environment: ["TMPDIR": temporary])
        #expect(restored.status == 0, "\(restored.error)")
        #expect(try String(contentsOfFile: path("elsewhere/docs/old/2019.pdf"), encoding: .utf8) == "old pdf")
        #expect(!FileManager.default.fileExists(atPath: path("elsewhere/top.txt")))
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary) == [running])
        #expect(!FileManager.default.fileExists(atPath: path("none")))

        // By the remote's name, from the store that has it.
        #expect(try await llvs("restore", path("by-name"), "--from", "home").status == 0)
        #expect(try snapshot(of: path("by-name")) == snapshot(of: path("src")))
    }
}
