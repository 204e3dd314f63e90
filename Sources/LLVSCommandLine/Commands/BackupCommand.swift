import Foundation
import LLVS
import LLVSBackup
import LLVSEncryption
import LLVSRetention
#if canImport(Glibc)
import Glibc
#endif

struct BackupCommand: Command {
    static let name = "backup"
    static let summary =
        "Back up a directory into the store (unchanged files cost nothing, equal data is stored once), optionally sending it to a remote."
    static let arguments = "DIR"
    static let toOption = Option(
        "to", "REMOTE", "send the backup to this remote (reached, and its key opened, before the backup starts)", .text)
    static let nameOption = Option(
        "name", "NAME", "the name the backup is kept under (default: the directory's absolute path)", .nonEmpty)
    static let checkpointOption = Option(
        "checkpoint-every", "MIB",
        "commit a checkpoint each time this much new data is stored (default: a 256th of the new data so far, 8 to 256 MiB), so a killed backup resumes from it",
        .number(above: 0, atMost: 1_048_576, unit: "MiB"))
    static let options: [any DeclaredOption] = [toOption, nameOption, checkpointOption]
    static let positionalCount = 1...1

    let directory: String
    let remote: String?
    let sourceName: String
    let options: BackupWalk.Options

    init(_ arguments: ParsedArguments) throws {
        directory = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        remote = arguments[Self.toOption]
        sourceName = arguments[Self.nameOption] ?? directory
        var options = BackupWalk.Options()
        if let mebibytes = arguments[Self.checkpointOption] { options.checkpointBytes = Int64(mebibytes * 1_048_576) }
        self.options = options
    }

    func run(in context: CommandContext) async throws {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandError.usage("\(directory) is not a directory; backup takes one")
        }
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        // Held until the backup ends, so a prune of this store releases nothing the walk may name (it waits for a
        // release in progress, which is short).
        let lock = try RetentionFolder(store: store).backupLock()
        defer { withExtendedLifetime(lock) {} }
        // A wrong remote, an unreachable one or a wrong passphrase is an error before the work, not after it: the
        // remote is listed (what it lacks is what goes after the walk) and an encrypted one's key opened now.
        var sending: (exchange: CloudFileSystemExchange, listing: RemoteListing)?
        if let remote {
            let connection = try context.connection(remote)
            let exchange = try await connection.exchange(for: store)
            if let sealing = connection.fileSystem as? any SealingFileSystem { _ = try await sealing.keyring.key() }
            sending = (exchange, try await exchange.remoteListing())
        }
        let current = await coordinator.currentVersionId
        let builder = try store.makeVersionBuilder(basedOn: current)
        let converted = try LegacyBackupLayout.removeAll(from: builder, at: current, in: store)
        let progressLine = BackupProgressLine.shared
        let walk = BackupWalk(
            builder: builder, name: sourceName, directory: LocalPath(directory), options: options,
            onCommit: { version in try await coordinator.setCurrentVersion(version.id) },
            onProgress: { progressLine?.report($0) })
        let summary = try await walk.run()
        progressLine?.finish(summary.progress)
        for warning in summary.warnings { TerminalText.warn("skipped \(warning)") }
        if converted > 0 {
            context.writeLine(
                "The store's \(converted) values of the earlier per-path backup layout are left out of this version; older versions keep them (restore them with --at)."
            )
        }
        let record = summary.record
        try BackupRunRecord.record(
            BackupRunRecord(
                date: record.date, changed: summary.version != nil, files: record.files, bytes: record.bytes),
            of: sourceName, in: store)
        if let version = summary.version {
            let stored = summary.progress.bytesStored
            context.writeLine(
                "Backed up \(directory) as version \(version.id): \(summary.filesRead) file(s) stored, \(summary.filesUnchanged) unchanged, "
                    + "\(summary.removed) removed; \(record.files) files, \(ProgressLine.size(record.bytes)) in all, "
                    + "\(ProgressLine.size(stored)) new data"
                    + (summary.progress.checkpoints > 0
                        ? " (\(summary.progress.checkpoints) checkpoint(s) on the way)" : "") + ".")
        } else {
            context.writeLine(
                "Nothing changed since the last backup (\(record.files + record.folders + record.links) entries).")
        }
        // Only what the remote lacks is sent: merging what other devices sent there is `sync`'s work, and a backup
        // never downloads another machine's backups.
        if let (exchange, listing) = sending {
            let sent = try await exchange.send(remoteVersionIds: listing.versionIds)
            try await exchange.syncCompleted(listing, retrieved: RetrieveReport(), sent: sent)
            try report(nil, sent, context: context)
        }
    }
}
