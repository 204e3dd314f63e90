import Foundation

/// Where a user's `llvs` settings live: `$XDG_CONFIG_HOME/llvs` (default `~/.config/llvs`), mode 0700. It holds the
/// accounts (`accounts.json`, and `accounts/NAME.secret` and `accounts/NAME.token.json` beside it) and the remotes
/// every store sees (`default-remotes.json`), and the passphrases kept for encrypted remotes (`passphrases/ID`).
struct UserConfiguration {
    let folder: URL

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let base =
            environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
        folder = base.appendingPathComponent("llvs")
    }

    var accountsFile: URL { folder.appendingPathComponent("accounts.json") }
    var accountsFolder: URL { folder.appendingPathComponent("accounts") }
    func secretFile(_ account: String) -> URL { accountsFolder.appendingPathComponent("\(account).secret") }
    func tokenFile(_ account: String) -> URL { accountsFolder.appendingPathComponent("\(account).token.json") }
    /// Remotes kept for every store of the user (`llvs remote add --all-stores`, and those of an old remotes.json).
    var defaultRemotesFile: URL { folder.appendingPathComponent("default-remotes.json") }
    /// Where `llvs` kept remotes before accounts and per-store remotes (see `LegacyRemotes`).
    var legacyRemotesFile: URL { folder.appendingPathComponent("remotes.json") }

    /// A kept passphrase of an encrypted remote (`RemoteEncryptionSetting.keptPassphrase` names it).
    func passphraseFile(_ id: String) -> URL { folder.appendingPathComponent("passphrases").appendingPathComponent(id) }

    func passphrase(_ id: String) -> String? {
        (try? String(contentsOf: passphraseFile(id), encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    /// An account's secret, from its private file.
    func secret(_ account: String) -> String? {
        (try? String(contentsOf: secretFile(account), encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }
}
