import Foundation

/// Every command as completions and man pages see it, read from the same declarations `--help` prints: its words
/// (`remote add`), summary, arguments, options and examples. One list, so what is installed cannot drift from what
/// the tool takes.
struct CommandCatalog {
    struct Entry {
        /// `backup`, or `remote add` for a command of a group.
        var words: [String]
        var summary: String
        var arguments: String
        var options: [any DeclaredOption]
        var examples: [String]
        var help: String

        var name: String { words.joined(separator: " ") }
        /// `llvs-remote-add`, the man page's name.
        var pageName: String { (["llvs"] + words).joined(separator: "-") }
    }

    struct Group {
        var name: String
        var summary: String
        var commands: [Entry]
    }

    var commands: [Entry] = []
    var groups: [Group] = []

    init(connectors: ConnectorRegistry) {
        func entry(_ command: any Command.Type, words: [String]) -> Entry {
            Entry(
                words: words, summary: command.summary, arguments: command.arguments,
                options: command.options(connectors) + [CommandContext.storeOption], examples: command.examples,
                help: command.help(path: words.joined(separator: " "), connectors: connectors))
        }
        for item in LLVSTool.entries {
            switch item {
            case .command(let command):
                commands.append(entry(command, words: [command.name]))
            case .group(let group):
                groups.append(
                    Group(
                        name: group.name, summary: group.summary,
                        commands: group.subcommands.map { entry($0, words: [group.name, $0.name]) }))
            }
        }
    }

    /// Every command, those of groups included.
    var all: [Entry] { commands + groups.flatMap(\.commands) }

    /// The top-level words: commands and groups, with their summaries.
    var topLevel: [(name: String, summary: String)] {
        LLVSTool.entries.map { ($0.name, $0.summary) }
    }

    /// What a value is, for completing it.
    enum ValueKind: Equatable {
        case remote, source, directory, file, choices([String]), none
    }

    /// What an option's value is: read from its declaration (its name, the name of its value, its choices).
    static func valueKind(of option: any DeclaredOption) -> ValueKind? {
        let spec = option.spec
        guard let valueName = spec.valueName else { return nil }
        if let choices = option.choices { return .choices(choices) }
        if valueName.contains("REMOTE") { return .remote }
        if spec.name == "source" { return .source }
        if valueName == "DIR" { return .directory }
        if valueName == "FILE" { return .file }
        return ValueKind.none
    }

    /// What a command's first positional argument is, from its arguments as help shows them (`DIR`, `[REMOTE]`,
    /// `URL|REMOTE DIR`, `DEST [PATH…]`).
    static func positionalKind(of arguments: String) -> ValueKind {
        guard let first = arguments.split(separator: " ").first else { return .none }
        let word = first.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))
        if word.contains("REMOTE") { return .remote }
        if word == "DIR" || word == "DEST" { return .directory }
        if word.contains("FILE") || word.contains("PATH") { return .file }
        return .none
    }
}
