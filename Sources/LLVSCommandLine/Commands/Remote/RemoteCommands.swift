import Foundation

/// `llvs remote …`: the remotes a store syncs with.
enum RemoteCommands {
    static var group: CommandGroup {
        CommandGroup(
            name: "remote", summary: "Add, list, show, rename or remove the remotes a store syncs with.",
            subcommands: [
                RemoteAddCommand.self, RemoteListCommand.self, RemoteShowCommand.self, RemoteRenameCommand.self,
                RemoteRemoveCommand.self,
                RemotePassphraseCommand.self,
            ])
    }

    /// Remote and account names: letters, digits, '.', '_' and '-' (they name files).
    static func checkName(_ name: String, what: String = "remote") throws {
        guard name.count <= 100, name.range(of: "^[A-Za-z0-9][A-Za-z0-9._-]*$", options: .regularExpression) != nil
        else {
            throw CommandError.usage(
                "a\(what == "account" ? "n" : "") \(what) name is letters, digits, '.', '_' and '-', not \(name)")
        }
    }

    static let allStoresOption = Flag(
        "all-stores", "the remote kept for every store of this user (a default), not this store's own")
}

/// `llvs remote list`.
struct RemoteListCommand: Command {
    static let name = "list"
    static let summary = "List the remotes this store sees: its own, and those kept for all stores."
    static let arguments = ""
    static let options: [any DeclaredOption] = [CommonOptions.json]

    /// One remote in `remote list --json`.
    struct Listed: Encodable {
        var url: String
        var account: String?
        var options: [String: String]
        var level: RemoteLevel
        var encrypted: Bool
    }

    let json: Bool
    init(_ arguments: ParsedArguments) throws { json = arguments[CommonOptions.json] }

    func run(in context: CommandContext) async throws {
        let visible = try context.remotes().visible()
        if json {
            try context.writeJSON(
                visible.mapValues {
                    Listed(
                        url: $0.entry.url, account: $0.entry.account, options: $0.entry.options, level: $0.level,
                        encrypted: $0.entry.encryption != nil)
                })
            return
        }
        for (name, found) in visible.sorted(by: { $0.key < $1.key }) {
            var line = "\(name)\t\(found.entry.url)"
            if let base = found.entry.options["base-path"] { line += "  (base path \(base))" }
            if let account = found.entry.account { line += "  account \(account)" }
            if found.entry.encryption != nil { line += "  [encrypted]" }
            if found.level == .allStores { line += "  [all stores]" }
            context.writeLine(line)
        }
    }
}

/// `llvs remote show NAME`.
struct RemoteShowCommand: Command {
    static let name = "show"
    static let summary =
        "Show a remote's settings and its account's (never a secret), and whether the account is authorized."
    static let arguments = "NAME"
    static let options: [any DeclaredOption] = [CommonOptions.json]
    static let positionalCount = 1...1

    /// What `remote show` prints.
    struct Shown: Encodable {
        var name: String
        var url: String
        var kind: String
        var level: RemoteLevel
        var options: [String: String]
        var account: String?
        var accountOptions: [String: String]?
        var secretKept: Bool?
        var authorized: Bool?
        var encrypted: Bool
        /// For an encrypted remote: whether a passphrase is kept for it (else `$LLVS_PASSPHRASE` must give it).
        var passphraseKept: Bool?
    }

    let remote: String
    let json: Bool
    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        let found = try context.remote(remote)
        let (kind, _) = try context.connectors.parse(found.entry.url)
        var shown = Shown(
            name: found.name, url: found.entry.url, kind: kind.serviceName, level: found.level,
            options: found.entry.options, account: found.entry.account,
            encrypted: found.entry.encryption != nil,
            passphraseKept: found.entry.encryption.map { $0.keptPassphrase != nil })
        if let accountName = found.entry.account {
            shown.accountOptions = try context.accountBook().load()[accountName]?.options
            let state = AccountState(accountName, kind: kind, configuration: context.configuration)
            (shown.secretKept, shown.authorized) = (state.secretKept, state.authorized)
        }
        if json { try context.writeJSON(shown); return }
        context.writeLine(
            "\(shown.name): \(shown.url) (\(shown.kind); \(found.level == .store ? "this store's" : "kept for all stores"))"
        )
        for (key, value) in shown.options.sorted(by: { $0.key < $1.key }) { context.writeLine("  \(key): \(value)") }
        if let encryption = found.entry.encryption {
            let source =
                encryption.keptPassphrase.map { "kept in \(context.configuration.passphraseFile($0).path)" }
                ?? "from $\(Passphrase.environmentName)"
            context.writeLine("  encrypted: yes (passphrase \(source))")
        }
        guard let accountName = shown.account else { return }
        guard let accountOptions = shown.accountOptions else {
            context.writeLine("  account: \(accountName) (not there any more: remove the remote and add it again)")
            return
        }
        context.writeLine("  account: \(accountName)")
        for (key, value) in accountOptions.sorted(by: { $0.key < $1.key }) { context.writeLine("    \(key): \(value)") }
        for line in AccountState(accountName, kind: kind, configuration: context.configuration).lines(
            accountName, kind: kind, configuration: context.configuration, indent: "    ")
        {
            context.writeLine(line)
        }
    }
}

/// `llvs remote rename OLD NEW`.
struct RemoteRenameCommand: Command {
    static let name = "rename"
    static let summary = "Rename a remote (where it is kept: this store's, or with --all-stores the user's)."
    static let arguments = "OLD NEW"
    static let options: [any DeclaredOption] = [RemoteCommands.allStoresOption]
    static let positionalCount = 2...2

    let old: String
    let new: String
    let level: RemoteLevel
    init(_ arguments: ParsedArguments) throws {
        (old, new) = (arguments.positionals[0], arguments.positionals[1])
        level = arguments[RemoteCommands.allStoresOption] ? .allStores : .store
        try RemoteCommands.checkName(new)
    }

    func run(in context: CommandContext) async throws {
        let book = try context.remotes().book(level)
        var remotes = try book.load()
        guard let remote = remotes[old] else {
            throw try RemoteRemoveCommand.missing(old, level: level, context: context)
        }
        guard remotes[new] == nil else {
            throw CommandError.failed("A remote called \(new) exists already; remove it first.")
        }
        remotes[old] = nil
        remotes[new] = remote
        try book.save(remotes)
        let remembered = RememberedRemote(store: context.storeURL)
        if remembered.name == old { remembered.remember(new) }
        context.writeLine("Renamed remote \(old) to \(new).")
    }
}

/// `llvs remote remove NAME`.
struct RemoteRemoveCommand: Command {
    static let name = "remove"
    static let summary =
        "Remove a remote (its account stays, with its authorization; `llvs account remove` removes that)."
    static let arguments = "NAME"
    static let options: [any DeclaredOption] = [RemoteCommands.allStoresOption]
    static let positionalCount = 1...1

    let remote: String
    let level: RemoteLevel
    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        level = arguments[RemoteCommands.allStoresOption] ? .allStores : .store
    }

    func run(in context: CommandContext) async throws {
        let book = try context.remotes().book(level)
        var remotes = try book.load()
        guard let removed = remotes.removeValue(forKey: remote) else {
            throw try Self.missing(remote, level: level, context: context)
        }
        try book.save(remotes)
        Passphrase.forget(removed.encryption, context: context)
        context.writeLine("Removed remote \(remote)\(level == .allStores ? " (kept for all stores)" : "").")
    }

    /// The error for a remote not kept where a command looked, saying where it is kept when it is elsewhere.
    static func missing(_ name: String, level: RemoteLevel, context: CommandContext) throws -> CommandError {
        let elsewhere = try context.remotes().book(level == .store ? .allStores : .store).load()[name] != nil
        switch (level, elsewhere) {
        case (.store, true):
            return .notFound("The remote \(name) is kept for all stores, not this store's own; add --all-stores.")
        case (.allStores, true):
            return .notFound("The remote \(name) is this store's own, not kept for all stores; leave out --all-stores.")
        default:
            let kept = try context.remotes().book(level).load().keys
            let near = LLVSTool.closest(to: name, among: Array(kept)).map { " Did you mean \($0)?" } ?? ""
            return .notFound("There is no remote called \(name).\(near)")
        }
    }
}
