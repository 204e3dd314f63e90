import Foundation
import LLVS
import LLVSBackup

/// The merge options `sync`, `pull` and `clone` share.
enum ArbiterOption {
    static let arbiter = Option(
        "arbiter", "KIND", "how conflicts are decided: change (most recent change wins, the default) or branch",
        .oneOf(["change", "branch"]))
    static let mergeBranches = Flag(
        "merge-branches", "merge heads on named branches too (by default they are left apart, as LLVS does)")

    static func selection(_ arguments: ParsedArguments) -> HeadSelection {
        arguments[mergeBranches] ? .all : .unbranched
    }

    static func parse(_ arguments: ParsedArguments) throws -> TellingArbiter {
        arguments[arbiter] == "branch"
            ? TellingArbiter(MostRecentBranchFavoringArbiter(), name: "branch")
            : TellingArbiter(MostRecentChangeFavoringArbiter(), name: "change")
    }

    /// The optional remote name and the arbiter, which `sync` and `pull` both take.
    static func remoteAndArbiter(_ arguments: ParsedArguments) throws -> (String?, TellingArbiter) {
        (arguments.positionals.first, try parse(arguments))
    }
}

/// Reports what an exchange did (and the conflicts its merge decided, and the version it ended at), and fails when
/// versions could not move. With `--json`, as one summary event.
func report(
    _ retrieve: RetrieveReport?, _ send: SendReport?, context: CommandContext, version: Version.ID? = nil,
    decided: [TellingArbiter.Decision] = [], arbiter: TellingArbiter? = nil
) throws {
    let failures = (retrieve?.failures ?? []) + (send?.failures ?? [])
    if let events = context.events {
        try events.write(
            JSONEvents.ExchangeSummary(
                retrieved: retrieve?.retrieved.count, sent: send?.sent.count,
                waitingForPredecessors: retrieve?.waitingForPredecessors.count,
                notYetReadable: retrieve?.notYetReadable.count, failures: failures.map(\.description),
                version: version?.rawValue,
                conflicts: decided.map {
                    JSONEvents.Conflict(
                        valueId: $0.valueId.rawValue, kept: $0.kept.name, otherVersion: $0.other.rawValue)
                }, secondsElapsed: events.elapsed))
    } else {
        for line in arbiter?.lines(decided) ?? [] { context.writeLine(line) }
        if let retrieve {
            context.writeLine(
                "Retrieved \(retrieve.retrieved.count) version\(retrieve.retrieved.count == 1 ? "" : "s").")
            if !retrieve.waitingForPredecessors.isEmpty {
                context.writeLine(
                    "\(retrieve.waitingForPredecessors.count) version(s) wait for predecessors the remote does not have yet."
                )
            }
            if !retrieve.notYetReadable.isEmpty {
                context.writeLine(
                    "\(retrieve.notYetReadable.count) version(s) the remote named could not be read yet; the next sync asks again."
                )
            }
        }
        if let send { context.writeLine("Sent \(send.sent.count) version\(send.sent.count == 1 ? "" : "s").") }
        if let version { context.writeLine("Now at \(version).") }
    }
    guard failures.isEmpty else {
        for failure in failures.prefix(10) { TerminalText.warn("\(failure)") }
        throw CommandError.failed(
            "\(failures.count) version(s) could not be moved (see above); run the command again once the cause is fixed."
        )
    }
}

struct SyncCommand: Command {
    static let name = "sync"
    static let summary = "Exchange versions with a remote: retrieve what it has, merge, send what it lacks."
    static let arguments = "[REMOTE]"
    static let watchOption = Flag(
        "watch", "keep running, syncing whenever the remote or the store has something new; Ctrl-C stops")
    static let maximumPauseOption = Option(
        "max-pause", "SECONDS", "with --watch: the longest pause between looks at the remote (default 60)",
        .integer(1...86_400))
    static let options: [any DeclaredOption] = [
        ArbiterOption.arbiter, ArbiterOption.mergeBranches, watchOption, maximumPauseOption, CommonOptions.jsonEvents,
        CommonOptions.quiet,
    ]
    static let positionalCount = 0...1

    let remote: String?
    let arbiter: TellingArbiter
    let selection: HeadSelection
    let watch: Bool
    let maximumPause: Duration

    let json: Bool
    let quiet: Bool

    var runsUntilStopped: Bool { watch }

    init(_ arguments: ParsedArguments) throws {
        json = arguments[CommonOptions.jsonEvents]
        quiet = arguments[CommonOptions.quiet]
        (remote, arbiter) = try ArbiterOption.remoteAndArbiter(arguments)
        selection = ArbiterOption.selection(arguments)
        watch = arguments[Self.watchOption]
        let seconds = arguments[Self.maximumPauseOption]
        if seconds != nil, !watch { throw CommandError.usage("--max-pause goes with --watch") }
        maximumPause = .seconds(seconds ?? 60)
    }

    func run(in context: CommandContext) async throws {
        let context = context.printingEvents(json).quieted(quiet)
        let coordinator = try context.openCoordinator()
        let connection = try context.connection(remote)
        let exchange = try await connection.exchange(for: coordinator.store)
        let selection = selection, arbiter = arbiter
        /// One sync; `quiet`: say nothing when nothing moved (a watch prints only what happened). Whether anything
        /// moved, for the watch's back-off.
        let storeURL = context.storeURL
        @Sendable func sync(quiet: Bool) async throws -> Bool {
            try await RemoteRunRecord.noting(connection.name, command: "sync", store: storeURL) {
                try await syncOnce(quiet: quiet)
            }
        }
        @Sendable func syncOnce(quiet: Bool) async throws -> Bool {
            let before = await coordinator.currentVersionId
            let result = try await coordinator.exchange(with: exchange, selection: selection, resolvingWith: arbiter)
            if case .fullListingAfterExpiredCursor(let reason) = result.listing {
                TerminalText.warn(
                    "The remote's change feed refused the saved position (\(reason)); the remote was listed in full.")
            }
            let current = await coordinator.currentVersionId
            let moved = !result.retrieve.retrieved.isEmpty || !result.send.sent.isEmpty || current != before
            let failed = !result.retrieve.failures.isEmpty || !result.send.failures.isEmpty
            let decided = arbiter.takeDecisions()
            guard moved || failed || !quiet else { return false }
            try report(
                result.retrieve, result.send, context: context, version: current, decided: decided, arbiter: arbiter)
            context.log(
                "sync with \(connection.name): \(result.retrieve.retrieved.count) retrieved, \(result.send.sent.count) sent"
                    + (decided.isEmpty ? "" : ", \(decided.count) conflict(s) decided")
                    + "; at \(current?.rawValue ?? "(none)")")
            return moved
        }
        _ = try await sync(quiet: false)
        context.remember(connection)
        guard watch else { return }
        context.writeLine("Watching \(connection.name) for changes; Ctrl-C stops.")
        try await SyncWatcher(
            coordinator: coordinator, exchange: exchange, maximumPause: maximumPause,
            sync: { try await sync(quiet: true) },
            context: context
        ).run()
    }
}

/// `-u`: as git's `push -u`, a named remote becomes the one `sync`, `push` and `pull` use without a name. Without it a
/// push or pull of a named remote leaves that choice alone (the first remote a store meets becomes it).
enum DefaultRemoteOption {
    static let setDefault = Flag(
        "set-default", "make REMOTE the remote sync, push and pull use when none is named", short: "u")

    static func remember(_ connection: RemoteConnection, named: Bool, setDefault: Bool, context: CommandContext) {
        let remembered = RememberedRemote(store: context.storeURL)
        if setDefault || !named || remembered.name == nil { remembered.remember(connection.name) }
    }
}

struct PushCommand: Command {
    static let name = "push"
    static let summary = "Send the versions a remote lacks."
    static let arguments = "[REMOTE]"
    static let options: [any DeclaredOption] = [DefaultRemoteOption.setDefault, CommonOptions.jsonEvents]
    static let positionalCount = 0...1

    let remote: String?
    let setDefault: Bool
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        json = arguments[CommonOptions.jsonEvents]
        remote = arguments.positionals.first
        setDefault = arguments[DefaultRemoteOption.setDefault]
    }

    func run(in context: CommandContext) async throws {
        let context = context.printingEvents(json)
        let store = try context.openCoordinator().store
        let connection = try context.connection(remote)
        try await RemoteRunRecord.noting(connection.name, command: "push", store: context.storeURL) {
            let sent = try await connection.exchange(for: store).send()
            try report(nil, sent, context: context)
        }
        DefaultRemoteOption.remember(connection, named: remote != nil, setDefault: setDefault, context: context)
    }
}

struct PullCommand: Command {
    static let name = "pull"
    static let summary = "Retrieve the versions a remote has and merge them into the current version."
    static let arguments = "[REMOTE]"
    static let options: [any DeclaredOption] = [
        ArbiterOption.arbiter, ArbiterOption.mergeBranches, DefaultRemoteOption.setDefault, CommonOptions.jsonEvents,
    ]
    static let positionalCount = 0...1

    let remote: String?
    let arbiter: TellingArbiter
    let selection: HeadSelection
    let setDefault: Bool

    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        json = arguments[CommonOptions.jsonEvents]
        (remote, arbiter) = try ArbiterOption.remoteAndArbiter(arguments)
        selection = ArbiterOption.selection(arguments)
        setDefault = arguments[DefaultRemoteOption.setDefault]
    }

    func run(in context: CommandContext) async throws {
        let context = context.printingEvents(json)
        let coordinator = try context.openCoordinator()
        let connection = try context.connection(remote)
        try await RemoteRunRecord.noting(connection.name, command: "pull", store: context.storeURL) {
            try await connection.requireStore(knownTo: coordinator.store)
            let exchange = try await connection.exchange(for: coordinator.store, storeRequired: true)
            let retrieved = try await coordinator.store.receivingInBulk { try await exchange.retrieve() }
            DefaultRemoteOption.remember(connection, named: remote != nil, setDefault: setDefault, context: context)
            let merged = try await coordinator.mergeHeads(selection: selection, resolvingWith: arbiter)
            try report(
                retrieved, nil, context: context, version: merged?.id, decided: arbiter.takeDecisions(),
                arbiter: arbiter)
        }
    }
}

struct StatusCommand: Command {
    static let name = "status"
    static let summary =
        "Show the current version and heads, with a remote what each side lacks, and when each backup and each remote last ran and last worked."
    static let arguments = "[REMOTE]"
    static let localOption = Flag(
        "local", "only what this store knows: do not ask the remote what it lacks (for a monitor, say)")
    static let options: [any DeclaredOption] = [CommonOptions.json, localOption]
    static let positionalCount = 0...1
    static let examples = ["llvs status", "llvs status --local --json"]

    /// A backed-up source: its last complete backup, and this machine's last run of it.
    struct SourceStatus: Encodable {
        var name: String
        var lastBackup: Date?
        var lastRun: Date?
        var lastSuccess: Date?
        var lastRunChanged: Bool?
        var error: String?
    }

    /// A remote: this store's last exchange with it.
    struct RemoteStatus: Encodable {
        var name: String
        var lastRun: Date?
        var lastSuccess: Date?
        var lastCommand: String?
        var error: String?
    }

    struct Status: Encodable {
        var store: String
        var currentVersion: String?
        var heads: [String]
        var versionCount: Int
        var remote: String?
        var remoteVersionCount: Int?
        var missingHere: Int?
        var missingThere: Int?
        /// The remote this store last synced with (what `llvs sync` uses when several are configured and none is named).
        var lastSyncedWith: String?
        var sources: [SourceStatus] = []
        var remotes: [RemoteStatus] = []
    }

    let remote: String?
    let json: Bool
    let local: Bool

    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals.first
        json = arguments[CommonOptions.json]
        local = arguments[Self.localOption]
        if local, remote != nil { throw CommandError.usage("--local asks no remote; leave out \(remote ?? "")") }
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let history = coordinator.store.history
        var status = Status(
            store: context.storePath, currentVersion: await coordinator.currentVersionId?.rawValue,
            heads: history.heads.map(\.rawValue).sorted(), versionCount: history.count)
        let configured = try context.remotes().visible()
        status.lastSyncedWith = RememberedRemote(store: context.storeURL).name
        if let current = await coordinator.currentVersionId {
            let runs = BackupRunRecord.all(in: coordinator.store)
            var names = Set(runs.keys)
            let records = try BackupReader(store: coordinator.store).records(at: current)
            names.formUnion(records.map(\.name))
            status.sources = names.sorted().map { name in
                let run = runs[name]
                return SourceStatus(
                    name: name, lastBackup: records.first { $0.name == name }?.date, lastRun: run?.date,
                    lastSuccess: run?.lastSuccess, lastRunChanged: run?.changed, error: run?.error)
            }
        }
        let remoteRuns = RemoteRunRecord.all(in: context.storeURL)
        status.remotes = Set(configured.keys).union(remoteRuns.keys).sorted().map { name in
            let run = remoteRuns[name]
            return RemoteStatus(
                name: name, lastRun: run?.date, lastSuccess: run?.lastSuccess, lastCommand: run?.command,
                error: run?.error)
        }
        if !local,
            remote != nil || configured.count == 1 || status.lastSyncedWith.map({ configured[$0] != nil }) == true
        {
            let connection = try context.connection(remote)
            // From the change feed where the store keeps a position for this remote (one request), else a listing.
            let remoteIds = try await connection.exchange(for: coordinator.store, writing: false).remoteListing()
                .versionIds
            status.remote = connection.name
            status.remoteVersionCount = remoteIds.count
            status.missingHere = remoteIds.filter { !history.contains($0) }.count
            status.missingThere = history.versions.keys.filter { !remoteIds.contains($0) }.count
        }
        if json { try context.writeJSON(status); return }
        context.writeLine(
            "Store \(status.store): \(status.versionCount) versions, current \(status.currentVersion ?? "(none)").")
        context.writeLine("Heads: \(status.heads.isEmpty ? "(none)" : status.heads.joined(separator: ", "))")
        if let name = status.remote {
            context.writeLine(
                "Remote \(name): \(status.remoteVersionCount ?? 0) versions; \(status.missingHere ?? 0) to retrieve, \(status.missingThere ?? 0) to send."
            )
        }
        if let last = status.lastSyncedWith {
            context.writeLine(
                "Last synced with \(last)\(configured.count > 1 ? " (what `llvs sync` uses when no remote is named)" : "")."
            )
        }
        func when(_ date: Date?) -> String { date.map(VersionSummary.format) ?? "never" }
        for source in status.sources {
            context.writeLine(
                "Backup \(source.name): last backup \(when(source.lastBackup)); last run here \(when(source.lastRun))"
                    + (source.error.map { ", which failed: \($0); last success \(when(source.lastSuccess))" } ?? ""))
        }
        for remote in status.remotes where remote.lastRun != nil {
            context.writeLine(
                "Remote \(remote.name): last \(remote.lastCommand ?? "exchange") \(when(remote.lastRun))"
                    + (remote.error.map { ", which failed: \($0); last success \(when(remote.lastSuccess))" } ?? ""))
        }
    }
}

struct SnapshotCommand: Command {
    static let name = "snapshot"
    static let summary = "Upload a snapshot of the store to a remote, so a new device can start from it quickly."
    static let arguments = "REMOTE"
    static let formatOption = Option(
        "format", "FORMAT",
        "zip-v1 (what every LLVS device restores; the default unless the store holds backups) or llvs-bundles-v1 (this package's own; LLVS apps skip it; the default for a store that holds backups; written as llvs-bundles-v2, with the list of what a prune released, when a prune released values)",
        .oneOf([ZipV1Snapshot.format, SnapshotArchive.format]))
    static let options: [any DeclaredOption] = [formatOption]
    static let positionalCount = 1...1

    let remote: String
    let format: String?
    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        format = arguments[Self.formatOption]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        // A backup store is read only by llvs, and zip-v1 does not scale to it: upstream's layout groups map entries
        // by their IDs' first two characters, every backup ID begins `.llvs-backup/`, so all of them share one
        // sub-node that each version rewrites whole, and the snapshot holds it once per version. llvs-bundles-v1
        // copies each version as stored, so it grows with the store.
        let exchange = try await context.connection(remote).exchange(for: store)
        var chosen = format ?? ZipV1Snapshot.format
        // No LLVS app reads a compact remote, so its snapshots are llvs-bundles-v1: the store's own compressed records.
        if format == nil, exchange.codec.name == RemoteFormatRecord.compact {
            chosen = SnapshotArchive.format
        } else if format == nil, let current = await coordinator.currentVersionId,
            try BackupReader(store: store).hasBackups(at: current)
        {
            chosen = SnapshotArchive.format
            context.writeLine(
                "The store holds backups: writing llvs-bundles-v1, which grows with the store (zip-v1 rewrites shared map nodes for every version; --format zip-v1 to insist)."
            )
        }
        let manifest = try await exchange.sendSnapshot(format: chosen)
        context.writeLine(
            "Uploaded snapshot \(manifest.snapshotId) (\(manifest.format)): \(manifest.versionCount) versions, \(manifest.totalSize) bytes in \(manifest.chunkCount) chunk(s)."
        )
    }
}

struct CloneCommand: Command {
    /// Written into DIR when a clone starts and removed when it ends, so running the clone again resumes it.
    static let markerName = "clone-in-progress"
    static let name = "clone"
    static let summary =
        "Make a new store in DIR from a URL, or from a remote (of --store's store, or kept for all stores); the new store keeps it: from its snapshot when it has one, then everything after."
    static let arguments = "URL|REMOTE DIR"
    static let storageOption = Option("storage", "KIND", "file (default) or sqlite", .oneOf(["file", "sqlite"]))
    static let nameOption = Option(
        "name", "NAME", "with a URL: the name the new store keeps the remote under (default origin)", .nonEmpty)
    static let accountOption = Option(
        "account", "NAME",
        "with a URL: the account to sign in with (default: the kind's own, as gdrive, where the kind needs one); add it first with `llvs remote add`",
        .nonEmpty)
    static let options: [any DeclaredOption] = [
        storageOption, nameOption, accountOption, RemoteAddCommand.encryptFlag, RemoteAddCommand.passphraseStdinFlag,
        ArbiterOption.arbiter, ArbiterOption.mergeBranches, CommonOptions.jsonEvents,
    ]
    static let positionalCount = 2...2

    let remote: String
    let directory: String
    let storage: String
    let arbiter: any MergeArbiter
    let selection: HeadSelection
    let arguments: ParsedArguments

    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        json = arguments[CommonOptions.jsonEvents]
        arbiter = try ArbiterOption.parse(arguments)
        selection = ArbiterOption.selection(arguments)
        remote = arguments.positionals[0]
        directory = arguments.positionals[1]
        storage = arguments[Self.storageOption] ?? "file"
        self.arguments = arguments
        if !URLRemote.isURL(remote) {
            for option in [Self.nameOption, Self.accountOption] where arguments[option] != nil {
                throw CommandError.usage(
                    "--\(option.spec.name) goes with a URL; \(remote) names a remote, which has its own")
            }
            if arguments[RemoteAddCommand.encryptFlag] || arguments[RemoteAddCommand.passphraseStdinFlag] {
                throw CommandError.usage(
                    "--encrypt goes with a URL; the remote \(remote) is encrypted or not as it was added")
            }
        }
        if let name = arguments[Self.nameOption] { try RemoteCommands.checkName(name) }
    }

    /// The remote a URL names, as the new store will keep it (`URLRemote.entry`), with its encryption.
    private func remoteForURL(_ context: CommandContext) throws -> (name: String, entry: RemoteEntry) {
        var entry = try URLRemote.entry(remote, account: arguments[Self.accountOption], context: context)
        entry.encryption = try Passphrase.setting(
            encrypt: arguments[RemoteAddCommand.encryptFlag],
            fromStandardInput: arguments[RemoteAddCommand.passphraseStdinFlag],
            for: remote, context: context)
        return (arguments[Self.nameOption] ?? "origin", entry)
    }

    func run(in context: CommandContext) async throws {
        let context = context.printingEvents(json)
        let connection: RemoteConnection
        let fromURL = URLRemote.isURL(remote)
        // A passphrase kept for a URL's remote that the new store has not saved yet: forgotten if it never is.
        var unsaved: RemoteEncryptionSetting?
        defer { Passphrase.forget(unsaved, context: context) }
        if fromURL {
            let (name, entry) = try remoteForURL(context)
            unsaved = entry.encryption
            connection = try RemoteConnection(name: name, entry: entry, level: .store, context: context)
        } else {
            do {
                connection = try context.connection(remote)
            } catch let error as CommandError {
                guard case .notFound = error else { throw error }
                throw CommandError.notFound(
                    "There is no remote called \(remote). Clone from its URL (`llvs clone URL DIR`), or keep the remote for all stores first (`llvs remote add --all-stores \(remote) URL`)."
                )
            }
        }
        try await connection.requireStore()
        let url = URL(fileURLWithPath: directory).standardizedFileURL
        let marker = url.appendingPathComponent(Self.markerName)
        let store: Store
        if let existing = try? Store(openingAt: url, makeStorage: CommandContext.storageMaker) {
            // A clone that was stopped (killed, a lost connection) left its mark: carry on from what it stored.
            guard let data = try? Data(contentsOf: marker), String(decoding: data, as: UTF8.self) == remote else {
                throw StoreError.alreadyAStore(path: url.path)
            }
            store = existing
            context.writeLine("Resuming the clone of \(remote) into \(url.path).")
        } else {
            store = try Store(
                creatingAt: url, descriptor: StoreDescriptor(storage: storage), makeStorage: CommandContext.storageMaker
            )
            try Data(remote.utf8).write(to: marker)
        }
        if connection.level == .store {
            // The new store gets its own copy of a remote that was another store's, so it syncs with it by name.
            let book = RemoteDirectory(storeURL: url, configuration: context.configuration).store
            var remotes = try book.load()
            if remotes[connection.name] == nil {
                var entry = connection.entry
                // Each store's copy owns its kept passphrase, so removing one remote never takes another's (a URL's
                // entry was made for this store, and owns its own already).
                if !fromURL, let id = entry.encryption?.keptPassphrase, let kept = context.configuration.passphrase(id)
                {
                    entry.encryption?.keptPassphrase = try Passphrase.keep(kept, context: context)
                }
                remotes[connection.name] = entry
                try book.save(remotes)
                unsaved = nil
            }
        }
        let coordinator = try StoreCoordinator(store: store)
        let exchange = try await connection.exchange(for: store, storeRequired: true)
        if store.history.isEmpty {
            let outcome = try await coordinator.bootstrapFromSnapshot(
                using: exchange, selection: selection, resolvingWith: arbiter)
            if case .fellBackToFullPull = outcome {
                TerminalText.warn(outcome.message)
            } else {
                context.writeLine(outcome.message)
            }
        } else {
            let result = try await coordinator.exchange(with: exchange, selection: selection, resolvingWith: arbiter)
            if context.events == nil {
                try report(result.retrieve, nil, context: context)
            } else if let failure = result.retrieve.failures.first {
                throw CommandError.failed(
                    "\(result.retrieve.failures.count) version(s) could not be retrieved (the first: \(failure)); run the clone again to go on."
                )
            }
        }
        try? FileManager.default.removeItem(at: marker)
        RememberedRemote(store: url).remember(connection.name)
        let current = await coordinator.currentVersionId
        context.writeLine(
            "Cloned \(store.history.count) versions into \(url.path); current \(current?.rawValue ?? "(none)").")
        try context.events?.write(
            CloneSummary(directory: url.path, versions: store.history.count, version: current?.rawValue))
    }

    struct CloneSummary: Encodable {
        var type = "summary"
        var directory: String
        var versions: Int
        var version: String?
    }
}
