import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs schedule` and what a monitor reads: units that systemd accepts, written where the user's systemd looks,
/// listed and removed; a scheduled run's log lines and exit code; `status --json` with each backup's and each
/// remote's last run and last success. `$LLVS_SYSTEMCTL` is a systemctl that answers no user manager, so the tests
/// never touch the user's own.
extension BackupCommandTests {
    var scheduleEnvironment: [String: String] {
        ["XDG_CONFIG_HOME": path("config"), "LLVS_SYSTEMCTL": "/bin/false"]
    }

    func units() -> String { path("config/systemd/user") }

    static let systemdAnalyze = SearchPath.find("systemd-analyze")

    @Test(.enabled(if: systemdAnalyze != nil || CIEnvironment.requiresEveryTest, "needs systemd-analyze (systemd)"))
    func scheduledJobsAreUnitsSystemdAcceptsAndCanBeRemoved() async throws {
        try write(path("docs/a.txt"), Data("a".utf8))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "offsite", "file://" + path("offsite")).status == 0)
        let environment = scheduleEnvironment
        let backup = try await tests.run(
            ["schedule", "backup", path("docs"), "--to", "offsite", "--forget", "daily=7,weekly=4,within=1m"],
            environment: environment)
        #expect(backup.status == 0, "\(backup.error)")
        #expect(backup.text.contains("No systemd user manager answers here"), "\(backup.text)")
        #expect(backup.text.contains("17 3 * * *"), "a crontab line for daily: \(backup.text)")
        let sync = try await tests.run(["schedule", "sync"], environment: environment)
        #expect(sync.status == 0, "\(sync.error)")

        let files = try FileManager.default.contentsOfDirectory(atPath: units()).sorted()
        #expect(files.count == 3, "\(files)")
        let timer = try #require(files.first { $0.hasSuffix(".timer") })
        #expect(timer.hasPrefix("llvs-backup-docs-"))
        let service = try String(
            contentsOfFile: units() + "/" + timer.replacingOccurrences(of: ".timer", with: ".service"), encoding: .utf8)
        #expect(service.contains("backup \(path("docs")) --store \(path(".llvs")) --to offsite --quiet"), "\(service)")
        #expect(
            service.contains("forget --keep-daily 7 --keep-weekly 4 --keep-within 1m --source \(path("docs")) --prune"))
        let analyze = try #require(Self.systemdAnalyze)
        let verified = try await tests.run(["verify"] + files.map { units() + "/" + $0 }, executable: analyze)
        #expect(verified.status == 0, "\(verified.error)")

        let listed = try await tests.run(["schedule", "list", "--json"], environment: environment)
        let jobs = try #require(try JSONSerialization.jsonObject(with: listed.output) as? [[String: Any]])
        #expect(Set(jobs.compactMap { $0["kind"] as? String }) == ["backup", "sync"])
        #expect(jobs.contains { $0["calendar"] as? String == "daily" })

        // Each command the backup's unit runs, run as the timer runs it: a line when it starts and one when it ends.
        for line in service.split(separator: "\n") where line.hasPrefix("ExecStart=") {
            let words = line.dropFirst("ExecStart=".count).split(separator: " ").map(String.init)
            let ran = try await tests.run(Array(words.dropFirst()), environment: environment)
            #expect(ran.status == 0, "\(ran.error)")
            #expect(ran.text.isEmpty, "a quiet run prints nothing on standard output: \(ran.text)")
            let log = ran.error.split(separator: "\n")
            #expect(log.count == 2 && log[0].hasSuffix(": started"), "\(ran.error)")
        }
        // A run that fails says so and leaves its exit code for the unit.
        try FileManager.default.removeItem(atPath: path("docs"))
        let failed = try await tests.run(
            ["backup", path("docs"), "--store", path(".llvs"), "--quiet"], environment: environment)
        #expect(failed.status == 2 && failed.error.contains("is not a directory"), "\(failed.error)")

        let name = timer.replacingOccurrences(of: ".timer", with: "")
        let typo = try await tests.run(["schedule", "remove", String(name.dropLast())], environment: environment)
        #expect(typo.status == 3 && typo.error.contains("Did you mean \(name)?"), "\(typo.error)")
        #expect(try await tests.run(["schedule", "remove", name], environment: environment).status == 0)
        #expect(try FileManager.default.contentsOfDirectory(atPath: units()).count == 1)

        let wrongCalendar = try await tests.run(
            ["schedule", "backup", path("."), "--on", "whenever"], environment: environment)
        #expect(wrongCalendar.status == 2 && wrongCalendar.error.contains("calendar"), "\(wrongCalendar.error)")
        let wrongPolicy = try await tests.run(
            ["schedule", "backup", path("."), "--forget", "daily=x"], environment: environment)
        #expect(wrongPolicy.status == 2 && wrongPolicy.error.contains("--forget needs"), "\(wrongPolicy.error)")
    }

    /// What a monitor alerts on: per source and per remote, when the last run was, whether it failed and why, and
    /// when one last worked; without asking the remote (`--local`).
    @Test func statusTellsEachBackupsAndRemotesLastRunAndSuccess() async throws {
        try write(path("docs/a.txt"), Data("a".utf8))
        #expect(try await llvs("init").status == 0)
        #expect(try await llvs("remote", "add", "offsite", "file://" + path("offsite")).status == 0)
        #expect(try await llvs("backup", path("docs"), "--to", "offsite").status == 0)
        // The remote becomes a file: the next exchange with it fails.
        try FileManager.default.removeItem(atPath: path("offsite"))
        try write(path("offsite"), Data("not a folder".utf8))
        #expect(try await llvs("push", "offsite").status != 0)
        #expect(try await llvs("backup", path("missing")).status == 2)

        let status = try await llvs("status", "--local", "--json")
        #expect(status.status == 0, "\(status.error)")
        let object = try #require(try JSONSerialization.jsonObject(with: status.output) as? [String: Any])
        let sources = try #require(object["sources"] as? [[String: Any]])
        let docs = try #require(sources.first { $0["name"] as? String == path("docs") })
        #expect(docs["lastBackup"] is String && docs["lastSuccess"] is String && docs["error"] == nil, "\(docs)")
        let remotes = try #require(object["remotes"] as? [[String: Any]])
        let offsite = try #require(remotes.first { $0["name"] as? String == "offsite" })
        #expect(offsite["lastCommand"] as? String == "push", "\(offsite)")
        #expect(offsite["error"] is String && offsite["lastSuccess"] is String, "\(offsite)")
        let lastRun = try #require(offsite["lastRun"] as? String)
        let lastSuccess = try #require(offsite["lastSuccess"] as? String)
        #expect(lastRun >= lastSuccess)
        #expect(object["remoteVersionCount"] == nil, "--local asks no remote")

        let text = try await llvs("status", "--local")
        #expect(text.text.contains("Remote offsite: last push") && text.text.contains("which failed"), "\(text.text)")
    }
}
