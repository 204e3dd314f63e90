import Foundation
import LLVSCloudService

/// Moves an old `remotes.json` (remotes per user, each with its own sign-in) to accounts and remotes: each old remote
/// becomes an account of the same name (its secret and token files move into `accounts/`) and a remote kept for
/// every store, so every store that used it goes on using it. The old file is kept as `remotes.json.moved`. Each
/// step can be run again, so a move cut short finishes on the next command.
struct LegacyRemotes {
    /// An old remote, as `llvs` wrote them.
    struct OldRemote: Decodable {
        var url: String
        var basePath: String?
        var user: String?
        var concurrency: Int?
        var endpoint: String?
        var clientId: String?
        var removal: String?
        var rootFolderId: String?
        var scope: String?
        var driveId: String?
        var tenant: String?
    }

    let configuration: UserConfiguration
    let connectors: ConnectorRegistry

    /// Moves the old file over when there is one; returns the line that says so, or nil when there was nothing to move.
    func moveIfPresent() throws -> String? {
        let file = configuration.legacyRemotesFile
        guard let old = try PrivateFile.readJSON([String: OldRemote].self, from: file, what: "old remotes") else {
            return nil
        }
        let accountBook = AccountBook(configuration: configuration)
        let remoteBook = RemoteBook(file: configuration.defaultRemotesFile)
        var accounts = try accountBook.load()
        var remotes = try remoteBook.load()
        var movedAccounts: [String] = []
        for (name, remote) in old.sorted(by: { $0.key < $1.key }) {
            let (entry, account) = convert(name: name, remote)
            if let account, accounts[name] == nil {
                accounts[name] = account
                movedAccounts.append(name)
            }
            if remotes[name] == nil { remotes[name] = entry }
        }
        try FileManager.default.createDirectory(
            at: configuration.accountsFolder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        for name in accounts.keys {
            for (from, to) in [
                (configuration.folder.appendingPathComponent("\(name).secret"), configuration.secretFile(name)),
                (configuration.folder.appendingPathComponent("\(name).token.json"), configuration.tokenFile(name)),
            ]
            where FileManager.default.fileExists(atPath: from.path) && !FileManager.default.fileExists(atPath: to.path)
            {
                try FileManager.default.moveItem(at: from, to: to)
            }
        }
        try accountBook.save(accounts)
        try remoteBook.save(remotes)
        let kept = configuration.folder.appendingPathComponent("remotes.json.moved")
        try? FileManager.default.removeItem(at: kept)
        try FileManager.default.moveItem(at: file, to: kept)
        return
            "Moved \(old.count) remote\(old.count == 1 ? "" : "s") from \(file.path): \(movedAccounts.isEmpty ? "no sign-ins" : "sign-ins are now accounts (" + movedAccounts.joined(separator: ", ") + ")") in accounts.json, and the remotes are kept for every store in default-remotes.json; the old file is kept as \(kept.lastPathComponent)."
    }

    /// One old remote as a remote and, when its kind signs in, an account of the same name.
    func convert(name: String, _ old: OldRemote) -> (RemoteEntry, Account?) {
        let given: [(String, String?)] = [
            ("base-path", old.basePath), ("concurrency", old.concurrency.map(String.init)), ("user", old.user),
            ("endpoint", old.endpoint),
            ("client-id", old.clientId), ("removal", old.removal), ("root-folder-id", old.rootFolderId),
            ("scope", old.scope),
            ("drive-id", old.driveId), ("tenant", old.tenant),
        ]
        let scheme = URL(string: old.url)?.scheme ?? ""
        guard let kind = connectors.kind(scheme: scheme) else {
            // A kind this build does not know: kept as it was, so the error comes when it is used, naming it.
            return (
                RemoteEntry(
                    url: old.url, account: nil,
                    options: Dictionary(
                        uniqueKeysWithValues: given.compactMap { key, value in value.map { (key, $0) } })), nil
            )
        }
        let accountLevel = Set(kind.accountOptions.map(\.name))
        var remoteOptions: [String: String] = [:]
        var accountOptions: [String: String] = [:]
        for case let (key, value?) in given {
            if accountLevel.contains(key) { accountOptions[key] = value } else { remoteOptions[key] = value }
        }
        accountOptions.merge(kind.accountDefaults(SettingValues(remoteOptions))) { kept, _ in kept }
        let hasSecret = FileManager.default.fileExists(
            atPath: configuration.folder.appendingPathComponent("\(name).secret").path)
        let signsIn =
            kind.accountUse == .required || (kind.accountUse == .optional && (!accountOptions.isEmpty || hasSecret))
        return (
            RemoteEntry(url: old.url, account: signsIn ? name : nil, options: remoteOptions),
            signsIn ? Account(kind: kind.name, options: accountOptions) : nil
        )
    }
}
