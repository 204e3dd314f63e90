import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// A restic user's day with llvs, one command after another, as a script would run them: back up with excludes,
/// list the backups, browse one, compare two, find a file, print one, restore one path from the remote on another
/// machine, plan a forget, and a backup stopped by Ctrl-C that the next run finishes.
extension BackupCommandTests {
    @Test func aResticUsersDay() async throws {
        try write(path("home/docs/plan.md"), Data("# plan\n".utf8))
        try write(path("home/docs/budget.csv"), Data("a,b\n1,2\n".utf8))
        try write(path("home/photos/cat.jpg"), SeededGenerator.bytes(200_000, seed: 1))
        try write(path("home/.cache/thumbs.db"), SeededGenerator.bytes(50_000, seed: 2))
        try write(path("home/build/out.o"), SeededGenerator.bytes(10_000, seed: 3))
        try write(path("home/.cache/CACHEDIR.TAG"), Data("Signature: 8a477f597d28d172789f06886806bc55\n".utf8))
        try write(path("excludes.txt"), Data("# build output\n/build\n".utf8))

        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "offsite", "file://" + path("offsite")).status == 0)
        let first = try await llvs(
            "backup", path("home"), "--name", "home", "--exclude-caches", "--exclude-file", path("excludes.txt"),
            "--to", "offsite")
        #expect(first.status == 0, "\(first.error)")
        let firstVersion = String(try #require(first.text.firstMatch(of: /as version ([0-9A-F-]+):/)?.1))

        // A day's work: one file changed, one added, one removed. The exclusions are remembered.
        try write(path("home/docs/plan.md"), Data("# plan\n- ship it\n".utf8))
        try write(path("home/docs/letter.txt"), Data("Dear restic,\n".utf8))
        try FileManager.default.removeItem(atPath: path("home/docs/budget.csv"))
        let second = try await llvs("backup", path("home"), "--name", "home", "--to", "offsite")
        #expect(second.status == 0, "\(second.error)")
        let secondVersion = String(try #require(second.text.firstMatch(of: /as version ([0-9A-F-]+):/)?.1))

        let snapshots = try await llvs("snapshots")
        #expect(snapshots.text.contains(firstVersion) && snapshots.text.contains(secondVersion), "\(snapshots.text)")

        let listed = try await llvs("ls", "latest", "--long")
        #expect(listed.status == 0, "\(listed.error)")
        #expect(listed.text.contains("letter.txt") && listed.text.contains("cat.jpg"), "\(listed.text)")
        #expect(!listed.text.contains("thumbs.db") && !listed.text.contains("out.o"), "\(listed.text)")

        let diff = try await llvs("diff", firstVersion, secondVersion)
        #expect(diff.status == 0, "\(diff.error)")
        for expected in ["+ /docs/letter.txt", "- /docs/budget.csv", "M /docs/plan.md"] {
            #expect(diff.text.contains(expected), "\(expected) in \(diff.text)")
        }

        let found = try await llvs("find", "*.csv")
        #expect(found.text.contains("budget.csv") && found.text.contains(firstVersion), "\(found.text)")

        let dumped = try await llvs("dump", firstVersion, "docs/plan.md")
        #expect(dumped.text == "# plan\n")

        // Another machine, no store: one folder of the latest backup, straight from the remote.
        let elsewhere = try await tests.run([
            "restore", path("laptop"), path("home/docs"), "--from", "file://" + path("offsite"), "--source", "home",
            "--store", path("no-store"),
        ])
        #expect(elsewhere.status == 0, "\(elsewhere.error)")
        #expect(try snapshot(of: path("laptop/docs")) == snapshot(of: path("home/docs")))
        #expect(!FileManager.default.fileExists(atPath: path("laptop/photos")))

        let plan = try await llvs("forget", "--keep-last", "1", "-n")
        #expect(plan.status == 0 && plan.text.contains("keep 1, remove 1"), "\(plan.text)")
        #expect(try await llvs("snapshots").text.contains(firstVersion), "a dry run forgets nothing")

        // A large addition, stopped by Ctrl-C after its first checkpoint; the next run finishes it.
        for index in 0..<30 {
            try write(path("home/video/part\(index).bin"), SeededGenerator.bytes(1 << 20, seed: UInt64(100 + index)))
        }
        let versions = path(".llvs/versions")
        func count() -> Int { (try? FileManager.default.subpathsOfDirectory(atPath: versions).count) ?? 0 }
        let before = count()
        let process = try startLLVS(["backup", path("home"), "--name", "home", "--checkpoint-every", "2"])
        try FileEvents.wait(in: [versions], until: { count() > before }, while: { process.isRunning })
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationReason == .exit && process.terminationStatus == 130)
        let resumed = try await llvs("backup", path("home"), "--name", "home")
        #expect(resumed.status == 0, "\(resumed.error)")
        #expect(try await llvs("restore", path("restored"), "--source", "home").status == 0)
        #expect(try snapshot(of: path("restored/video")) == snapshot(of: path("home/video")))
        #expect(try snapshot(of: path("restored/docs")) == snapshot(of: path("home/docs")))
        #expect(try await llvs("check").status == 0)
    }
}
