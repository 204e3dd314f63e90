import Foundation
import LLVSSupport

/// The systemd user units of this user (`$XDG_CONFIG_HOME/systemd/user`, else `~/.config/systemd/user`), and the user
/// manager that runs them when there is one (`systemctl --user`). Without one (a container, a machine without
/// systemd, a session over ssh without lingering) the units are still written and the commands to enable them are
/// printed, with a crontab line where cron can say the same.
struct UserUnits {
    let folder: URL
    let environment: [String: String]

    init(environment: [String: String]) {
        self.environment = environment
        let configuration =
            environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
        folder = configuration.appendingPathComponent("systemd/user")
    }

    /// `systemctl --user` words → its status and output; nil when there is no systemctl or no user manager.
    @discardableResult
    func systemctl(_ words: [String]) -> (status: Int32, output: String)? {
        // $LLVS_SYSTEMCTL: another systemctl (tests give one that answers no manager, so they never touch the
        // user's own).
        let chosen = environment["LLVS_SYSTEMCTL"].map { URL(fileURLWithPath: $0) }
        guard let systemctl = chosen ?? SearchPath.find("systemctl", environment: environment) else { return nil }
        return ChildProcess.output(of: systemctl, ["--user"] + words)
    }

    /// Whether a user manager answers.
    var managerIsRunning: Bool { systemctl(["show-environment"])?.status == 0 }

    /// The jobs whose units are in the folder, by name.
    func jobs() throws -> [String] {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        return Set(
            names.filter {
                $0.hasPrefix(ScheduledJob.unitPrefix) && ($0.hasSuffix(".service") || $0.hasSuffix(".timer"))
            }
            .compactMap { file in file.lastIndex(of: ".").map { String(file[..<$0]) } }
        ).sorted()
    }

    func text(of file: String) -> String? {
        try? String(contentsOf: folder.appendingPathComponent(file), encoding: .utf8)
    }
}
