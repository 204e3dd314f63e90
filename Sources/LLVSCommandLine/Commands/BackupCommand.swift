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
        "to", "REMOTE",
        "send the backup to this remote (reached, and its key opened, before the backup starts; each checkpoint sent while the walk goes on)",
        .text)
    static let nameOption = Option(
        "name", "NAME", "the name the backup is kept under (default: the directory's absolute path)", .nonEmpty)
    static let checkpointOption = Option(
        "checkpoint-every", "MIB",
        "commit a checkpoint each time this much new data is stored (default: a 256th of the new data so far, 32 to 256 MiB), so a killed backup resumes from it",
        .number(above: 0, atMost: 1_048_576, unit: "MiB"))
    static let excludeOption = Option(
        "exclude", "PATTERN",
        "leave out entries matching PATTERN: a name at any depth (*.tmp), or with '/' a path from the directory (/build); repeatable",
        .nonEmpty, repeatable: true, short: "e")
    static let excludeFileOption = Option(
        "exclude-file", "FILE", "read patterns from FILE, one a line (# starts a comment); repeatable", .nonEmpty,
        repeatable: true)
    static let excludeCachesOption = Flag("exclude-caches", "leave out folders with a CACHEDIR.TAG")
    static let excludeIfPresentOption = Option(
        "exclude-if-present", "NAME", "leave out folders that hold a file called NAME; repeatable", .nonEmpty,
        repeatable: true)
    static let excludeLargerThanOption = Option(
        "exclude-larger-than", "SIZE", "leave out files larger than SIZE (bytes, or with K, M, G, T)",
        ValueKind(expected: "a size, as 500K, 10M or 2G") { BackupCommand.size($0) })
    static let oneFileSystemOption = Flag(
        "one-file-system", "leave out folders on other file systems", short: "x")
    static let forceOption = Flag(
        "force",
        "with --name: keep the name even though it was used for another directory (that one's backups stay in the history)"
    )
    static let dryRunOption = CommonOptions.dryRun(
        "say what the backup would read, keep and leave out; read no file and store nothing")
    static let noExcludesOption = Flag(
        "no-excludes", "leave nothing out (the exclusions of the last backup of this directory are otherwise kept)")
    static let options: [any DeclaredOption] = [
        toOption, nameOption, checkpointOption, excludeOption, excludeFileOption, excludeCachesOption,
        excludeIfPresentOption, excludeLargerThanOption, oneFileSystemOption, noExcludesOption, forceOption,
        dryRunOption, CommonOptions.jsonEvents, CommonOptions.quiet,
    ]
    static let positionalCount = 1...1
    static let examples = [
        "llvs backup ~/Documents --to offsite", "llvs backup ~ -e '*.tmp' -e /Downloads --exclude-caches --dry-run",
        "llvs backup /srv/data --name data --json",
    ]

    let directory: String
    let remote: String?
    let sourceName: String
    let options: BackupWalk.Options
    let force: Bool
    let json: Bool
    let quiet: Bool

    init(_ arguments: ParsedArguments) throws {
        force = arguments[Self.forceOption]
        json = arguments[CommonOptions.jsonEvents]
        quiet = arguments[CommonOptions.quiet]
        guard !(json && quiet) else { throw CommandError.usage("give --json or --quiet, not both") }
        directory = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        remote = arguments[Self.toOption]
        sourceName = arguments[Self.nameOption] ?? directory
        var options = BackupWalk.Options()
        if let mebibytes = arguments[Self.checkpointOption] { options.checkpointBytes = Int64(mebibytes * 1_048_576) }
        options.exclusions = try Self.exclusions(arguments)
        options.dryRun = arguments[Self.dryRunOption]
        self.options = options
    }

    /// The exclusions the options give; nil when none is given (the last backup's are kept then).
    static func exclusions(_ arguments: ParsedArguments) throws -> BackupExclusions? {
        var patterns = arguments.all(excludeOption)
        for file in arguments.all(excludeFileOption) {
            guard let text = try? String(contentsOfFile: file, encoding: .utf8) else {
                throw CommandError.usage("--exclude-file \(file) cannot be read as UTF-8 text")
            }
            patterns += text.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }
                .filter { !$0.isEmpty && !$0.hasPrefix("#") }
        }
        let given = BackupExclusions(
            patterns: patterns, ifPresent: arguments.all(excludeIfPresentOption),
            caches: arguments[excludeCachesOption], largerThan: arguments[excludeLargerThanOption],
            oneFileSystem: arguments[oneFileSystemOption])
        if arguments[noExcludesOption] {
            guard given.isEmpty else { throw CommandError.usage("give --no-excludes or exclusions, not both") }
            return BackupExclusions()
        }
        return given.isEmpty ? nil : given
    }

    /// Bytes from `500K`, `10M`, `2G`, `1T` (binary multiples) or a plain count; nil for anything else.
    static func size(_ text: String) -> Int64? {
        let units: [Character: Int64] = ["K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40]
        guard let last = text.uppercased().last else { return nil }
        if let unit = units[last] {
            guard let number = Double(text.dropLast()), number >= 0, number * Double(unit) < 9e18 else { return nil }
            return Int64(number * Double(unit))
        }
        return Int64(text).flatMap { $0 >= 0 ? $0 : nil }
    }

    func run(in context: CommandContext) async throws {
        let context = context.printingEvents(json).quieted(quiet)
        context.log("\(what): started")
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else {
            throw CommandError.usage("\(directory) is not a directory; backup takes one")
        }
        let coordinator = try context.openCoordinator()
        do {
            try await backUp(coordinator, context: context)
        } catch {
            // A failed run is recorded too, so a monitor sees a backup that keeps failing (`llvs status`).
            if !options.dryRun {
                try? BackupRunRecord.recordFailure("\(error)", of: sourceName, in: coordinator.store)
            }
            throw error
        }
    }

    /// What the log lines of `--quiet` call this run.
    private var what: String { "backup of \(directory)" + (sourceName == directory ? "" : " as \(sourceName)") }

    private func backUp(_ coordinator: StoreCoordinator, context: CommandContext) async throws {
        let started = Date()
        let store = coordinator.store
        // Held until the backup ends, so a prune of this store releases nothing the walk may name (it waits for a
        // release in progress, which is short).
        let lock = try RetentionFolder(store: store).backupLock()
        defer { withExtendedLifetime(lock) {} }
        // A wrong remote, an unreachable one or a wrong passphrase is an error before the work, not after it: the
        // remote is listed (what it lacks is what goes after the walk) and an encrypted one's key opened now.
        var sending: (exchange: CloudFileSystemExchange, listing: RemoteListing)?
        if let remote, !options.dryRun {
            let connection = try context.connection(remote)
            sending = try await RemoteRunRecord.noting(connection.name, command: "backup", store: context.storeURL) {
                let exchange = try await connection.exchange(for: store)
                if let sealing = connection.fileSystem as? any SealingFileSystem { _ = try await sealing.keyring.key() }
                return (exchange, try await exchange.remoteListing())
            }
        }
        InterruptNotice.install(
            "llvs: backup interrupted. What it stored up to its last checkpoint is kept; run the same command again and it resumes from there."
        )
        let current = await coordinator.currentVersionId
        if let current, !force, let earlier = try BackupReader(store: store).record(sourceName, at: current),
            earlier.path != RawName.encode(LocalPath(directory).bytes)
        {
            throw CommandError.usage(
                "the name \(sourceName) is the backup of \(earlier.path), not of \(directory); choose another --name, or add --force to back up \(directory) under it (the next backup of it would then report \(earlier.path)'s files removed)"
            )
        }
        let builder = try store.makeVersionBuilder(basedOn: current)
        let converted = try LegacyBackupLayout.removeAll(from: builder, at: current, in: store)
        let progressLine = context.events == nil && !quiet ? BackupProgressLine.shared : nil
        let events = context.events
        let early = sending.map { CheckpointSender($0.exchange, remote: $0.listing.versionIds) }
        let walk = BackupWalk(
            builder: builder, name: sourceName, directory: LocalPath(directory), options: options,
            onCommit: { version in
                try await coordinator.setCurrentVersion(version.id)
                early?.committed()
            },
            onProgress: { progress in
                progressLine?.report(progress)
                events?.progress(BackupEvent(progress, seconds: events?.elapsed ?? 0))
            })
        let summary: BackupWalk.Summary
        do { summary = try await walk.run() } catch {
            await early?.stop()
            throw error
        }
        let sentEarly = await early?.finish() ?? []
        progressLine?.finish(summary.progress)
        events?.progress(BackupEvent(summary.progress, seconds: events?.elapsed ?? 0), final: true)
        for warning in summary.warnings { TerminalText.warn("skipped \(warning)") }
        let record = summary.record
        if options.dryRun {
            context.writeLine(
                "Would back up \(directory): \(summary.filesRead) file(s) to read (\(ProgressLine.size(summary.progress.bytesRead))), "
                    + "\(summary.filesUnchanged) unchanged, \(summary.removed) removed; \(record.files) files, "
                    + "\(ProgressLine.size(record.bytes)) in all"
                    + (summary.excluded > 0 ? ", \(summary.excluded) entries left out by the exclusions" : "")
                    + ". Nothing was read or stored (--dry-run)" + (remote != nil ? "; nothing was sent." : "."))
            try events?.write(
                BackupSummary(summary, name: sourceName, dryRun: true, sent: nil, seconds: events?.elapsed))
            return
        }
        if converted > 0 {
            context.writeLine(
                "The store's \(converted) values of the earlier per-path backup layout are left out of this version; older versions keep them (restore them with --at)."
            )
        }
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
                    + (summary.excluded > 0 ? ", \(summary.excluded) entries left out by the exclusions" : "")
                    + (summary.progress.checkpoints > 0
                        ? " (\(summary.progress.checkpoints) checkpoint(s) on the way)" : "") + ".")
        } else {
            context.writeLine(
                "Nothing changed since the last backup (\(record.files + record.folders + record.links) entries).")
        }
        // Only what the remote lacks is sent: merging what other devices sent there is `sync`'s work, and a backup
        // never downloads another machine's backups.
        var sent: SendReport?
        if let (exchange, listing) = sending, let remote {
            sent = try await RemoteRunRecord.noting(remote, command: "backup", store: context.storeURL) {
                // What went while the walk ran is on the remote; the rest (the backup's own version, a checkpoint
                // whose send failed) goes now.
                var report = try await exchange.send(remoteVersionIds: listing.versionIds.union(sentEarly))
                report.sent = sentEarly + report.sent
                try await exchange.syncCompleted(listing, retrieved: RetrieveReport(), sent: report)
                guard report.failures.isEmpty else {
                    for failure in report.failures.prefix(10) { TerminalText.warn("\(failure)") }
                    throw CommandError.failed(
                        "\(report.failures.count) version(s) could not be sent to \(remote) (the first: \(report.failures[0])); run the backup again to send them."
                    )
                }
                return report
            }
        }
        try events?.write(BackupSummary(summary, name: sourceName, dryRun: false, sent: sent, seconds: events?.elapsed))
        context.log(
            "\(what): "
                + (summary.version.map { "version \($0.id)" } ?? "unchanged") + ", \(record.files) files, "
                + "\(ProgressLine.size(record.bytes)) in all, \(ProgressLine.size(summary.progress.bytesStored)) new"
                + (sent.map { ", \($0.sent.count) version(s) sent" } ?? "")
                + (summary.warnings.isEmpty ? "" : ", \(summary.warnings.count) skipped")
                + String(format: ", %.1f s", Date().timeIntervalSince(started)))
        if let sent {
            var quiet = context
            quiet.events = nil
            // With --json the summary above said it; the call still fails the command when versions did not move.
            if context.events == nil || !sent.failures.isEmpty { try report(nil, sent, context: quiet) }
        }
    }

    /// `--json`: the walk's progress.
    struct BackupEvent: Encodable {
        var type = "progress"
        var files: Int
        var folders: Int
        var bytesRead: Int64
        var bytesAdded: Int64
        var checkpoints: Int
        var secondsElapsed: Double

        init(_ progress: BackupWalk.Progress, seconds: Double) {
            files = progress.files
            folders = progress.folders
            bytesRead = progress.bytesRead
            bytesAdded = progress.bytesStored
            checkpoints = progress.checkpoints
            secondsElapsed = seconds
        }
    }

    /// `--json`: what the backup did.
    struct BackupSummary: Encodable {
        var type = "summary"
        var source: String
        var version: String?
        var changed: Bool
        var dryRun: Bool
        var date: Date
        var files: Int
        var folders: Int
        var links: Int
        var bytes: Int64
        var filesRead: Int
        var filesUnchanged: Int
        var removed: Int
        var excluded: Int
        var bytesRead: Int64
        var bytesAdded: Int64
        var checkpoints: Int
        var warnings: [String]
        var sent: Int?
        var secondsElapsed: Double

        init(_ summary: BackupWalk.Summary, name: String, dryRun: Bool, sent: SendReport?, seconds: Double?) {
            let record = summary.record
            source = name
            version = summary.version?.id.rawValue
            changed = summary.version != nil
            self.dryRun = dryRun
            date = record.date
            files = record.files
            folders = record.folders
            links = record.links
            bytes = record.bytes
            filesRead = summary.filesRead
            filesUnchanged = summary.filesUnchanged
            removed = summary.removed
            excluded = summary.excluded
            bytesRead = summary.progress.bytesRead
            bytesAdded = summary.progress.bytesStored
            checkpoints = summary.progress.checkpoints
            warnings = summary.warnings
            self.sent = sent?.sent.count
            secondsElapsed = seconds ?? 0
        }
    }
}
