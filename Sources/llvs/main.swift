import Foundation
import LLVS

/// `llvs`: the command-line tool. Each subcommand is a small type in Commands/.
let commands: [any Command.Type] = [
    InitCommand.self, PutCommand.self, GetCommand.self, RemoveCommand.self,
    LogCommand.self, HeadsCommand.self, DiffCommand.self, MergeCommand.self,
    RemoteCommand.self, SyncCommand.self, PushCommand.self, PullCommand.self, StatusCommand.self,
    SnapshotCommand.self, CloneCommand.self, BackupCommand.self, RestoreCommand.self, HistoryCommand.self,
    AuthCommand.self, ConformanceCommand.self,
]

@MainActor func overview() -> String {
    var text = "usage: llvs COMMAND [ARGUMENTS] [--store DIR]\n\nLLVS for Linux: a versioned store that syncs app data the way Git syncs code.\n\ncommands:\n"
    for command in commands {
        text += "  " + command.name.padding(toLength: 12, withPad: " ", startingAt: 0) + command.summary + "\n"
    }
    text += "\nRun `llvs COMMAND --help` for a command's options.\n"
    text += "\nenvironment:\n  LLVS_STORE        the store's folder (as --store)\n"
    text += "  LLVS_DEADLINE     seconds any command may take before it stops with an error (default 86400; 0 for none)\n"
    text += "  LLVS_HTTP_TRACE   1 to print every request and answer, credentials redacted\n"
    text += "\nexit codes:\n"
    for code in ExitCode.allCases { text += "  \(code.rawValue)  \(code.meaning)\n" }
    return text
}

func fail(_ message: String, code: ExitCode) -> Never {
    TerminalText.warn(message)
    exit(code.rawValue)
}

var words = Array(CommandLine.arguments.dropFirst())
guard let name = words.first, !["--help", "-h", "help"].contains(name) else {
    if words.count > 1, let command = commands.first(where: { $0.name == words[1] }) {
        print(command.help, terminator: "")
    } else {
        print(overview(), terminator: "")
    }
    exit(words.isEmpty ? ExitCode.usage.rawValue : 0)
}
words.removeFirst()
guard let command = commands.first(where: { $0.name == name }) else {
    fail("unknown command \(name). Run `llvs --help` for the list.", code: .usage)
}
if words.contains("--help") || words.contains("-h") {
    print(command.help, terminator: "")
    exit(0)
}

/// Every command ends in bounded time whatever a server does: past `$LLVS_DEADLINE` seconds (default a day; 0 for
/// none) it stops with a clear error. What it had stored is whole (every write is atomic), as after a kill.
func startDeadline(_ environment: [String: String] = ProcessInfo.processInfo.environment) throws {
    let text = environment["LLVS_DEADLINE"] ?? "86400"
    guard let seconds = Double(text), seconds >= 0, seconds.isFinite else {
        throw CommandError.usage("LLVS_DEADLINE must be a number of seconds (0 for none), not \(text)")
    }
    guard seconds > 0 else { return }
    let timer = DispatchSource.makeTimerSource(queue: .global())
    timer.schedule(deadline: .now() + seconds)
    timer.setEventHandler {
        fail("the command did not finish within \(text) s (LLVS_DEADLINE) and was stopped; what it had stored is whole, run it again to go on.", code: .failure)
    }
    timer.resume()
    deadlineTimer = timer
}
nonisolated(unsafe) var deadlineTimer: (any DispatchSourceTimer)?

do {
    try startDeadline()
    let arguments = try ParsedArguments(words, specs: command.options + [CommandContext.storeOption])
    guard command.positionalCount.contains(arguments.positionals.count) else {
        throw CommandError.usage("\(name) takes \(command.arguments.isEmpty ? "no arguments" : command.arguments), not \(arguments.positionals.map { "'\($0)'" }.joined(separator: " "))")
    }
    let context = CommandContext(storeOption: arguments.value("store"))
    try await command.init(arguments).run(in: context)
} catch let error as CommandError {
    if case .usage(let message) = error {
        TerminalText.warn(message)
        fail("usage: llvs \(name) \(command.arguments) [--store DIR]  (see `llvs \(name) --help`)", code: .usage)
    }
    fail(error.description, code: ExitCode.of(error))
} catch {
    fail("\(error)", code: ExitCode.of(error))
}
