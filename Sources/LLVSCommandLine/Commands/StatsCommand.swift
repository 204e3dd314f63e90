import Foundation
import LLVS
import LLVSRetention

/// `llvs stats`: what the store holds and what it costs, as `restic stats` tells it: per source the backups kept and
/// the last one's size; for the store the versions, the bytes all kept backups would restore to, and the bytes its
/// files take on disk (history, deduplication and compression included).
struct StatsCommand: Command {
    static let name = "stats"
    static let summary = "Show what the store holds and what it costs: backups per source, restore size, bytes on disk."
    static let arguments = ""
    static let options: [any DeclaredOption] = [CommonOptions.json]
    static let positionalCount = 0...0
    static let examples = ["llvs stats", "llvs stats --json | jq .bytesOnDisk"]

    struct Source: Encodable {
        var name: String
        var backups: Int
        var last: String
        var files: Int
        var bytes: Int64
    }

    struct Stats: Encodable {
        var versions: Int
        var backups: Int
        var forgottenBackups: Int
        var releasedRecords: Int
        /// What every kept backup restores to, each counted whole.
        var restoreBytes: Int64
        var bytesOnDisk: Int64
        var sources: [Source]
    }

    let json: Bool

    init(_ arguments: ParsedArguments) throws { json = arguments[CommonOptions.json] }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        var sources: [Source] = []
        var kept: [CatalogedBackup] = [], forgotten = 0
        if let current = await coordinator.currentVersionId {
            let catalog = try BackupCatalog(store: store, at: current)
            kept = catalog.kept
            forgotten = catalog.backups.count - kept.count
            for (name, backups) in Dictionary(grouping: kept, by: \.source).sorted(by: { $0.key < $1.key }) {
                guard let last = backups.first else { continue }
                sources.append(
                    Source(
                        name: name, backups: backups.count, last: VersionSummary.format(last.date),
                        files: last.record.files, bytes: last.record.bytes))
            }
        }
        let stats = Stats(
            versions: store.history.count, backups: kept.count, forgottenBackups: forgotten,
            releasedRecords: try store.releasedRecords().count,
            restoreBytes: kept.reduce(0) { $0 + $1.record.bytes },
            bytesOnDisk: try BackupsCommand.bytesOnDisk(store.rootURL.path), sources: sources)
        if json { try context.writeJSON(stats); return }
        context.writeLine(
            "\(stats.versions) versions; \(stats.backups) backups kept"
                + (forgotten > 0 ? " (\(forgotten) forgotten)" : "") + " of \(sources.count) source"
                + (sources.count == 1 ? "" : "s") + ".")
        for source in sources {
            context.writeLine(
                "  \(source.name): \(source.backups) backup\(source.backups == 1 ? "" : "s"), the last \(source.last): "
                    + "\(source.files) files, \(ProgressLine.size(source.bytes))")
        }
        context.writeLine(
            "Every kept backup restored whole: \(ProgressLine.size(stats.restoreBytes)); the store takes "
                + "\(ProgressLine.size(stats.bytesOnDisk)) on disk, history included"
                + (stats.restoreBytes > 0
                    ? String(format: " (%.1f%%)", Double(stats.bytesOnDisk) * 100 / Double(stats.restoreBytes)) : "")
                + (stats.releasedRecords > 0 ? "; \(stats.releasedRecords) records released by prunes." : "."))
    }
}
