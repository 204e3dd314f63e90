import Foundation

/// A remote: a name (its key in the file), a URL, the account it signs in with and its own options (`base-path`,
/// `concurrency`, and its kind's remote options).
struct RemoteEntry: Codable, Equatable {
    var url: String
    var account: String?
    var options: [String: String]
    /// Set for a remote added with `--encrypt`: every file the store writes there is sealed (LLVSEncryption).
    var encryption: RemoteEncryptionSetting? = nil
}

/// How an encrypted remote finds its passphrase: `$LLVS_PASSPHRASE`, else the one kept for it.
struct RemoteEncryptionSetting: Codable, Equatable {
    /// Names the private file that keeps the passphrase (`UserConfiguration.passphraseFile`); nil when none is kept.
    /// A name of its own, not the remote's, so a rename keeps it and each store's copy of a remote owns its file.
    var keptPassphrase: String?
}

/// One file of remotes: a store's own (`STORE/remotes.json`, beside its descriptor) or the user's for every store
/// (`default-remotes.json`).
struct RemoteBook {
    let file: URL

    func load() throws -> [String: RemoteEntry] {
        try PrivateFile.readJSON([String: RemoteEntry].self, from: file, what: "remotes") ?? [:]
    }

    func save(_ remotes: [String: RemoteEntry]) throws {
        try PrivateFile.writeJSON(remotes, to: file)
    }
}

/// Where a remote is kept.
enum RemoteLevel: String, Encodable {
    /// In the store: only this store sees it.
    case store
    /// In the user's configuration: every store sees it, unless it has a remote of the same name.
    case allStores
}

/// The remotes a store sees: its own, and the user's for every store that it has no remote of the same name for.
struct RemoteDirectory {
    let store: RemoteBook
    let user: RemoteBook

    init(storeURL: URL, configuration: UserConfiguration) {
        store = RemoteBook(file: storeURL.appendingPathComponent("remotes.json"))
        user = RemoteBook(file: configuration.defaultRemotesFile)
    }

    func book(_ level: RemoteLevel) -> RemoteBook { level == .store ? store : user }

    /// Every remote the store sees, by name, with where it is kept.
    func visible() throws -> [String: (entry: RemoteEntry, level: RemoteLevel)] {
        var all: [String: (entry: RemoteEntry, level: RemoteLevel)] = [:]
        for (name, entry) in try user.load() { all[name] = (entry, .allStores) }
        for (name, entry) in try store.load() { all[name] = (entry, .store) }
        return all
    }
}
