import Foundation
import LLVS
import LLVSBackup
#if canImport(Glibc)
import Glibc
#endif

struct RestoreCommand: Command {
    static let name = "restore"
    static let summary =
        "Restore what a backup holds into DEST: all of it, or the PATHs given, at the current version or an older one."
    static let arguments = "DEST [PATH…]"
    static let atOption = Option("at", "VERSION", "restore this version", .text)
    static let beforeOption = Option(
        "before", "DATE",
        "restore the last version saved before DATE (2026-11-29, 2026-11-29T12:00:00Z, or 3d for three days ago)",
        .moment)
    static let keepSpecialBitsOption = Flag(
        "keep-special-bits",
        "restore setuid, setgid and sticky bits (dropped by default, as tar does for non-root users)")
    static let sourceOption = Option(
        "source", "NAME",
        "the backed-up directory to restore (its name or path; needed when the store backs up several)", .text)
    static let includeOption = Option(
        "include", "PATTERN",
        "restore only entries matching PATTERN (and what is inside them): a name at any depth (*.pdf), or with '/' a path from the backed-up directory (/docs); repeatable",
        .nonEmpty, repeatable: true, short: "i")
    static let excludeOption = Option(
        "exclude", "PATTERN", "do not restore entries matching PATTERN, nor what is inside them; repeatable",
        .nonEmpty, repeatable: true, short: "e")
    static let fromOption = Option(
        "from", "REMOTE|URL",
        "restore from a remote (a name, or a URL) without a store of your own: its history is brought into a temporary store, removed at the end",
        .nonEmpty)
    static let dryRunOption = CommonOptions.dryRun("say what would be restored, and write nothing")
    static let options: [any DeclaredOption] = [
        atOption, beforeOption, keepSpecialBitsOption, sourceOption, includeOption, excludeOption, fromOption,
        dryRunOption, CommonOptions.jsonEvents,
    ]
    static let positionalCount = 1...Int.max
    static let examples = [
        "llvs restore ~/restored", "llvs restore ~/restored Documents/taxes --before 2026-04-01",
        "llvs restore /tmp/out --include '*.pdf' --exclude /cache",
        "llvs restore ~/restored --from webdav://host/backups",
    ]

    let destination: String
    let paths: [String]
    let at: String?
    let before: Date?
    let keepSpecialBits: Bool
    let source: String?
    let from: String?
    let json: Bool
    let options: TreeRestore.Options

    init(_ arguments: ParsedArguments) throws {
        keepSpecialBits = arguments[Self.keepSpecialBitsOption]
        source = arguments[Self.sourceOption]
        destination = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        paths = Array(arguments.positionals.dropFirst())
        at = arguments[Self.atOption]
        before = arguments[Self.beforeOption]
        from = arguments[Self.fromOption]
        json = arguments[CommonOptions.jsonEvents]
        var options = TreeRestore.Options()
        options.include = arguments.all(Self.includeOption)
        options.exclude = arguments.all(Self.excludeOption)
        options.dryRun = arguments[Self.dryRunOption]
        self.options = options
        guard at == nil || before == nil else { throw CommandError.usage("give --at or --before, not both") }
    }

    /// A PATH as the backup names it, from the backed-up directory: an absolute path inside that directory loses its
    /// prefix (`/home/me/docs/a.txt` of `/home/me/docs`), any other is taken from the directory (`docs/a.txt`,
    /// `/a.txt`), as `history` takes them too.
    static func sourceRelative(_ path: String, sourcePath: String) -> String {
        var path = path
        let root = sourcePath.hasSuffix("/") ? String(sourcePath.dropLast()) : sourcePath
        if path == root {
            path = ""
        } else if path.hasPrefix(root + "/") {
            path = String(path.dropFirst(root.count + 1))
        }
        return path.split(separator: "/").filter { $0 != "." }.joined(separator: "/")
    }

    func run(in context: CommandContext) async throws {
        let context = context.printingEvents(json)
        var temporary: TemporaryClone?
        if let from { temporary = try await TemporaryClone.make(from: from, context: context) }
        defer { temporary?.remove() }
        let coordinator = try temporary?.coordinator ?? context.openCoordinator()
        let store = coordinator.store
        guard var version = await coordinator.currentVersion else {
            throw CommandError.failed("The store is empty: nothing was saved or backed up into it yet.")
        }
        if let at { version = try context.resolveVersion(at, in: store) }
        if let before {
            // Back along first predecessors to the last version saved before the date.
            while version.date >= before {
                guard let previous = version.predecessors.flatMap({ store.version(identifiedBy: $0.idOfFirst) }) else {
                    throw CommandError.notFound("No version was saved before \(before.formatted(.iso8601)).")
                }
                version = previous
            }
        }
        if let current = await coordinator.currentVersionId,
            try store.value(id: BackupObjectID.forgotten(version.id), at: current) != nil
        {
            throw CommandError.notFound(
                "The backup of version \(version.id) was forgotten (`llvs forget`), so it is not restored: a prune may "
                    + "have freed its data.")
        }
        let modeMask: UInt32 = keepSpecialBits ? 0o7777 : 0o777
        let reader = BackupReader(store: store)
        guard try reader.hasBackups(at: version.id) else {
            guard !options.dryRun, options.include.isEmpty, options.exclude.isEmpty else {
                throw CommandError.usage(
                    "--dry-run, --include and --exclude restore backups made by `llvs backup`; version \(version.id) holds none"
                )
            }
            try restoreLegacy(version, from: store, modeMask: modeMask, context: context)
            return
        }
        let record = try reader.resolveSource(source, at: version.id)
        let sourcePaths = paths.map { Self.sourceRelative($0, sourcePath: record.path) }
        if sourcePaths.contains("") {
            throw CommandError.usage("\(record.path) is the whole backup; leave out the PATH to restore all of it")
        }

        // The totals the progress counts towards: the record's for a whole restore, a count (listings only) otherwise.
        let progressLine: RestoreProgressLine?
        var options = options
        if !options.dryRun, context.events != nil || RedrawnLine.onTerminal != nil {
            var totals = (entries: record.files + record.folders + record.links, bytes: record.bytes)
            if !sourcePaths.isEmpty || !options.include.isEmpty || !options.exclude.isEmpty {
                var counting = options
                counting.dryRun = true
                var count = try TreeRestore(
                    reader: reader, version: version.id, destination: destination, modeMask: modeMask,
                    paths: sourcePaths, options: counting)
                try count.run(record)
                totals = (count.restored, count.bytes)
            }
            let totalEntries = totals.entries, totalBytes = totals.bytes
            let line = context.events == nil ? RedrawnLine.onTerminal : nil
            progressLine = line.map {
                RestoreProgressLine(line: $0, totalEntries: totalEntries, totalBytes: totalBytes)
            }
            let events = context.events
            options.onProgress = { entries, bytes in
                progressLine?.report(entries: entries, bytes: bytes)
                events?.progress(
                    RestoreEvent(
                        entriesDone: entries, entriesTotal: totalEntries, bytesDone: bytes, bytesTotal: totalBytes,
                        secondsElapsed: events?.elapsed ?? 0))
            }
        } else {
            progressLine = nil
        }
        var restore = try TreeRestore(
            reader: reader, version: version.id, destination: destination, modeMask: modeMask, paths: sourcePaths,
            options: options)
        try restore.run(record)
        progressLine?.finish(entries: restore.restored, bytes: restore.bytes)
        if !options.dryRun, let events = context.events {
            events.progress(
                RestoreEvent(
                    entriesDone: restore.restored, entriesTotal: restore.restored,
                    bytesDone: restore.bytes, bytesTotal: restore.bytes, secondsElapsed: events.elapsed), final: true)
        }
        for problem in restore.refused { TerminalText.warn("not restored: \(problem)") }
        for problem in restore.attributeRefusals.prefix(10) { TerminalText.warn("\(problem)") }
        if restore.attributeRefusals.count > 10 {
            TerminalText.warn("… and \(restore.attributeRefusals.count - 10) more extended attributes not restored")
        }
        try context.events?.write(
            RestoreSummary(
                version: version.id.rawValue, source: record.name, destination: destination,
                entries: restore.restored, bytes: restore.bytes, refused: restore.refused, dryRun: options.dryRun,
                secondsElapsed: context.events?.elapsed ?? 0))
        guard restore.restored > 0 || !restore.refused.isEmpty else {
            let what =
                sourcePaths.isEmpty ? "" : " under \(sourcePaths.joined(separator: ", "))"
            throw CommandError.notFound(
                "Version \(version.id) holds no backed-up files\(what) in \(record.name)"
                    + (options.include.isEmpty && options.exclude.isEmpty ? "." : " that the patterns select."))
        }
        if options.dryRun {
            context.writeLine(
                "Would restore \(restore.restored) entries (\(ProgressLine.size(restore.bytes))) of \(record.name) from version \(version.id) into \(destination); nothing was written (--dry-run)."
            )
        } else {
            context.writeLine(
                "Restored \(restore.restored) entries of \(record.name) from version \(version.id) into \(destination)."
            )
        }
        if !restore.refused.isEmpty {
            throw CommandError.failed(
                "\(restore.refused.count) entr\(restore.refused.count == 1 ? "y was" : "ies were") not restored (listed above)."
            )
        }
    }

    /// A store backed up by a build before folder listings: one value per path.
    private func restoreLegacy(
        _ version: Version, from store: Store, modeMask: UInt32, context: CommandContext
    ) throws {
        let trimmed = paths.map { $0.trimmingCharacters(in: CharacterSet(charactersIn: "/")) }
        let entries = try LegacyBackupLayout.paths(at: version.id, in: store, under: trimmed)
        guard !entries.isEmpty else {
            throw CommandError.notFound(
                "Version \(version.id) holds no backed-up \(trimmed.isEmpty ? "files" : "files under \(trimmed.joined(separator: ", "))")."
            )
        }
        let (restored, refused) = try LegacyBackupLayout.restore(
            entries, at: version.id, from: store, into: destination, modeMask: modeMask)
        for problem in refused { TerminalText.warn("not restored: \(problem)") }
        context.writeLine("Restored \(restored) entries from version \(version.id) into \(destination).")
        if !refused.isEmpty {
            throw CommandError.failed(
                "\(refused.count) entr\(refused.count == 1 ? "y was" : "ies were") not restored (listed above).")
        }
    }

    /// `--json`: how far the restore is.
    struct RestoreEvent: Encodable {
        var type = "progress"
        var entriesDone: Int
        var entriesTotal: Int
        var bytesDone: Int64
        var bytesTotal: Int64
        var secondsElapsed: Double
    }

    /// `--json`: what the restore did.
    struct RestoreSummary: Encodable {
        var type = "summary"
        var version: String
        var source: String
        var destination: String
        var entries: Int
        var bytes: Int64
        var refused: [String]
        var dryRun: Bool
        var secondsElapsed: Double
    }
}
