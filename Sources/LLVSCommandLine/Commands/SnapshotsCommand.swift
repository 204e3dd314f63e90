import Foundation
import LLVS
import LLVSRetention

/// `llvs snapshots`: every completed backup the store keeps (not checkpoints), oldest first, as restic lists its
/// snapshots: the version that completed it (what `restore --at` and `forget` name), when, which source, its size and
/// what it added.
struct SnapshotsCommand: Command {
    static let name = "snapshots"
    static let summary = "List every backup the store keeps, oldest first: version, date, source, files, size, added."
    static let arguments = ""
    static let sourceOption = Option(
        "source", "NAME", "only this backed-up directory (its name or path; repeat for several)", .text,
        repeatable: true)
    static let allOption = Flag("all", "also the backups `llvs forget` removed, marked so")
    static let options: [any DeclaredOption] = [sourceOption, allOption, CommonOptions.json]
    static let positionalCount = 0...0
    static let examples = ["llvs snapshots", "llvs snapshots --source ~/Documents --json"]

    struct Shown: Encodable {
        var version: String
        var date: String
        var source: String
        var path: String
        var files: Int
        var folders: Int
        var bytes: Int64
        var added: Int64
        var forgotten: Bool
    }

    let sources: [String]
    let all: Bool
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        sources = arguments.all(Self.sourceOption)
        all = arguments[Self.allOption]
        json = arguments[CommonOptions.json]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else {
            if json { try context.writeJSON([Shown]()) } else { context.writeLine("No backups.") }
            return
        }
        let catalog = try BackupCatalog(store: store, at: current)
        let wanted = try sources.isEmpty ? nil : Set(sources.map { try catalog.resolvedSource($0) })
        let shown = catalog.backups.reversed()
            .filter { (all || !$0.isForgotten) && (wanted?.contains($0.source) ?? true) }
            .map { backup in
                Shown(
                    version: backup.version.rawValue, date: VersionSummary.format(backup.date), source: backup.source,
                    path: backup.record.path, files: backup.record.files, folders: backup.record.folders,
                    bytes: backup.record.bytes, added: BackupCatalog.addedBytes(by: backup, in: store),
                    forgotten: backup.isForgotten)
            }
        if json { try context.writeJSON(shown); return }
        guard !shown.isEmpty else { context.writeLine("No backups."); return }
        for item in shown {
            context.writeLine(
                "\(item.version)  \(item.date)  \(item.source)  \(item.files) files  "
                    + "\(ProgressLine.size(item.bytes))  +\(ProgressLine.size(item.added))"
                    + (item.forgotten ? "  (forgotten)" : ""))
        }
        let forgotten = catalog.backups.filter(\.isForgotten).count
        context.writeLine(
            "\(shown.count) backup\(shown.count == 1 ? "" : "s")"
                + (forgotten > 0 && !all ? " (\(forgotten) forgotten, not shown: --all shows them)" : "") + ".")
    }
}
