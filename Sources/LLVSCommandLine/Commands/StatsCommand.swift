import Foundation
import LLVS
import LLVSRetention

/// `llvs stats`: what the store holds and what it costs, as `restic stats` tells it: per source the backups kept and
/// the last one's size; for the store the versions, the bytes all kept backups would restore to, and the bytes its
/// files take on disk (history, deduplication and compression included).
struct StatsCommand: Command {
    static let name = "stats"
    static let summary =
        "Show what the store holds and what it costs: backups per source, their bytes once deduplicated and as stored, "
        + "bytes on disk and on remotes."
    static let arguments = ""
    static let remoteOption = Option(
        "remote", "REMOTE", "also count the files and bytes this remote holds, from its listings (repeat for several)",
        .text, repeatable: true)
    static let allRemotesOption = Flag("all-remotes", "the same for every remote of the store")
    static let options: [any DeclaredOption] = [remoteOption, allRemotesOption, CommonOptions.json]
    static let positionalCount = 0...0
    static let examples = [
        "llvs stats", "llvs stats --all-remotes", "llvs stats --json | jq '.sources[] | {name, storedBytes}'",
    ]

    struct Source: Encodable {
        var name: String
        var backups: Int
        var last: String
        var files: Int
        /// What the last backup restores to.
        var bytes: Int64
        /// The data of every listing and chunk its kept backups name, each once.
        var uniqueBytes: Int64
        /// The same as the store keeps it (compressed where that saved).
        var storedBytes: Int64
    }

    struct Stats: Encodable {
        var versions: Int
        var backups: Int
        var forgottenBackups: Int
        var releasedRecords: Int
        /// What every kept backup restores to, each counted whole.
        var restoreBytes: Int64
        /// Every kept backup's listings and chunks, each once (sources share what they hold alike).
        var uniqueBytes: Int64
        var storedBytes: Int64
        var bytesOnDisk: Int64
        var sources: [Source]
        var remotes: [RemoteFootprint]
    }

    let json: Bool
    let remotes: [String]
    let allRemotes: Bool

    init(_ arguments: ParsedArguments) throws {
        json = arguments[CommonOptions.json]
        remotes = arguments.all(Self.remoteOption)
        allRemotes = arguments[Self.allRemotesOption]
        guard remotes.isEmpty || !allRemotes else {
            throw CommandError.usage("give --remote or --all-remotes, not both")
        }
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        var sources: [Source] = []
        var kept: [CatalogedBackup] = [], forgotten = 0
        var all = BackupFootprint()
        if let current = await coordinator.currentVersionId {
            let catalog = try BackupCatalog(store: store, at: current)
            kept = catalog.kept
            forgotten = catalog.backups.count - kept.count
            let bySource = Dictionary(grouping: kept, by: \.source).sorted(by: { $0.key < $1.key })
            let footprints = try BackupFootprint.measure(bySource.map(\.value), in: store)
            all = footprints.all
            for ((name, backups), footprint) in zip(bySource, footprints.each) {
                guard let last = backups.first else { continue }
                sources.append(
                    Source(
                        name: name, backups: backups.count, last: VersionSummary.format(last.date),
                        files: last.record.files, bytes: last.record.bytes, uniqueBytes: footprint.bytes,
                        storedBytes: footprint.storedBytes))
            }
        }
        var measured: [RemoteFootprint] = []
        for name in allRemotes ? try context.remotes().visible().keys.sorted() : remotes {
            measured.append(try await RemoteFootprint.measure(try context.connection(name)))
        }
        let stats = Stats(
            versions: store.history.count, backups: kept.count, forgottenBackups: forgotten,
            releasedRecords: try store.releasedRecords().count,
            restoreBytes: kept.reduce(0) { $0 + $1.record.bytes }, uniqueBytes: all.bytes,
            storedBytes: all.storedBytes, bytesOnDisk: try BackupsCommand.bytesOnDisk(store.rootURL.path),
            sources: sources, remotes: measured)
        if json { try context.writeJSON(stats); return }
        context.writeLine(
            "\(stats.versions) versions; \(stats.backups) backups kept"
                + (forgotten > 0 ? " (\(forgotten) forgotten)" : "") + " of \(sources.count) source"
                + (sources.count == 1 ? "" : "s") + ".")
        for source in sources {
            context.writeLine(
                "  \(source.name): \(source.backups) backup\(source.backups == 1 ? "" : "s"), the last \(source.last): "
                    + "\(source.files) files, \(ProgressLine.size(source.bytes)); "
                    + Self.dedupedAndStored(source.uniqueBytes, source.storedBytes))
        }
        if sources.count > 1 {
            context.writeLine("  all sources: " + Self.dedupedAndStored(stats.uniqueBytes, stats.storedBytes))
        }
        context.writeLine(
            "Every kept backup restored whole: \(ProgressLine.size(stats.restoreBytes)); the store takes "
                + "\(ProgressLine.size(stats.bytesOnDisk)) on disk, history included"
                + (stats.restoreBytes > 0
                    ? String(format: " (%.1f%%)", Double(stats.bytesOnDisk) * 100 / Double(stats.restoreBytes)) : "")
                + (stats.releasedRecords > 0 ? "; \(stats.releasedRecords) records released by prunes." : "."))
        for remote in measured {
            context.writeLine(
                "Remote \(remote.name): \(remote.files) file\(remote.files == 1 ? "" : "s"), "
                    + ProgressLine.size(remote.bytes)
                    + (remote.unsized > 0 ? " (\(remote.unsized) without a size from the service)" : "") + ".")
        }
    }

    /// "its backups hold 1.2 GiB once deduplicated, 400 MiB stored (33%)".
    static func dedupedAndStored(_ unique: Int64, _ stored: Int64) -> String {
        "its backups hold \(ProgressLine.size(unique)) once deduplicated, \(ProgressLine.size(stored)) stored"
            + (unique > 0 ? String(format: " (%.0f%%)", Double(stored) * 100 / Double(unique)) : "")
    }
}
