import Foundation
import LLVS
import LLVSSQLite

/// One `llvs` subcommand: its name, help and options beside each other, and what it does.
protocol Command {
    static var name: String { get }
    static var summary: String { get }
    /// The arguments after the command name, as shown in help (`ID FILE|-`).
    static var arguments: String { get }
    static var options: [OptionSpec] { get }
    /// How many positional arguments the command takes.
    static var positionalCount: ClosedRange<Int> { get }

    init(_ arguments: ParsedArguments) throws
    func run(in context: CommandContext) async throws
}

extension Command {
    static var options: [OptionSpec] { [] }
    static var positionalCount: ClosedRange<Int> { 0...0 }

    static var help: String {
        var text = "usage: llvs \(name)\(arguments.isEmpty ? "" : " " + arguments) [--store DIR]\n\n\(summary)\n"
        let all = options + [CommandContext.storeOption]
        text += "\noptions:\n"
        for option in all {
            let left = "  --\(option.name)" + (option.valueName.map { " \($0)" } ?? "")
            text += left.padding(toLength: max(left.count + 2, 26), withPad: " ", startingAt: 0) + option.help + "\n"
        }
        return text
    }
}

/// What every command shares: where the store is, and how to write output.
struct CommandContext {
    static let storeOption = OptionSpec.value("store", "DIR", "the store's folder (default: $LLVS_STORE, else ./.llvs)")

    let storePath: String

    init(storeOption: String?, environment: [String: String] = ProcessInfo.processInfo.environment) {
        let path = storeOption ?? environment["LLVS_STORE"] ?? ".llvs"
        storePath = URL(fileURLWithPath: path).standardizedFileURL.path
    }

    var storeURL: URL { URL(fileURLWithPath: storePath) }

    /// The configured remotes.
    var registry: RemoteRegistry { RemoteRegistry() }

    func connection(_ name: String?) throws -> RemoteConnection {
        let (name, configuration) = try registry.remote(name ?? rememberedRemote)
        return try RemoteConnection(name: name, configuration: configuration, registry: registry)
    }

    /// With several remotes and none named: the one this store last synced with, when that one is still configured.
    private var rememberedRemote: String? {
        guard let configured = try? registry.load(), configured.count > 1, let name = RememberedRemote(store: storeURL).name,
              configured[name] != nil else { return nil }
        return name
    }

    /// Remembers the remote a command synced the store with.
    func remember(_ connection: RemoteConnection) { RememberedRemote(store: storeURL).remember(connection.name) }

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

    func write(_ text: String) {
        FileHandle.standardOutput.write(Data(text.utf8))
    }

    /// A line for people; control characters in it (from names a remote chose) are shown escaped.
    func writeLine(_ text: String) { write(TerminalText.escaped(text) + "\n") }

    func writeJSON<T: Encodable>(_ value: T) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        write(String(decoding: try encoder.encode(value), as: UTF8.self) + "\n")
    }
}
