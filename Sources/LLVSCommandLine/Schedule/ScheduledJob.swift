import Foundation
import LLVSSupport

/// One job `llvs schedule` sets up, as systemd user units: a backup (a oneshot service and the timer that starts it)
/// or a sync (a service running `llvs sync --watch`, restarted when it fails). The units name the full path of this
/// `llvs` and of the store, so they run the same from any folder, and the job's own command line, so `schedule list`
/// can show it. Runs log to the journal through standard error (`--quiet`: a line when a run starts and one when it
/// ends, with its figures), and a failed run leaves the unit failed with llvs's exit code, for a monitor.
struct ScheduledJob: Equatable {
    enum Kind: String { case backup, sync }

    var kind: Kind
    /// The unit's base name: `llvs-backup-documents-3f2a9c41`.
    var name: String
    var description: String
    /// The commands the service runs, in order (a backup's forget comes after it), each as words.
    var commands: [[String]]
    /// systemd's calendar expression for a backup (`daily`, `hourly`, `Mon *-*-* 03:00`); nil for a sync.
    var calendar: String?

    static let unitPrefix = "llvs-"

    /// A name systemd takes and a person recognizes: the kind, the last part of what it is about, and a short hash
    /// of the whole (two folders called `docs` get two jobs).
    static func name(kind: Kind, about: String, store: String) -> String {
        let readable = (about.split(separator: "/").last.map(String.init) ?? kind.rawValue)
            .lowercased().map { $0.isLetter && $0.isASCII || $0.isNumber && $0.isASCII ? String($0) : "-" }.joined()
            .split(separator: "-").joined(separator: "-")
        let hash = SHA256.hex(Data((about + "\u{0}" + store).utf8)).prefix(8)
        return "\(unitPrefix)\(kind.rawValue)-\(readable.isEmpty ? kind.rawValue : String(readable.prefix(40)))-\(hash)"
    }

    var serviceFile: String { name + ".service" }
    var timerFile: String { name + ".timer" }
    /// What is enabled: the timer of a backup, the service of a sync.
    var enabledUnit: String { kind == .backup ? timerFile : serviceFile }

    var serviceText: String {
        // No `Documentation=man:…`: `systemd-analyze verify` fails a unit whose page is not installed.
        var text = "[Unit]\nDescription=\(description)\n"
        if kind == .sync { text += "After=network-online.target\nWants=network-online.target\n" }
        text += "\n[Service]\n"
        switch kind {
        case .backup:
            text += "Type=oneshot\n"
            // A backup is background work: it yields the processor and the disk to what the user is doing.
            text += "Nice=10\nIOSchedulingClass=idle\n"
        case .sync:
            text += "Type=simple\nRestart=on-failure\nRestartSec=30\n"
        }
        for command in commands { text += "ExecStart=" + command.map(Self.unitQuoted).joined(separator: " ") + "\n" }
        if kind == .sync { text += "\n[Install]\nWantedBy=default.target\n" }
        return text
    }

    var timerText: String? {
        guard let calendar else { return nil }
        return "[Unit]\nDescription=\(description) (\(calendar))\n\n[Timer]\nOnCalendar=\(calendar)\n"
            + "Persistent=true\nRandomizedDelaySec=\(calendar == "hourly" ? "5min" : "15min")\n"
            + "\n[Install]\nWantedBy=timers.target\n"
    }

    /// A crontab line that runs the same, for machines without systemd's user manager; nil for a calendar cron
    /// cannot say (or a sync, which runs all the time).
    var crontabLine: String? {
        let schedule: String
        switch calendar {
        case "hourly": schedule = "17 * * * *"
        case "daily": schedule = "17 3 * * *"
        case "weekly": schedule = "17 3 * * 1"
        case "monthly": schedule = "17 3 1 * *"
        default: return nil
        }
        return schedule + " "
            + commands.map { $0.map(ShellWord.quotedIfNeeded).joined(separator: " ") }.joined(separator: " && ")
    }

    /// An argument as a unit file's command line takes it: quoted when it holds a space or a quote, `%` doubled
    /// (systemd expands specifiers), `$` doubled (it expands variables).
    static func unitQuoted(_ word: String) -> String {
        var escaped = word.replacingOccurrences(of: "%", with: "%%").replacingOccurrences(of: "$", with: "$$")
        if escaped.contains(where: { $0 == " " || $0 == "\"" || $0 == "'" || $0 == "\\" || $0 == ";" })
            || escaped.isEmpty
        {
            escaped =
                "\"" + escaped.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
                + "\""
        }
        return escaped
    }
}
