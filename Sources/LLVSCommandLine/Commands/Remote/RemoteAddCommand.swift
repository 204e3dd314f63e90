import Foundation
import LLVS
import LLVSCloudService

/// `llvs remote add NAME URL`: a remote for this store (or, with `--all-stores`, for every store of the user), on
/// an account: the one named by `--account`, else the kind's default account (named as the kind, `gdrive`), made
/// from the options given when it is not there yet. A second remote on an account needs no options and no new
/// authorization.
struct RemoteAddCommand: Command {
    static let name = "add"
    static let summary =
        "Add a remote for this store, on an account (made on first use; one authorization for all its remotes)."
    static let arguments = "NAME URL"
    static let positionalCount = 2...2

    static let accountOption = Option(
        "account", "NAME",
        "the account to sign in with (default: one named as the kind, as gdrive; made from the options below when new)",
        .nonEmpty)
    static let basePathOption = Option(
        "base-path", "PATH", "the folder on the remote that holds the store",
        ValueKind(expected: "a path on the remote without empty, `.` or `..` parts") {
            (try? CloudPath.components($0)) != nil ? $0 : nil
        })
    static let concurrencyOption = Option("concurrency", "N", "transfers at once (1…64; default 8)", .integer(1...64))
    static let formatOption = Option(
        "format", "FORMAT",
        "the layout of a new remote: compact (the default: binary changes holding values compressed, about a third of upstream's bytes; LLVS apps cannot read it) or upstream (what LLVS apps on Apple devices read and write: use it to share a store with them). A remote that holds versions keeps its own",
        .oneOf(["compact", "upstream"]))
    static let encryptFlag = Flag(
        "encrypt",
        "seal every file the store writes there (contents and value IDs) with a key kept on the remote under a passphrase ($LLVS_PASSPHRASE, or --passphrase-stdin); LLVS apps on Apple devices cannot read an encrypted remote"
    )
    static let passphraseStdinFlag = Flag(
        "passphrase-stdin",
        "with --encrypt: read the passphrase from standard input and keep it in a private file (0600) of your configuration"
    )
    static let commonOptions: [any DeclaredOption] = [
        accountOption, basePathOption, concurrencyOption, formatOption, encryptFlag, passphraseStdinFlag,
        RemoteCommands.allStoresOption,
    ]

    /// The common options, then each kind's own (declared by the registry, checked against the kind when the remote
    /// is added) and each kind's secret flag.
    static func options(_ connectors: ConnectorRegistry) -> [any DeclaredOption] {
        commonOptions
            + connectors.allOptions.map { option in
                let kinds = kinds(taking: option.name, connectors)
                return Option(
                    option.name, option.valueName,
                    "(\(kinds.joined(separator: " "))) " + (kinds.count == 1 ? option.help : "see each kind below"),
                    .text)
            }
            + connectors.allSecrets.map { secret in
                let kinds = kinds(withSecret: secret.name, connectors)
                return Flag(
                    secret.optionName,
                    "(\(kinds.joined(separator: " "))) read the \(secret.name) from standard input into the account's private file"
                )
            }
    }

    private static func kinds(taking option: String, _ connectors: ConnectorRegistry) -> [String] {
        connectors.kinds.filter { $0.allOptions.contains { $0.name == option } }.map { $0.name + ":" }
    }

    private static func kinds(withSecret secret: String, _ connectors: ConnectorRegistry) -> [String] {
        connectors.kinds.filter { $0.secret?.name == secret }.map { $0.name + ":" }
    }

    /// Each kind: its URL form, its options by where they are kept, its secret and its environment variables.
    static func moreHelp(_ connectors: ConnectorRegistry) -> String {
        var text = "\nkinds of remote:\n"
        for kind in connectors.kinds {
            text += "\n  \(kind.urlForm)  \(kind.serviceName)"
            if let oauth = kind.oauth {
                text +=
                    ": signs in with OAuth (`llvs auth ACCOUNT`\(oauth.hasDeviceFlow ? "; --device works" : "")" + ")"
            }
            text += "\n"
            for (title, options) in [("account options", kind.accountOptions), ("remote options", kind.remoteOptions)]
            where !options.isEmpty {
                text += "    \(title):\n"
                for option in options {
                    text +=
                        "      "
                        + "--\(option.name) \(option.valueName)".padding(toLength: 24, withPad: " ", startingAt: 0)
                        + option.help + option.helpSuffix + "\n"
                }
            }
            if let secret = kind.secret {
                text += "    secret: --\(secret.optionName): \(secret.help)\(secret.required ? " (required)" : "")\n"
            }
            if !kind.environment.isEmpty {
                text += "    environment:\n"
                for variable in kind.environment {
                    text +=
                        "      " + variable.name.padding(toLength: 28, withPad: " ", startingAt: 0) + variable.help
                        + "\n"
                }
            }
        }
        return text
    }

    let name: String
    let url: String
    let arguments: ParsedArguments

    init(_ arguments: ParsedArguments) throws {
        name = arguments.positionals[0]
        url = arguments.positionals[1]
        self.arguments = arguments
        try RemoteCommands.checkName(name)
    }

    func run(in context: CommandContext) async throws {
        let (kind, _) = try context.connectors.parse(url)
        let (remoteOptions, accountOptions) = try checkedOptions(for: kind, context: context)
        let secretGiven = kind.secret.map { arguments.rawFlag($0.optionName) } ?? false
        if secretGiven, arguments[Self.passphraseStdinFlag], let spec = kind.secret {
            throw CommandError.usage(
                "--\(spec.optionName) and --passphrase-stdin both read standard input; give the passphrase in $\(Passphrase.environmentName) this time and keep it afterwards with `llvs remote passphrase \(name) --keep`"
            )
        }
        let level: RemoteLevel = arguments[RemoteCommands.allStoresOption] ? .allStores : .store
        if level == .store { try context.requireStore() }
        let book = try context.remotes().book(level)
        var remotes = try book.load()
        guard remotes[name] == nil else {
            throw CommandError.failed(
                "A remote called \(name) exists already \(level == .store ? "for this store" : "for all stores"); remove it first."
            )
        }

        var accountName: String?
        var accountIsNew = false
        let wantsAccount =
            kind.accountUse == .required || arguments[Self.accountOption] != nil || !accountOptions.isEmpty
            || secretGiven
        if wantsAccount {
            guard kind.accountUse != .never else {
                throw CommandError.usage("\(kind.serviceName) remotes sign in to nothing, so they take no --account")
            }
            let chosen = arguments[Self.accountOption] ?? kind.name
            try RemoteCommands.checkName(chosen, what: "account")
            let accountBook = try context.accountBook()
            var accounts = try accountBook.load()
            let requested = kind.accountDefaults(SettingValues(remoteOptions)).merging(accountOptions) { _, given in
                given
            }
            if let existing = accounts[chosen] {
                try check(
                    existing, named: chosen, against: requested, secretGiven: secretGiven, kind: kind, context: context)
            } else {
                try checkNewAccount(kind: kind, options: requested, secretGiven: secretGiven, context: context)
                if secretGiven, let spec = kind.secret {
                    try PrivateFile.write(
                        Data(readSecret(spec).utf8), to: context.configuration.secretFile(chosen), secretsFolder: true)
                }
                accounts[chosen] = Account(kind: kind.name, options: requested)
                try accountBook.save(accounts)
                accountIsNew = true
            }
            accountName = chosen
        }
        let encryption = try Passphrase.setting(
            encrypt: arguments[Self.encryptFlag], fromStandardInput: arguments[Self.passphraseStdinFlag],
            for: name, confirm: true, context: context)
        remotes[name] = RemoteEntry(url: url, account: accountName, options: remoteOptions, encryption: encryption)
        try book.save(remotes)

        let whose = level == .store ? "for this store" : "for all stores"
        guard let accountName else {
            context.writeLine("Added remote \(name) (\(url)) \(whose).")
            return
        }
        context.writeLine(
            "Added remote \(name) (\(url)) \(whose), on the \(accountIsNew ? "new " : "")account \(accountName).")
        if let oauth = kind.oauth {
            if FileManager.default.fileExists(atPath: context.configuration.tokenFile(accountName).path) {
                context.writeLine("The account \(accountName) is authorized already.")
            } else {
                context.writeLine(
                    "Next, authorize the account: llvs auth \(accountName)   (\(oauth.hasDeviceFlow ? "--headless or --device" : "--headless") on a machine without a browser)"
                )
            }
        }
    }

    /// The options given, checked against the kind: each must be one of its options, with a value it allows.
    private func checkedOptions(
        for kind: ConnectorKind, context: CommandContext
    ) throws -> (remote: [String: String], account: [String: String]) {
        var remote: [String: String] = [:]
        var account: [String: String] = [:]
        if let base = arguments[Self.basePathOption] { remote["base-path"] = base }
        if let n = arguments[Self.concurrencyOption] { remote["concurrency"] = String(n) }
        if let format = arguments[Self.formatOption] { remote[RemoteConnection.formatOption] = format }
        let own = Dictionary(uniqueKeysWithValues: kind.allOptions.map { ($0.name, $0) })
        for option in context.connectors.allOptions {
            guard let value = arguments.rawValues(option.name).last else { continue }
            guard let declared = own[option.name] else {
                let takes = kind.allOptions.map { "--" + $0.name }
                throw CommandError.usage(
                    "--\(option.name) is not an option of \(kind.serviceName) remotes (\(kind.name):); \(takes.isEmpty ? "they take none of their own" : "they take " + takes.joined(separator: ", "))"
                )
            }
            try declared.check(value, kind: kind)
            if declared.level == .account { account[declared.name] = value } else { remote[declared.name] = value }
        }
        for secret in context.connectors.allSecrets
        where arguments.rawFlag(secret.optionName) && kind.secret?.name != secret.name {
            throw CommandError.usage(
                "--\(secret.optionName) is not an option of \(kind.serviceName) remotes (\(kind.name):)\(kind.secret.map { "; their secret is --\($0.optionName)" } ?? "")"
            )
        }
        return (remote, account)
    }

    /// An existing account serves a new remote when every option given (or implied by the remote's) is what it has.
    private func check(
        _ account: Account, named name: String, against requested: [String: String], secretGiven: Bool,
        kind: ConnectorKind, context: CommandContext
    ) throws {
        guard account.kind == kind.name else {
            throw CommandError.usage(
                "the account \(name) is a \(context.connectors.kind(named: account.kind)?.serviceName ?? account.kind) account, not \(kind.serviceName); name another with --account NAME"
            )
        }
        for option in kind.accountOptions {
            guard let wanted = requested[option.name] else { continue }
            let has = account.options[option.name] ?? option.defaultValue
            guard has != wanted else { continue }
            throw CommandError.failed(
                "The account \(name) has \(has.map { "--\(option.name) \($0)" } ?? "no --\(option.name)"), not \(wanted). Leave the option out to use the account as it is, or give a new account's name with --account NAME."
            )
        }
        if secretGiven, let spec = kind.secret {
            let given = try readSecret(spec)
            guard context.configuration.secret(name) == given else {
                throw CommandError.failed(
                    "The account \(name) keeps another \(spec.name); leave out --\(spec.optionName) to use it, or give a new account's name with --account NAME."
                )
            }
        }
    }

    /// A new account must be able to sign in: an OAuth client ID, and a secret where the service requires one.
    private func checkNewAccount(
        kind: ConnectorKind, options: [String: String], secretGiven: Bool, context: CommandContext
    ) throws {
        func fromEnvironment(_ name: String) -> Bool { !(context.environment[name] ?? "").isEmpty }
        if kind.oauth != nil, options["client-id"] == nil,
            !fromEnvironment(ConnectorKind.environmentPrefix(kind.name) + "CLIENT_ID")
        {
            throw CommandError.usage(
                "a \(kind.serviceName) account needs the OAuth client you registered: --client-id ID (or $\(ConnectorKind.environmentPrefix(kind.name))CLIENT_ID)"
            )
        }
        if let secret = kind.secret, secret.required, !secretGiven,
            !fromEnvironment(secret.environmentName(kind: kind.name))
        {
            throw CommandError.usage(
                "a \(kind.serviceName) account needs \(secret.help): --\(secret.optionName) (or $\(secret.environmentName(kind: kind.name)))"
            )
        }
    }

    private func readSecret(_ spec: ConnectorSecret) throws -> String {
        try SecretInput.read(prompt: "The account's \(spec.name): ", option: "--\(spec.optionName)")
    }
}
