import Foundation
import LLVSSupport
import LLVSHTTP
import LLVS
import LLVSSQLite

/// One `llvs` command: its name, help and options beside each other, and what it does.
protocol Command {
    static var name: String { get }
    static var summary: String { get }
    /// The arguments after the command name, as shown in help (`ID FILE|-`).
    static var arguments: String { get }
    static var options: [any DeclaredOption] { get }
    /// The options, where they depend on the kinds of remote the tool knows (`remote add`); the fixed ones otherwise.
    static func options(_ connectors: ConnectorRegistry) -> [any DeclaredOption]
    /// Help after the option list, where it depends on the kinds of remote (each kind's options and environment).
    static func moreHelp(_ connectors: ConnectorRegistry) -> String
    /// How many positional arguments the command takes.
    static var positionalCount: ClosedRange<Int> { get }
    /// Command lines shown at the end of its help, each a use people reach for first.
    static var examples: [String] { get }

    /// Whether it runs until it is stopped (`sync --watch`, `mount`), so `$LLVS_DEADLINE` does not apply.
    var runsUntilStopped: Bool { get }

    init(_ arguments: ParsedArguments) throws
    func run(in context: CommandContext) async throws
}

extension Command {
    static var options: [any DeclaredOption] { [] }
    static func options(_ connectors: ConnectorRegistry) -> [any DeclaredOption] { options }
    static func moreHelp(_ connectors: ConnectorRegistry) -> String { "" }
    static var examples: [String] { [] }
    static var positionalCount: ClosedRange<Int> { 0...0 }
    var runsUntilStopped: Bool { false }

    /// `path` is how the command is called (`remote add`).
    static func help(path: String, connectors: ConnectorRegistry) -> String {
        var text = "usage: llvs \(path)\(arguments.isEmpty ? "" : " " + arguments) [--store DIR]\n\n\(summary)\n"
        text += "\noptions:\n" + OptionSpec.helpLines((options(connectors) + [CommandContext.storeOption]).map(\.spec))
        text += moreHelp(connectors)
        if !examples.isEmpty { text += "\nexamples:\n" + examples.map { "  " + $0 + "\n" }.joined() }
        return text
    }
}

/// Commands under one name (`llvs remote add`, `llvs remote list`, …).
struct CommandGroup {
    let name: String
    let summary: String
    let subcommands: [any Command.Type]

    func help(connectors: ConnectorRegistry) -> String {
        var text = "usage: llvs \(name) COMMAND [ARGUMENTS] [--store DIR]\n\n\(summary)\n\ncommands:\n"
        for command in subcommands {
            text +=
                "  " + "\(command.name) \(command.arguments)".padding(toLength: 24, withPad: " ", startingAt: 0)
                + command.summary + "\n"
        }
        return text + "\nRun `llvs \(name) COMMAND --help` for a command's options.\n"
    }
}

/// What every command shares: where the store is, the kinds of remote, the user's settings, and how to write output.
struct CommandContext {
    static let storeOption = Option(
        "store", "DIR", "the store's folder (default: $LLVS_STORE, else ./.llvs, else . when it is a store)", .text)

    let storePath: String
    let connectors: ConnectorRegistry
    let environment: [String: String]
    let configuration: UserConfiguration

    init(
        storeOption: String?, connectors: ConnectorRegistry,
        environment: [String: String] = ProcessInfo.processInfo.environment
    ) {
        let path = storeOption ?? environment["LLVS_STORE"] ?? Self.defaultStorePath()
        storePath = URL(fileURLWithPath: path).standardizedFileURL.path
        self.connectors = connectors
        self.environment = environment
        configuration = UserConfiguration(environment: environment)
    }

    var storeURL: URL { URL(fileURLWithPath: storePath) }

    /// `./.llvs`, unless the working directory is a store itself and holds none (`llvs clone URL DIR; cd DIR`, as
    /// git users expect to work in what they cloned).
    static func defaultStorePath(fileManager: FileManager = .default) -> String {
        let nested = ".llvs"
        if !fileManager.fileExists(atPath: nested), fileManager.fileExists(atPath: StoreDescriptor.fileName) {
            return "."
        }
        return nested
    }

    /// The user's accounts; an old remotes.json is moved over first.
    func accountBook() throws -> AccountBook {
        try moveLegacyRemotes()
        return AccountBook(configuration: configuration)
    }

    /// The remotes this store sees; an old remotes.json is moved over first.
    func remotes() throws -> RemoteDirectory {
        try moveLegacyRemotes()
        return RemoteDirectory(storeURL: storeURL, configuration: configuration)
    }

    private func moveLegacyRemotes() throws {
        guard FileManager.default.fileExists(atPath: configuration.legacyRemotesFile.path) else { return }
        if let line = try LegacyRemotes(configuration: configuration, connectors: connectors).moveIfPresent() {
            TerminalText.warn(line)
        }
    }

    /// The remote called `name`; with none named, the only one, else the one this store last synced with.
    func remote(_ name: String?) throws -> (name: String, entry: RemoteEntry, level: RemoteLevel) {
        let visible = try remotes().visible()
        if let name {
            guard let found = visible[name] else {
                if URLRemote.isURL(name) {
                    throw CommandError.notFound(
                        "\(name) is a URL, and this command takes a remote's name: add it with `llvs remote add NAME \(name)`, then give NAME."
                    )
                }
                if let near = LLVSTool.closest(to: name, among: Array(visible.keys)) {
                    throw CommandError.notFound("There is no remote called \(name). Did you mean \(near)?")
                }
                throw CommandError.notFound(
                    "There is no remote called \(name) for the store \(storePath); add it with `llvs remote add \(name) URL`."
                )
            }
            return (name, found.entry, found.level)
        }
        if visible.count == 1, let only = visible.first { return (only.key, only.value.entry, only.value.level) }
        if visible.count > 1, let remembered = RememberedRemote(store: storeURL).name, let found = visible[remembered] {
            return (remembered, found.entry, found.level)
        }
        throw CommandError.usage(
            visible.isEmpty
                ? "no remote is configured; add one with `llvs remote add NAME URL`"
                : "name the remote: \(visible.keys.sorted().joined(separator: ", "))")
    }

    func connection(_ name: String?, faults: HTTPFaultInjector? = nil) throws -> RemoteConnection {
        let found = try remote(name)
        return try RemoteConnection(
            name: found.name, entry: found.entry, level: found.level, context: self, faults: faults)
    }

    /// Remembers the remote a command synced the store with.
    func remember(_ connection: RemoteConnection) { RememberedRemote(store: storeURL).remember(connection.name) }

    /// Fails with "no store" unless there is a store at the path (for commands that keep something in it).
    func requireStore() throws {
        guard FileManager.default.fileExists(atPath: storeURL.appendingPathComponent(StoreDescriptor.fileName).path)
        else {
            throw StoreError.notAStore(path: storePath)
        }
    }

    /// Every storage this build can open; the store's descriptor says which one it uses.
    static let storageMaker: Store.StorageMaker = SQLiteStorage.storageMaker

    func openCoordinator() throws -> StoreCoordinator {
        try StoreCoordinator(store: try Store(openingAt: storeURL, makeStorage: Self.storageMaker))
    }

    /// A version named in full or by a unique prefix of its ID.
    func resolveVersion(_ text: String, in store: Store) throws -> Version {
        if let version = store.version(identifiedBy: Version.ID(text)) { return version }
        let matches = store.history.versions.values.filter { $0.id.rawValue.lowercased().hasPrefix(text.lowercased()) }
        guard !text.isEmpty, !matches.isEmpty else { throw CommandError.notFound("The store has no version \(text).") }
        guard matches.count == 1 else {
            throw CommandError.usage("\(text) matches \(matches.count) versions; give more of the ID.")
        }
        return matches[0]
    }

    /// Set by a command given `--json` that prints events (`JSONEvents`): its lines for people go to standard error.
    var events: JSONEvents?
    /// Set by `--quiet` (what scheduled runs use): the lines for people are not printed, and the command logs one
    /// line when it starts and one when it ends, with its figures, to standard error (the journal, under systemd).
    var quiet = false

    func write(_ text: String) {
        guard !quiet else { return }
        (events == nil ? FileHandle.standardOutput : FileHandle.standardError).write(Data(text.utf8))
    }

    /// A line of a `--quiet` run's log.
    func log(_ text: String) {
        guard quiet else { return }
        FileHandle.standardError.write(Data(("llvs " + TerminalText.escaped(text) + "\n").utf8))
    }

    /// This context with `--quiet` on when `quiet`.
    func quieted(_ quiet: Bool) -> CommandContext {
        var context = self
        context.quiet = quiet
        return context
    }

    /// This context with `--json` events on when `json`.
    func printingEvents(_ json: Bool) -> CommandContext {
        var context = self
        if json { context.events = JSONEvents() }
        return context
    }

    /// A line for people; control characters in it (from names a remote chose) are shown escaped.
    func writeLine(_ text: String) { write(TerminalText.escaped(text) + "\n") }

    func writeJSON<T: Encodable>(_ value: T) throws {
        let text = String(decoding: try ISO8601JSON.encoder(pretty: true).encode(value), as: UTF8.self)
        FileHandle.standardOutput.write(Data((text + "\n").utf8))
    }
}
