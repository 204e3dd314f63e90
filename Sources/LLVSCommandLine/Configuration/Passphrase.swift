import Foundation
import LLVSEncryption
#if canImport(Glibc)
import Glibc
#endif

/// Where an encrypted remote's passphrase comes from: never the command line, where other users see it.
enum Passphrase {
    static let environmentName = "LLVS_PASSPHRASE"
    static let newEnvironmentName = "LLVS_NEW_PASSPHRASE"

    /// The passphrase of the encrypted remote `name`: `$LLVS_PASSPHRASE`, else the one kept for it.
    static func of(_ name: String, setting: RemoteEncryptionSetting, context: CommandContext) throws -> String {
        if let given = given(context) { return given }
        if let id = setting.keptPassphrase, let kept = context.configuration.passphrase(id), !kept.isEmpty { return kept }
        throw CommandError.failed("The remote \(name) is encrypted and no passphrase is given: set $\(environmentName), or keep it with `llvs remote passphrase \(name) --keep` (it reads the passphrase from standard input).")
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

    /// Reads a passphrase from standard input: on a terminal one line typed without echo after `prompt`, otherwise
    /// everything up to the end, without its final line break. Empty is refused.
    static func readStandardInput(prompt: String, option: String) throws -> String {
        let text: String
        if isatty(STDIN_FILENO) == 1 {
            FileHandle.standardError.write(Data(prompt.utf8))
            var settings = termios()
            let canHide = tcgetattr(STDIN_FILENO, &settings) == 0
            var hidden = settings
            hidden.c_lflag &= ~tcflag_t(ECHO)
            if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &hidden) }
            text = readLine(strippingNewline: true) ?? ""
            if canHide { tcsetattr(STDIN_FILENO, TCSAFLUSH, &settings) }
            FileHandle.standardError.write(Data("\n".utf8))
        } else {
            text = String(decoding: FileHandle.standardInput.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(in: .newlines)
        }
        guard !text.isEmpty else { throw CommandError.usage("\(option) read no passphrase from standard input") }
        return text
    }

    /// Keeps `passphrase` in a new private file (0600) and returns its name.
    static func keep(_ passphrase: String, context: CommandContext) throws -> String {
        let id = UUID().uuidString.lowercased()
        try PrivateFile.write(Data(passphrase.utf8), to: context.configuration.passphraseFile(id))
        return id
    }

    /// Removes the kept passphrase and the key opened with it.
    static func forget(_ setting: RemoteEncryptionSetting?, context: CommandContext) {
        guard let id = setting?.keptPassphrase else { return }
        try? FileManager.default.removeItem(at: context.configuration.passphraseFile(id))
        OpenedKeyFile(url: context.configuration.passphraseFile(id).appendingPathExtension("key")).remove()
    }
}
