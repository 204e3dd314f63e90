import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// `llvs`: the command-line tool, over a registry of the kinds of remote it knows. The `llvs` program runs it with
/// `ConnectorRegistry.standard`; a program with a kind of its own runs the same commands with that kind added.
public struct LLVSTool: Sendable {
    public let connectors: ConnectorRegistry

    public init(connectors: ConnectorRegistry = .standard) { self.connectors = connectors }

    /// What the first word names: a command, or a group of them.
    enum Entry {
        case command(any Command.Type)
        case group(CommandGroup)

        var name: String {
            switch self {
            case .command(let command): command.name
            case .group(let group): group.name
            }
        }

        var summary: String {
            switch self {
            case .command(let command): command.summary
            case .group(let group): group.summary
            }
        }
    }

    static var entries: [Entry] {
        [
            .command(InitCommand.self), .command(PutCommand.self), .command(GetCommand.self),
            .command(RemoveCommand.self),
            .command(LogCommand.self), .command(HeadsCommand.self), .command(DiffCommand.self),
            .command(MergeCommand.self),
            .group(RemoteCommands.group), .group(AccountCommands.group),
            .command(SyncCommand.self), .command(PushCommand.self), .command(PullCommand.self),
            .command(StatusCommand.self),
            .command(SnapshotCommand.self), .command(CloneCommand.self), .command(BackupCommand.self),
            .command(RestoreCommand.self),
            .command(HistoryCommand.self), .command(BackupsCommand.self), .command(SnapshotsCommand.self),
            .command(ListCommand.self), .command(DumpCommand.self), .command(FindCommand.self),
            .command(StatsCommand.self), .command(MountCommand.self),
            .command(ForgetCommand.self),
            .command(PruneCommand.self), .command(CheckCommand.self), .command(AuthCommand.self),
            .group(ScheduleCommands.group), .command(ConformanceCommand.self), .command(GenerateCommand.self),
        ]
    }

    func overview() -> String {
        var text =
            "usage: llvs [--store DIR] COMMAND [ARGUMENTS]\n       llvs --version\n\nLLVS for Linux: a versioned store that syncs app data the way Git syncs code.\n\ncommands:\n"
        for entry in Self.entries {
            text += "  " + entry.name.padding(toLength: 12, withPad: " ", startingAt: 0) + entry.summary + "\n"
        }
        text += "\nRun `llvs COMMAND --help` for a command's options.\n"
        text += "\nremote URLs: " + connectors.urlForms + "\n"
        text += "\nenvironment:\n  LLVS_STORE        the store's folder (as --store)\n"
        text +=
            "  LLVS_DEADLINE     seconds any command may take before it stops with an error (default 86400; 0 for none)\n"
        text += "  LLVS_HTTP_TRACE   1 to print every request and answer, credentials redacted\n"
        text += "  LLVS_<KIND>_…     a kind of remote's settings and secrets: see `llvs remote add --help`\n"
        text += "\nexit codes:\n"
        for code in ExitCode.allCases { text += "  \(code.rawValue)  \(code.meaning)\n" }
        return text
    }

    /// Runs the command the words name and exits with its code.
    public func main(_ words: [String] = Array(CommandLine.arguments.dropFirst())) async -> Never {
        OpenSSLLifetime.keepUntilProcessEnds()
        exit(await run(words).rawValue)
    }

    /// The hidden command a token refresh runs in: this same program, in a session of its own, so the refresh
    /// outlives the command that needed it (`DetachedRefresh`).
    static let refreshHelperCommand = "__refresh-token"
    static let refreshHelper = DetachedRefresh(executable: "/proc/self/exe", arguments: [refreshHelperCommand])

    /// Runs the command the words name; returns its exit code.
    func run(_ words: [String]) async -> ExitCode {
        if words == [Self.refreshHelperCommand] { return await DetachedRefresh.serve() == 0 ? .success : .failure }
        if words.first == CompletionScripts.helperCommand {
            await CompletionValues.print(Array(words.dropFirst()), connectors: connectors)
            return .success
        }
        var words = Self.movingLeadingStoreOption(words)
        if words.first == "--version" || words.first == "version" {
            print(ToolVersion.text, terminator: "")
            return .success
        }
        guard let name = words.first, !["--help", "-h", "help"].contains(name) else {
            if words.count > 1, let entry = Self.entries.first(where: { $0.name == words[1] }) {
                print(help(entry, subcommand: words.count > 2 ? words[2] : nil), terminator: "")
            } else {
                print(overview(), terminator: "")
            }
            return words.isEmpty ? .usage : .success
        }
        words.removeFirst()
        guard let entry = Self.entries.first(where: { $0.name == name }) else {
            let suggestion =
                Self.closest(to: name, among: Self.entries.map(\.name)).map { " Did you mean \($0)?" } ?? ""
            TerminalText.warn("unknown command \(name).\(suggestion) Run `llvs --help` for the list.")
            return .usage
        }
        switch entry {
        case .command(let command):
            return await run(command, path: name, words: words)
        case .group(let group):
            guard let sub = words.first, !sub.hasPrefix("-") else {
                print(group.help(connectors: connectors), terminator: "")
                return words.contains("--help") || words.contains("-h") ? .success : .usage
            }
            guard let command = group.subcommands.first(where: { $0.name == sub }) else {
                TerminalText.warn(
                    "unknown command \(name) \(sub); use \(group.subcommands.map { $0.name }.joined(separator: ", ")). Run `llvs \(name) --help`."
                )
                return .usage
            }
            return await run(command, path: name + " " + sub, words: Array(words.dropFirst()))
        }
    }

    /// `--store DIR` given before the command (`llvs --store DIR status`, as git takes `-C`) moved after it, where
    /// every command reads it.
    static func movingLeadingStoreOption(_ words: [String]) -> [String] {
        guard let first = words.first else { return words }
        if first == "--store", words.count >= 3 { return Array(words.dropFirst(2)) + ["--store", words[1]] }
        if first.hasPrefix("--store="), words.count >= 2 { return Array(words.dropFirst()) + [first] }
        return words
    }

    /// The name nearest to a mistyped one (at most two edits away, a swap of neighbours counting as one, and less than
    /// half its length), if one is.
    static func closest(to typed: String, among names: [String]) -> String? {
        func distance(_ a: [Character], _ b: [Character]) -> Int {
            guard !a.isEmpty, !b.isEmpty else { return max(a.count, b.count) }
            var d = [[Int]](repeating: [Int](repeating: 0, count: b.count + 1), count: a.count + 1)
            for i in 0...a.count { d[i][0] = i }
            for j in 0...b.count { d[0][j] = j }
            for i in 1...a.count {
                for j in 1...b.count {
                    let cost = a[i - 1] == b[j - 1] ? 0 : 1
                    d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost)
                    if i > 1, j > 1, a[i - 1] == b[j - 2], a[i - 2] == b[j - 1] {
                        d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
                    }
                }
            }
            return d[a.count][b.count]
        }
        let typedCharacters = Array(typed)
        let scored = names.map { ($0, distance(typedCharacters, Array($0))) }
            .filter { $0.1 <= 2 && $0.1 * 2 < max(typed.count, 2) }
        return scored.min { $0.1 < $1.1 }?.0
    }

    /// Parses the words for one command and runs it; `path` is how it was called (`remote add`).
    private func run(_ command: any Command.Type, path: String, words: [String]) async -> ExitCode {
        if words.contains("--help") || words.contains("-h") {
            print(command.help(path: path, connectors: connectors), terminator: "")
            return .success
        }
        do {
            let arguments = try ParsedArguments(
                words, options: command.options(connectors) + [CommandContext.storeOption])
            guard command.positionalCount.contains(arguments.positionals.count) else {
                throw CommandError.usage(
                    "\(path) takes \(command.arguments.isEmpty ? "no arguments" : command.arguments), not \(arguments.positionals.map { "'\($0)'" }.joined(separator: " "))"
                )
            }
            let context = CommandContext(storeOption: arguments[CommandContext.storeOption], connectors: connectors)
            let made = try command.init(arguments)
            if !made.runsUntilStopped { try Self.startDeadline() }
            try await made.run(in: context)
            return .success
        } catch let error as ConnectorKindError {
            if case .usage(let message) = error {
                TerminalText.warn(message)
                TerminalText.warn("usage: llvs \(path) \(command.arguments) [--store DIR]  (see `llvs \(path) --help`)")
                return .usage
            }
            TerminalText.warn(error.description)
            return .failure
        } catch let error as CommandError {
            if case .usage(let message) = error {
                TerminalText.warn(message)
                TerminalText.warn("usage: llvs \(path) \(command.arguments) [--store DIR]  (see `llvs \(path) --help`)")
                return .usage
            }
            TerminalText.warn(error.description)
            return ExitCode.of(error)
        } catch {
            TerminalText.warn("\(error)")
            return ExitCode.of(error)
        }
    }

    private func help(_ entry: Entry, subcommand: String?) -> String {
        switch entry {
        case .command(let command): command.help(path: command.name, connectors: connectors)
        case .group(let group):
            group.subcommands.first { $0.name == subcommand }.map {
                $0.help(path: "\(group.name) \($0.name)", connectors: connectors)
            }
                ?? group.help(connectors: connectors)
        }
    }

    static func fail(_ message: String, code: ExitCode) -> Never {
        TerminalText.warn(message)
        exit(code.rawValue)
    }

    /// Every command ends in bounded time whatever a server does: past `$LLVS_DEADLINE` seconds (default a day; 0 for
    /// none) it stops with a clear error. What it had stored is whole (every write is atomic), as after a kill.
    static func startDeadline(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        let text = environment["LLVS_DEADLINE"] ?? "86400"
        guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
            throw CommandError.usage("LLVS_DEADLINE must be a number of seconds (0 for none), not \(text)")
        }
        guard seconds > 0 else { return }
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + seconds)
        timer.setEventHandler {
            fail(
                "the command did not finish within \(text) s (LLVS_DEADLINE) and was stopped; what it had stored is whole, run it again to go on.",
                code: .failure)
        }
        timer.resume()
        deadlineTimer = timer
    }
}

/// The deadline's timer, kept alive for the life of the process.
/// Written once, before any command runs, and never read.
nonisolated(unsafe) private var deadlineTimer: (any DispatchSourceTimer)?
