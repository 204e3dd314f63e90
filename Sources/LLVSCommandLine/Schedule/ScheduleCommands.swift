import Foundation
import LLVSBackup
import LLVSRetention
import LLVSSupport

/// `llvs schedule …`: backups and syncs that run by themselves, as systemd user units (`ScheduledJob`, `UserUnits`).
enum ScheduleCommands {
    static var group: CommandGroup {
        CommandGroup(
            name: "schedule",
            summary:
                "Run backups on a timer and keep a sync running, as systemd user units (or cron where there is none).",
            subcommands: [
                ScheduleBackupCommand.self, ScheduleSyncCommand.self, ScheduleListCommand.self,
                ScheduleRemoveCommand.self,
            ])
    }

    /// This program's own path, which the units run.
    static var executable: String {
        URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
    }

    /// Writes a job's units and starts them when a user manager answers; otherwise says how to.
    static func install(_ job: ScheduledJob, context: CommandContext) throws {
        let units = UserUnits(environment: context.environment)
        do {
            try FileManager.default.createDirectory(at: units.folder, withIntermediateDirectories: true)
            try Data(job.serviceText.utf8).write(
                to: units.folder.appendingPathComponent(job.serviceFile), options: .atomic)
            if let timer = job.timerText {
                try Data(timer.utf8).write(to: units.folder.appendingPathComponent(job.timerFile), options: .atomic)
            }
        } catch {
            throw CommandError.failed("Cannot write the units into \(units.folder.path): \(error.localizedDescription)")
        }
        context.writeLine("Wrote \(units.folder.appendingPathComponent(job.serviceFile).path)")
        if job.timerText != nil {
            context.writeLine("  and \(units.folder.appendingPathComponent(job.timerFile).path)")
        }
        if units.managerIsRunning {
            units.systemctl(["daemon-reload"])
            guard let enabled = units.systemctl(["enable", "--now", job.enabledUnit]), enabled.status == 0 else {
                throw CommandError.failed(
                    "systemctl --user enable --now \(job.enabledUnit) failed; see `systemctl --user status \(job.enabledUnit)`."
                )
            }
            context.writeLine(
                "Enabled \(job.enabledUnit). Its runs log to the journal: `journalctl --user -u \(job.serviceFile)`.")
        } else {
            context.writeLine("No systemd user manager answers here, so nothing was started. Where one does, run:")
            context.writeLine("  systemctl --user daemon-reload && systemctl --user enable --now \(job.enabledUnit)")
            context.writeLine("  (and `loginctl enable-linger $USER` to keep it running when you are logged out)")
            if let line = job.crontabLine {
                context.writeLine("Or add this line to your crontab (`crontab -e`):")
                context.writeLine("  " + line)
            }
        }
        context.writeLine("`llvs schedule remove \(job.name)` undoes it.")
    }
}

struct ScheduleBackupCommand: Command {
    static let name = "backup"
    static let summary =
        "Back up DIR on a timer (daily unless said), optionally sending it to a remote and forgetting old backups."
    static let arguments = "DIR"
    static let toOption = Option("to", "REMOTE", "send each backup to this remote", .nonEmpty)
    static let nameOption = Option("name", "NAME", "the name the backups are kept under (as backup --name)", .nonEmpty)
    static let dailyOption = Flag("daily", "once a day (the default)")
    static let hourlyOption = Flag("hourly", "once an hour")
    static let onOption = Option(
        "on", "CALENDAR", "when systemd's calendar says, as 'Mon..Fri *-*-* 18:30' (see systemd.time(7))", .nonEmpty)
    static let forgetOption = Option(
        "forget", "POLICY",
        "after each backup, forget (and prune) by a policy: RULE=N,… with last, hourly, daily, weekly, monthly, yearly, and within=DURATION (as daily=7,weekly=4,monthly=12)",
        ValueKind(expected: "RULE=N,… as daily=7,weekly=4,monthly=12") { ScheduleBackupCommand.forgetWords($0) })
    static let options: [any DeclaredOption] = [
        toOption, nameOption, dailyOption, hourlyOption, onOption, forgetOption,
    ]
    static let positionalCount = 1...1
    static let examples = [
        "llvs schedule backup ~/Documents --to offsite --forget daily=7,weekly=4,monthly=12",
        "llvs schedule backup /srv/data --hourly", "llvs schedule backup ~ --on 'Mon..Fri *-*-* 18:30'",
    ]

    let directory: String
    let remote: String?
    let sourceName: String?
    let calendar: String
    let forget: [String]?

    init(_ arguments: ParsedArguments) throws {
        directory = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        remote = arguments[Self.toOption]
        sourceName = arguments[Self.nameOption]
        let chosen = [
            arguments[Self.dailyOption] ? "daily" : nil, arguments[Self.hourlyOption] ? "hourly" : nil,
            arguments[Self.onOption],
        ].compactMap { $0 }
        guard chosen.count <= 1 else { throw CommandError.usage("give one of --daily, --hourly and --on") }
        calendar = chosen.first ?? "daily"
        forget = arguments[Self.forgetOption]
    }

    /// The `llvs forget` options a policy stands for; nil when it is not one.
    static func forgetWords(_ policy: String) -> [String]? {
        let rules = ["last", "hourly", "daily", "weekly", "monthly", "yearly"]
        var words: [String] = []
        var seen = Set<String>()
        for part in policy.split(separator: ",", omittingEmptySubsequences: false) {
            let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
            guard pair.count == 2, !seen.contains(pair[0]) else { return nil }
            seen.insert(pair[0])
            if pair[0] == "within" {
                guard KeepDuration(pair[1]) != nil else { return nil }
                words += ["--keep-within", pair[1]]
            } else {
                guard rules.contains(pair[0]), let count = Int(pair[1]), count >= 0 else { return nil }
                words += ["--keep-\(pair[0])", String(count)]
            }
        }
        return words.isEmpty ? nil : words
    }

    func run(in context: CommandContext) async throws {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandError.usage("\(directory) is not a directory; a scheduled backup takes one")
        }
        try context.requireStore()
        if let remote { _ = try context.remote(remote) }
        if !["daily", "hourly"].contains(calendar),
            let analyze = SearchPath.find("systemd-analyze", environment: context.environment),
            let checked = ChildProcess.output(of: analyze, ["calendar", calendar]), checked.status != 0
        {
            throw CommandError.usage(
                "--on \(calendar) is not a calendar systemd reads (see `systemd-analyze calendar`)")
        }
        let store = context.storePath
        let name = sourceName ?? directory
        var backup = [ScheduleCommands.executable, "backup", directory, "--store", store]
        if let sourceName { backup += ["--name", sourceName] }
        if let remote { backup += ["--to", remote] }
        var commands = [backup + ["--quiet"]]
        if let forget {
            commands.append(
                [ScheduleCommands.executable, "forget"] + forget + [
                    "--source", name, "--prune", "--store", store, "--quiet",
                ])
        }
        let job = ScheduledJob(
            kind: .backup, name: ScheduledJob.name(kind: .backup, about: name, store: store),
            description: "llvs backup of \(directory)" + (remote.map { " to \($0)" } ?? ""), commands: commands,
            calendar: calendar)
        try ScheduleCommands.install(job, context: context)
    }
}

struct ScheduleSyncCommand: Command {
    static let name = "sync"
    static let summary = "Keep the store synced with a remote all the time (`llvs sync --watch` as a service)."
    static let arguments = "[REMOTE]"
    static let positionalCount = 0...1
    static let examples = ["llvs schedule sync", "llvs schedule sync home --store ~/notes/.llvs"]

    let remote: String?
    init(_ arguments: ParsedArguments) throws { remote = arguments.positionals.first }

    func run(in context: CommandContext) async throws {
        try context.requireStore()
        let resolved = try context.remote(remote).name
        let store = context.storePath
        let job = ScheduledJob(
            kind: .sync, name: ScheduledJob.name(kind: .sync, about: resolved, store: store),
            description: "llvs sync of \(store) with \(resolved)",
            commands: [[ScheduleCommands.executable, "sync", resolved, "--watch", "--store", store, "--quiet"]],
            calendar: nil)
        try ScheduleCommands.install(job, context: context)
    }
}

struct ScheduleListCommand: Command {
    static let name = "list"
    static let summary = "List the scheduled jobs: what each runs, when, and whether systemd has it enabled."
    static let arguments = ""
    static let options: [any DeclaredOption] = [CommonOptions.json]

    struct Shown: Encodable {
        var name: String
        var kind: String
        var description: String
        var calendar: String?
        var commands: [String]
        /// systemd's `is-enabled` and `is-active` answers; nil without a user manager.
        var enabled: String?
        var active: String?
    }

    let json: Bool
    init(_ arguments: ParsedArguments) throws { json = arguments[CommonOptions.json] }

    func run(in context: CommandContext) async throws {
        let units = UserUnits(environment: context.environment)
        let manager = units.managerIsRunning
        var shown: [Shown] = []
        for name in try units.jobs() {
            let service = units.text(of: name + ".service") ?? ""
            let timer = units.text(of: name + ".timer")
            func values(_ key: String, in text: String?) -> [String] {
                (text ?? "").split(separator: "\n").compactMap { line in
                    line.hasPrefix(key + "=") ? String(line.dropFirst(key.count + 1)) : nil
                }
            }
            let enabledUnit = timer == nil ? name + ".service" : name + ".timer"
            // Both answers from one call: `UnitFileState=enabled`, `ActiveState=active`.
            let states = manager ? units.systemctl(["show", "--property=UnitFileState,ActiveState", enabledUnit]) : nil
            shown.append(
                Shown(
                    name: name, kind: timer == nil ? "sync" : "backup",
                    description: values("Description", in: service).first ?? "",
                    calendar: values("OnCalendar", in: timer).first, commands: values("ExecStart", in: service),
                    enabled: values("UnitFileState", in: states?.output).first,
                    active: values("ActiveState", in: states?.output).first))
        }
        if json { try context.writeJSON(shown); return }
        guard !shown.isEmpty else {
            context.writeLine("Nothing is scheduled (`llvs schedule backup DIR` or `llvs schedule sync`).")
            return
        }
        for job in shown {
            context.writeLine(
                "\(job.name)  \(job.calendar.map { "[\($0)]" } ?? "[always]")  \(job.description)"
                    + (job.enabled.map { "  (\($0), \(job.active ?? "?"))" } ?? ""))
            for command in job.commands { context.writeLine("    " + command) }
        }
    }
}

struct ScheduleRemoveCommand: Command {
    static let name = "remove"
    static let summary = "Stop a scheduled job and remove its units."
    static let arguments = "NAME"
    static let positionalCount = 1...1

    let name: String
    init(_ arguments: ParsedArguments) throws { name = arguments.positionals[0] }

    func run(in context: CommandContext) async throws {
        let units = UserUnits(environment: context.environment)
        let jobs = try units.jobs()
        guard jobs.contains(name) else {
            let near = LLVSTool.closest(to: name, among: jobs).map { " Did you mean \($0)?" } ?? ""
            throw CommandError.notFound("There is no scheduled job called \(name).\(near) See `llvs schedule list`.")
        }
        let timer = units.folder.appendingPathComponent(name + ".timer")
        let service = units.folder.appendingPathComponent(name + ".service")
        if units.managerIsRunning {
            let enabled = FileManager.default.fileExists(atPath: timer.path) ? timer : service
            units.systemctl(["disable", "--now", enabled.lastPathComponent])
        }
        for file in [timer, service] where FileManager.default.fileExists(atPath: file.path) {
            try FileManager.default.removeItem(at: file)
        }
        if units.managerIsRunning { units.systemctl(["daemon-reload"]) }
        context.writeLine("Removed \(name).")
    }
}
