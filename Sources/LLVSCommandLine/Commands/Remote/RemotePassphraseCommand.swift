import Foundation
import LLVS
import LLVSEncryption

/// `llvs remote passphrase NAME`: changes an encrypted remote's passphrase by rewrapping its key (the data is not
/// touched, so it takes one small upload); `--keep` keeps the passphrase on this machine instead, checking it first;
/// `--forget` removes the kept one.
struct RemotePassphraseCommand: Command {
    static let name = "passphrase"
    static let summary =
        "Change an encrypted remote's passphrase (the new one from $LLVS_NEW_PASSPHRASE or standard input), or --keep / --forget it here."
    static let arguments = "NAME"
    static let keepFlag = Flag(
        "keep",
        "keep the passphrase on this machine (from $LLVS_PASSPHRASE or standard input), after checking it opens the remote's key"
    )
    static let forgetFlag = Flag(
        "forget", "remove the passphrase kept on this machine; $LLVS_PASSPHRASE must give it afterwards")
    static let options: [any DeclaredOption] = [keepFlag, forgetFlag]
    static let positionalCount = 1...1

    enum Action { case change, keep, forget }

    let remote: String
    let action: Action

    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        switch (arguments[Self.keepFlag], arguments[Self.forgetFlag]) {
        case (true, true): throw CommandError.usage("--keep and --forget cannot go together")
        case (true, false): action = .keep
        case (false, true): action = .forget
        case (false, false): action = .change
        }
    }

    func run(in context: CommandContext) async throws {
        let found = try context.remote(remote)
        guard let setting = found.entry.encryption else {
            throw CommandError.usage(
                "the remote \(found.name) is not encrypted; a remote is encrypted from the start (`llvs remote add NAME URL --encrypt` with a folder of its own)"
            )
        }
        let book = try context.remotes().book(found.level)
        var remotes = try book.load()
        switch action {
        case .forget:
            Passphrase.forget(setting, context: context)
            remotes[found.name]?.encryption?.keptPassphrase = nil
            try book.save(remotes)
            context.writeLine(
                setting.keptPassphrase == nil
                    ? "No passphrase was kept for \(found.name)."
                    : "Forgot the passphrase kept for \(found.name); $\(Passphrase.environmentName) gives it from now on."
            )
        case .keep:
            let passphrase =
                try Passphrase.given(context)
                ?? SecretInput.read(prompt: "Passphrase for the remote \(found.name): ", option: "--keep")
            let connection = try RemoteConnection(
                name: found.name, entry: found.entry, level: found.level, context: context, passphrase: passphrase)
            try await RemoteKeyring.check(passphrase, on: connection.plainFileSystem, folder: connection.basePath)
            Passphrase.forget(setting, context: context)
            remotes[found.name]?.encryption?.keptPassphrase = try Passphrase.keep(passphrase, context: context)
            try book.save(remotes)
            context.writeLine(
                "Kept the passphrase for \(found.name) in \(context.configuration.folder.appendingPathComponent("passphrases").path)."
            )
        case .change:
            let connection = try context.connection(found.name)
            let current = try Passphrase.of(found.name, setting: setting, context: context)
            let given = context.environment[Passphrase.newEnvironmentName].flatMap { $0.isEmpty ? nil : $0 }
            let new =
                try given
                ?? SecretInput.readNew(
                    prompt: "New passphrase for the remote \(found.name): ", option: "remote passphrase")
            try await RemoteKeyring.changePassphrase(
                on: connection.plainFileSystem, folder: connection.basePath, from: current, to: new)
            if setting.keptPassphrase != nil {
                Passphrase.forget(setting, context: context)
                remotes[found.name]?.encryption?.keptPassphrase = try Passphrase.keep(new, context: context)
                try book.save(remotes)
            }
            context.writeLine(
                "Changed the passphrase of \(found.name); the data is unchanged. Other devices need the new one: `llvs remote passphrase \(found.name) --keep`, or $\(Passphrase.environmentName)."
            )
        }
    }
}
