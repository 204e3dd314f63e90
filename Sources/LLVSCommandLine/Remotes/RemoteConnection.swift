import Foundation
import LLVS
import LLVSCloudService
import LLVSEncryption
import LLVSHTTP
import LLVSSupport

/// A remote made ready to use: its kind from the registry, its account's options and secret, and the file system
/// the kind made for it, sealed by `EncryptedFileSystem` when the remote is encrypted.
struct RemoteConnection {
    let name: String
    let entry: RemoteEntry
    let level: RemoteLevel
    let kind: ConnectorKind
    let access: RemoteAccess
    /// What the store reads and writes through: the kind's file system, or for an encrypted remote the sealing one
    /// over it.
    let fileSystem: any CloudFileSystem
    /// The kind's file system itself, for what an encrypted remote keeps unsealed: its key file.
    let plainFileSystem: any CloudFileSystem
    /// Where an exchange's progress goes: `--json` events, else the terminal's progress line (if any).
    let progress: (@Sendable (ExchangeProgress) -> Void)?

    /// `passphrase` stands in for the remote's own (`Passphrase.of`) when a command has one to try.
    /// `faults`: injected into every request of the kind's HTTP client.
    init(
        name: String, entry: RemoteEntry, level: RemoteLevel, context: CommandContext, passphrase: String? = nil,
        faults: HTTPFaultInjector? = nil
    ) throws {
        self.name = name
        self.entry = entry
        self.level = level
        let (kind, url) = try context.connectors.parse(entry.url)
        self.kind = kind
        var access = try Self.access(name: name, entry: entry, kind: kind, url: url, context: context)
        access.http = HTTPClientConfiguration(environment: context.environment)
        access.http.faults = faults
        self.access = access
        if let events = context.events {
            progress = { events.report($0) }
        } else if let line = ProgressLine.shared {
            progress = { line.report($0) }
        } else {
            progress = nil
        }
        plainFileSystem = try kind.makeFileSystem(access)
        if let encryption = entry.encryption {
            fileSystem = RemoteEncryption.encrypting(
                plainFileSystem, folder: access.basePath,
                passphrase: try passphrase ?? Passphrase.of(name, setting: encryption, context: context),
                openedKey: passphrase == nil ? Passphrase.openedKey(encryption, context: context) : nil,
                scratchFolder: Self.scratchFolder(context))
        } else {
            fileSystem = plainFileSystem
        }
    }

    /// Where sealed copies wait: the store's temporary folder when there is a store (its disk, and its clean-up of
    /// what a killed process left), else the system's.
    static func scratchFolder(_ context: CommandContext) -> URL {
        let store = context.storeURL
        guard FileManager.default.fileExists(atPath: store.appendingPathComponent(StoreDescriptor.fileName).path) else {
            return FileManager.default.temporaryDirectory
        }
        return store.appendingPathComponent("tmp")
    }

    /// What the kind gets: the remote's options and its account, made ready to sign in with.
    static func access(
        name: String, entry: RemoteEntry, kind: ConnectorKind, url: URL, context: CommandContext
    ) throws -> RemoteAccess {
        if entry.account == nil, kind.accountUse == .required {
            throw CommandError.failed(
                "The remote \(name) has no account to sign in to \(kind.serviceName) with; remove it and add it again.")
        }
        return RemoteAccess(
            remoteName: name, url: url, remote: SettingValues(entry.options),
            signIn: try signIn(entry.account, kind: kind, context: context, usedBy: name),
            environment: context.environment)
    }

    /// An account made ready: its kept options with `LLVS_<KIND>_<OPTION>` overriding them, its secret from
    /// `LLVS_<KIND>_<SECRET>` or its private file, its token file. With no account, only the environment's values.
    static func signIn(
        _ accountName: String?, kind: ConnectorKind, context: CommandContext, usedBy remote: String?
    ) throws -> AccountAccess {
        var options: [String: String] = [:]
        if let accountName {
            guard let account = try context.accountBook().load()[accountName] else {
                throw CommandError.failed(
                    "\(remote.map { "The remote \($0) signs in with the account \(accountName), which" } ?? "The account \(accountName)") is not there any more; add the remote again."
                )
            }
            guard account.kind == kind.name else {
                throw CommandError.failed(
                    "The account \(accountName) is a \(account.kind) account, not \(kind.serviceName)\(remote.map { "; remove the remote \($0) and add it again" } ?? "")."
                )
            }
            options = account.options
        }
        for option in kind.accountOptions {
            if let value = context.environment[option.environmentName(kind: kind.name)], !value.isEmpty {
                options[option.name] = value
            }
        }
        let secret = kind.secret.flatMap { spec in
            context.environment[spec.environmentName(kind: kind.name)].flatMap { $0.isEmpty ? nil : $0 }
                ?? accountName.flatMap(context.configuration.secret)
        }
        let tokenFile =
            kind.oauth == nil ? nil : accountName.map { TokenFile(path: context.configuration.tokenFile($0).path) }
        return AccountAccess(
            kind: kind, name: accountName, options: SettingValues(options), secret: secret, tokenFile: tokenFile,
            detachedRefresh: LLVSTool.refreshHelper)
    }

    var basePath: String { access.basePath }

    /// Fails unless the remote holds an LLVS store (a `versions/` folder), so a mistyped URL or base path is an
    /// error for `clone` and `pull` instead of "0 versions" (`push` and `sync` make the folder). A `store` that keeps
    /// a change-feed position for the remote skips the look: the position was taken from the store's folders, so a
    /// pull costs what a sync does.
    func requireStore(knownTo store: Store? = nil) async throws {
        if let store, RemoteCursorFile(store: store, identity: identity).load() != nil { return }
        if entry.encryption == nil { try await refuseIfEncrypted() }
        let versions = CloudPath.join(basePath, "versions")
        // Asked of the kind's own file system: names are not sealed, and an encrypted remote's first use would make
        // a key in a folder that holds no store.
        guard try await plainFileSystem.exists(versions) else {
            throw CommandError.notFound(
                "The remote \(name) (\(entry.url)\(basePath.isEmpty ? "" : ", base path \(basePath)")) holds no LLVS store: there is no \(versions) folder. Check the URL and base path."
            )
        }
        // An encrypted remote's key is opened now, so a wrong passphrase stops the command before it makes anything.
        if let sealing = fileSystem as? any SealingFileSystem { _ = try await sealing.keyring.key() }
    }

    /// The remote a `--from REMOTE|URL` names (a remote of the configuration, or a URL), checked to hold a store.
    static func holdingStore(_ remote: String, context: CommandContext) async throws -> RemoteConnection {
        let connection: RemoteConnection
        if URLRemote.isURL(remote) {
            let entry = try URLRemote.entry(remote, account: nil, context: context)
            connection = try RemoteConnection(name: "from", entry: entry, level: .store, context: context)
        } else {
            connection = try context.connection(remote)
        }
        try await connection.requireStore()
        return connection
    }

    /// Says which remote a store's change feed position belongs to: the service, its address and where the store's
    /// files are, so a remote re-pointed elsewhere under the same name starts again with a full listing.
    var identity: String {
        let options = entry.options.filter { $0.key != "concurrency" }.sorted { $0.key < $1.key }.map {
            "\($0.key)=\($0.value)"
        }
        return
            ([entry.url, access.account["endpoint"] ?? ""] + options + [basePath]
            + (entry.encryption == nil ? [] : ["encrypted"])).joined(separator: "\n")
    }

    /// The exchange with the remote. A remote added without `--encrypt` whose folder holds an encrypted store is
    /// refused first: its files cannot be read and a plaintext push would mix with them. That is checked on first
    /// contact; a store that keeps a change-feed position for the remote was checked when it took it, and a command
    /// that ran `requireStore` (`storeRequired`) has just checked.
    ///
    /// The remote's format is read from its record first (`RemoteFormatRecord`); a remote without one that the
    /// command may write to gets one: `upstream` when it holds versions already, else the format the remote was added
    /// with (`--format`, compact unless said). A command that only looks (`writing: false`) writes nothing. The store
    /// keeps the settled format (`RemoteFormatFile`), so the record is read once per store and remote.
    func exchange(
        for store: Store, storeRequired: Bool = false, writing: Bool = true
    ) async throws -> CloudFileSystemExchange {
        let cursorFile = RemoteCursorFile(store: store, identity: identity)
        if entry.encryption == nil, !storeRequired, cursorFile.load() == nil { try await refuseIfEncrypted() }
        let formatFile = RemoteFormatFile(store: store, identity: identity)
        let codec: any RemoteCodec
        if let kept = formatFile.load() {
            codec = kept
        } else {
            codec = try await RemoteFormatRecord.settle(
                on: fileSystem, basePath: basePath, preferred: entry.options[Self.formatOption], mayWrite: writing)
            // Kept once the remote says it (a look that wrote nothing on an empty remote has settled nothing).
            if writing { try formatFile.save(codec) }
        }
        return CloudFileSystemExchange(
            store: store, fileSystem: fileSystem, basePath: basePath,
            concurrency: entry.options["concurrency"].flatMap(Int.init) ?? 8,
            cursorFile: cursorFile, codec: codec, progress: progress)
    }

    /// The remote option that keeps the format a remote was added with (`llvs remote add --format`).
    static let formatOption = "format"

    private func refuseIfEncrypted() async throws {
        guard try await RemoteKeyring.isEncrypted(plainFileSystem, folder: basePath) else { return }
        throw CommandError.failed(
            "The remote \(name) holds an encrypted store (\(CloudPath.join(basePath, RemoteKeyFile.name)) is there); remove the remote and add it again with --encrypt."
        )
    }
}
