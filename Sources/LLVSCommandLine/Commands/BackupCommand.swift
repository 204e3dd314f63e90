import Foundation
import LLVS
import LLVSBackup
#if canImport(Glibc)
import Glibc
#endif

struct BackupCommand: Command {
    static let name = "backup"
    static let summary = "Back up a directory into the store (unchanged files cost nothing, equal data is stored once), optionally syncing after."
    static let arguments = "DIR"
    static let options: [OptionSpec] = [
        .value("to", "REMOTE", "sync to this remote after the backup (checked before the backup starts)"),
        .value("name", "NAME", "the name the backup is kept under (default: the directory's absolute path)"),
        .value("checkpoint-every", "MIB", "commit a checkpoint each time this much new data is stored (default: a 256th of the new data so far, 8 to 256 MiB), so a killed backup resumes from it"),
    ]
    static let positionalCount = 1...1

    let directory: String
    let remote: String?
    let sourceName: String
    let options: BackupWalk.Options

    init(_ arguments: ParsedArguments) throws {
        directory = URL(fileURLWithPath: arguments.positionals[0]).standardizedFileURL.path
        remote = arguments.value("to")
        sourceName = arguments.value("name") ?? directory
        guard !sourceName.isEmpty else { throw CommandError.usage("--name needs a name, not an empty string") }
        var options = BackupWalk.Options()
        if let text = arguments.value("checkpoint-every") {
            guard let mebibytes = Double(text), mebibytes > 0, mebibytes <= 1_048_576 else {
                throw CommandError.usage("--checkpoint-every needs a number of MiB above 0, not \(text)")
            }
            options.checkpointBytes = Int64(mebibytes * 1_048_576)
        }
        self.options = options
    }

    func run(in context: CommandContext) async throws {
        var info = stat()
        guard stat(directory, &info) == 0, info.st_mode & S_IFMT == S_IFDIR else { throw CommandError.notFound("\(directory) is not a directory.") }
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        // A wrong remote is an error before the work, not after it.
        let connection = try remote.map { try context.connection($0) }
        let current = await coordinator.currentVersionId
        let builder = try store.makeVersionBuilder(basedOn: current)
        let converted = try LegacyBackupLayout.removeAll(from: builder, at: current, in: store)
        let progressLine = BackupProgressLine.shared
        let walk = BackupWalk(builder: builder, name: sourceName, directory: LocalPath(directory), options: options,
                              onCommit: { version in try await coordinator.setCurrentVersion(version.id) },
                              onProgress: { progressLine?.report($0) })
        let summary = try await walk.run()
        progressLine?.finish(summary.progress)
        for warning in summary.warnings { TerminalText.warn("skipped \(warning)") }
        if converted > 0 {
            context.writeLine("The store's \(converted) values of the earlier per-path backup layout are left out of this version; older versions keep them (restore them with --at).")
        }
        let record = summary.record
        if let version = summary.version {
            let stored = summary.progress.bytesStored
            context.writeLine("Backed up \(directory) as version \(version.id): \(summary.filesRead) file(s) stored, \(summary.filesUnchanged) unchanged, "
                              + "\(summary.removed) removed; \(record.files) files, \(ProgressLine.size(record.bytes)) in all, "
                              + "\(ProgressLine.size(stored)) new data"
                              + (summary.progress.checkpoints > 0 ? " (\(summary.progress.checkpoints) checkpoint(s) on the way)" : "") + ".")
        } else {
            context.writeLine("Nothing changed since the last backup (\(record.files + record.folders + record.links) entries).")
        }
        if let connection {
            let result = try await coordinator.exchange(with: connection.exchange(for: store))
            try report(result.retrieve, result.send, context: context)
        }
    }
}

/// What earlier builds wrote: one value per path plus a JSON record under `.llvs-meta/`. Such a store still restores
/// (`RestoreCommand`), and the next backup leaves those values out of its version.
enum LegacyBackupLayout {
    /// Removes every value of the per-path layout from the version being built; returns how many. Only looked for
    /// while the store has no backup of the tree layout (a scan of the version's map, once).
    static func removeAll(from builder: VersionBuilder, at version: Version.ID?, in store: Store) throws -> Int {
        guard let version, try !BackupReader(store: store).hasBackups(at: version) else { return 0 }
        var removed = 0
        let references = try store.valueReferences(at: version)
        let ids = Set(references.map(\.valueId.rawValue))
        for reference in references where reference.valueId.rawValue.hasPrefix(BackupEntry.prefix) {
            try builder.remove(reference.valueId)
            removed += 1
            let path = String(reference.valueId.rawValue.dropFirst(BackupEntry.prefix.count))
            if ids.contains(path) {
                try builder.remove(Value.ID(path))
                removed += 1
            }
        }
        return removed
    }
}
