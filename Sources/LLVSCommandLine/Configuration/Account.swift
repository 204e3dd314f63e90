import Foundation

/// A sign-in to a service: its kind and options (OAuth client ID, endpoint, tenant, scope; a WebDAV user). Kept once
/// per user, so several remotes, of one store or of many, share one authorization; its secret and token are files
/// of their own beside it.
struct Account: Codable, Equatable {
    var kind: String
    var options: [String: String]
}

/// The user's accounts, in `accounts.json`.
struct AccountBook {
    let configuration: UserConfiguration

    func load() throws -> [String: Account] {
        try PrivateFile.readJSON([String: Account].self, from: configuration.accountsFile, what: "accounts") ?? [:]
    }

    func save(_ accounts: [String: Account]) throws {
        try PrivateFile.writeJSON(accounts, to: configuration.accountsFile)
    }

    /// Removes an account with its secret and token.
    func remove(_ name: String) throws {
        var accounts = try load()
        guard accounts.removeValue(forKey: name) != nil else {
            throw CommandError.notFound("There is no account called \(name).")
        }
        try save(accounts)
        try? FileManager.default.removeItem(at: configuration.secretFile(name))
        try? FileManager.default.removeItem(at: configuration.tokenFile(name))
    }
}
