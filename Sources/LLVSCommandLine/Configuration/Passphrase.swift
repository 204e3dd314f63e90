import Foundation
import LLVSEncryption

/// Where an encrypted remote's passphrase comes from: never the command line, where other users see it.
enum Passphrase {
    static let environmentName = "LLVS_PASSPHRASE"
    static let newEnvironmentName = "LLVS_NEW_PASSPHRASE"

    /// The passphrase of the encrypted remote `name`: `$LLVS_PASSPHRASE`, else the one kept for it.
    static func of(_ name: String, setting: RemoteEncryptionSetting, context: CommandContext) throws -> String {
        if let given = given(context) { return given }
        if let id = setting.keptPassphrase, let kept = context.configuration.passphrase(id), !kept.isEmpty {
            return kept
        }
        throw CommandError.failed(
            "The remote \(name) is encrypted and no passphrase is given: set $\(environmentName), or keep it with `llvs remote passphrase \(name) --keep` (it reads the passphrase from standard input)."
        )
    }

    static func given(_ context: CommandContext) -> String? {
        context.environment[environmentName].flatMap { $0.isEmpty ? nil : $0 }
    }

    /// Where the remote's opened key is kept beside its kept passphrase: only when the kept one is in use, never for
    /// a passphrase the user gives each time, which is a choice to keep nothing.
    static func openedKey(_ setting: RemoteEncryptionSetting, context: CommandContext) -> OpenedKeyFile? {
        guard given(context) == nil, let id = setting.keptPassphrase else { return nil }
        return OpenedKeyFile(url: context.configuration.passphraseFile(id).appendingPathExtension("key"))
    }

    /// The setting `--encrypt [--passphrase-stdin]` ask for (`remote add`, `clone URL`): with `--passphrase-stdin` the
    /// passphrase is read and kept; without, `$LLVS_PASSPHRASE` must give it. The remote is not contacted here (an
    /// account may not be authorized yet); its first use makes or opens the key.
    /// `confirm`: on a terminal, ask twice (a remote added may be new, and a typo there would lock its data away).
    static func setting(
        encrypt: Bool, fromStandardInput: Bool, for remote: String, confirm: Bool = false,
        context: CommandContext
    ) throws -> RemoteEncryptionSetting? {
        guard encrypt else {
            if fromStandardInput { throw CommandError.usage("--passphrase-stdin goes with --encrypt") }
            return nil
        }
        if fromStandardInput {
            let prompt = "Passphrase for the remote \(remote): "
            let passphrase =
                try confirm
                ? SecretInput.readNew(prompt: prompt, option: "--passphrase-stdin")
                : SecretInput.read(prompt: prompt, option: "--passphrase-stdin")
            return RemoteEncryptionSetting(keptPassphrase: try keep(passphrase, context: context))
        }
        guard given(context) != nil else {
            throw CommandError.usage(
                "an encrypted remote needs a passphrase: --passphrase-stdin to keep one, or $\(environmentName) for each command"
            )
        }
        return RemoteEncryptionSetting(keptPassphrase: nil)
    }

    /// Keeps `passphrase` in a new private file (0600) and returns its name.
    static func keep(_ passphrase: String, context: CommandContext) throws -> String {
        let id = UUID().uuidString.lowercased()
        try PrivateFile.write(Data(passphrase.utf8), to: context.configuration.passphraseFile(id), secretsFolder: true)
        return id
    }

    /// Removes the kept passphrase and the key opened with it.
    static func forget(_ setting: RemoteEncryptionSetting?, context: CommandContext) {
        guard let id = setting?.keptPassphrase else { return }
        try? FileManager.default.removeItem(at: context.configuration.passphraseFile(id))
        OpenedKeyFile(url: context.configuration.passphraseFile(id).appendingPathExtension("key")).remove()
    }
}
