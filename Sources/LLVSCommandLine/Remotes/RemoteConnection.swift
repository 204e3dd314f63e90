import Foundation
import LLVS
import LLVSHTTP

/// A remote made ready to use: its kind from the registry, its account's options and secret, and the file system
/// the kind made for it.
struct RemoteConnection {
    let name: String
    let entry: RemoteEntry
    let level: RemoteLevel
    let kind: ConnectorKind
    let access: RemoteAccess
    let fileSystem: any CloudFileSystem

    init(name: String, entry: RemoteEntry, level: RemoteLevel, context: CommandContext) throws {
        self.name = name
        self.entry = entry
        self.level = level
        let (kind, url) = try context.connectors.parse(entry.url)
        self.kind = kind
        access = try Self.access(name: name, entry: entry, kind: kind, url: url, context: context)
        fileSystem = try kind.makeFileSystem(access)
    }

    /// What the kind gets: the remote's options and its account, made ready to sign in with.
    static func access(name: String, entry: RemoteEntry, kind: ConnectorKind, url: URL, context: CommandContext) throws -> RemoteAccess {
        if entry.account == nil, kind.accountUse == .required {
            throw CommandError.failed("The remote \(name) has no account to sign in to \(kind.serviceName) with; remove it and add it again.")
        }
        return RemoteAccess(remoteName: name, url: url, remote: SettingValues(entry.options),
                            signIn: try signIn(entry.account, kind: kind, context: context, usedBy: name), environment: context.environment)
    }

    /// An account made ready: its kept options with `LLVS_<KIND>_<OPTION>` overriding them, its secret from
    /// `LLVS_<KIND>_<SECRET>` or its private file, its token file. With no account, only the environment's values.
    static func signIn(_ accountName: String?, kind: ConnectorKind, context: CommandContext, usedBy remote: String?) throws -> AccountAccess {
        var options: [String: String] = [:]
        if let accountName {
            guard let account = try context.accountBook().load()[accountName] else {
                throw CommandError.failed("\(remote.map { "The remote \($0) signs in with the account \(accountName), which" } ?? "The account \(accountName)") is not there any more; add the remote again.")
            }
            guard account.kind == kind.name else {
                throw CommandError.failed("The account \(accountName) is a \(account.kind) account, not \(kind.serviceName)\(remote.map { "; remove the remote \($0) and add it again" } ?? "").")
            }
            options = account.options
        }
        for option in kind.accountOptions {
            if let value = context.environment[option.environmentName(kind: kind.name)], !value.isEmpty { options[option.name] = value }
        }
        let secret = kind.secret.flatMap { spec in
            context.environment[spec.environmentName(kind: kind.name)].flatMap { $0.isEmpty ? nil : $0 } ?? accountName.flatMap(context.configuration.secret)
        }
        let tokenFile = kind.oauth == nil ? nil : accountName.map { TokenFile(path: context.configuration.tokenFile($0).path) }
        return AccountAccess(kind: kind, name: accountName, options: SettingValues(options), secret: secret, tokenFile: tokenFile)
    }

    var basePath: String { access.basePath }

    /// Fails unless the remote holds an LLVS store (a `versions/` folder), so a mistyped URL or base path is an
    /// error for `clone` and `pull` instead of "0 versions" (`push` and `sync` make the folder).
    func requireStore() async throws {
        let versions = CloudPath.join(basePath, "versions")
        guard try await fileSystem.exists(versions) else {
            throw CommandError.notFound("The remote \(name) (\(entry.url)\(basePath.isEmpty ? "" : ", base path \(basePath)")) holds no LLVS store: there is no \(versions) folder. Check the URL and base path.")
        }
    }

    /// Says which remote a store's change feed position belongs to: the service, its address and where the store's
    /// files are, so a remote re-pointed elsewhere under the same name starts again with a full listing.
    var identity: String {
        let options = entry.options.filter { $0.key != "concurrency" }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }
        return ([entry.url, access.account["endpoint"] ?? ""] + options + [basePath]).joined(separator: "\n")
    }

    func exchange(for store: Store) -> CloudFileSystemExchange {
        CloudFileSystemExchange(store: store, fileSystem: fileSystem, basePath: basePath, concurrency: entry.options["concurrency"].flatMap(Int.init) ?? 8,
                                cursorFile: RemoteCursorFile(store: store, identity: identity), progress: ProgressLine.shared?.report)
    }
}
