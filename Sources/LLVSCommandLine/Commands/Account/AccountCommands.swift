import Foundation

/// `llvs account …`: the user's sign-ins, each shared by every remote on it.
enum AccountCommands {
    static var group: CommandGroup {
        CommandGroup(
            name: "account",
            summary: "List, show or remove accounts: the sign-ins remotes share (made by `llvs remote add`).",
            subcommands: [AccountListCommand.self, AccountShowCommand.self, AccountRemoveCommand.self])
    }

    /// The remotes this store sees that sign in with an account (other stores' own remotes cannot be seen from here).
    static func remotes(using account: String, context: CommandContext) throws -> [String] {
        try context.remotes().visible().filter { $0.value.entry.account == account }.keys.sorted()
    }
}

/// `llvs account list`.
struct AccountListCommand: Command {
    static let name = "list"
    static let summary = "List the accounts, with their kind and whether each is authorized."
    static let arguments = ""
    static let options: [any DeclaredOption] = [CommonOptions.json]

    let json: Bool
    init(_ arguments: ParsedArguments) throws { json = arguments[CommonOptions.json] }

    func run(in context: CommandContext) async throws {
        let accounts = try context.accountBook().load()
        if json { try context.writeJSON(accounts); return }
        for (name, account) in accounts.sorted(by: { $0.key < $1.key }) {
            let kind = context.connectors.kind(named: account.kind)
            let state = AccountState(name, kind: kind, configuration: context.configuration)
            let authorized = state.authorized.map { $0 ? "  authorized" : "  not authorized" } ?? ""
            context.writeLine(
                "\(name)\t\(kind?.serviceName ?? account.kind)\(account.options["client-id"].map { "  client \($0)" } ?? "")\(authorized)"
            )
        }
    }
}

/// `llvs account show NAME`.
struct AccountShowCommand: Command {
    static let name = "show"
    static let summary =
        "Show an account's settings (never a secret), whether it is authorized, and this store's remotes on it."
    static let arguments = "NAME"
    static let options: [any DeclaredOption] = [CommonOptions.json]
    static let positionalCount = 1...1

    struct Shown: Encodable {
        var name: String
        var kind: String
        var options: [String: String]
        var secretKept: Bool
        var authorized: Bool?
        var remotes: [String]
    }

    let account: String
    let json: Bool
    init(_ arguments: ParsedArguments) throws {
        account = arguments.positionals[0]
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        guard let found = try context.accountBook().load()[account] else {
            throw CommandError.notFound("There is no account called \(account).")
        }
        let kind = context.connectors.kind(named: found.kind)
        let state = AccountState(account, kind: kind, configuration: context.configuration)
        let shown = Shown(
            name: account, kind: found.kind, options: found.options, secretKept: state.secretKept,
            authorized: state.authorized,
            remotes: try AccountCommands.remotes(using: account, context: context))
        if json { try context.writeJSON(shown); return }
        context.writeLine("\(account): \(kind?.serviceName ?? found.kind) account")
        for (key, value) in found.options.sorted(by: { $0.key < $1.key }) { context.writeLine("  \(key): \(value)") }
        for line in state.lines(account, kind: kind, configuration: context.configuration, indent: "  ") {
            context.writeLine(line)
        }
        context.writeLine(
            "  remotes of this store on it: \(shown.remotes.isEmpty ? "none" : shown.remotes.joined(separator: ", "))")
    }
}

/// `llvs account remove NAME`.
struct AccountRemoveCommand: Command {
    static let name = "remove"
    static let summary = "Remove an account with its secret and token; remotes on it stop working until added again."
    static let arguments = "NAME"
    static let positionalCount = 1...1

    let account: String
    init(_ arguments: ParsedArguments) throws { account = arguments.positionals[0] }

    func run(in context: CommandContext) async throws {
        let using = try AccountCommands.remotes(using: account, context: context)
        try context.accountBook().remove(account)
        context.writeLine("Removed account \(account) with its secret and token.")
        if !using.isEmpty {
            TerminalText.warn(
                "These remotes signed in with it and need adding again: \(using.joined(separator: ", ")).")
        }
    }
}
