import Foundation
import LLVS
import LLVSBackup

struct HistoryCommand: Command {
    static let name = "history"
    static let summary = "List the versions, newest first, in which a backed-up file changed."
    static let arguments = "PATH"
    static let sourceOption = Option(
        "source", "NAME",
        "the backed-up directory PATH is in (its name or path; needed when the store backs up several)", .text)
    static let options: [any DeclaredOption] = [CommonOptions.json, sourceOption]
    static let positionalCount = 1...1
    static let examples = ["llvs history docs/plan.md", "llvs history ~/Documents/docs/plan.md --json"]

    struct Change: Encodable {
        var version: String
        var date: String
        var change: String
    }

    let path: String
    let json: Bool
    let source: String?

    init(_ arguments: ParsedArguments) throws {
        path = arguments.positionals[0]
        json = arguments[CommonOptions.json]
        source = arguments[Self.sourceOption]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard let current = await coordinator.currentVersionId else {
            throw CommandError.failed("The store is empty: nothing was saved or backed up into it yet.")
        }
        let reader = BackupReader(store: store)
        let stamp: (Version.ID) throws -> String?
        if try reader.hasBackups(at: current) {
            let record = try reader.resolveSource(source, at: current)
            let name = record.name
            let components = RestoreCommand.sourceRelative(path, sourcePath: record.path).split(separator: "/").map {
                RawName.decode(String($0))
            }
            // A file's contents decide (a touch alone is no change); links their target, folders their mode.
            // Versions that did not change the source's record (checkpoints, other sources) are passed over cheaply.
            var byRecord: [Value.Reference: String?] = [:]
            stamp = { version in
                guard let reference = try store.value(id: BackupObjectID.source(name), at: version)?.reference else {
                    return nil
                }
                if let known = byRecord[reference] { return known }
                let found: String?
                if let record = try reader.record(name, at: version),
                    let entry = try reader.entry(at: components, of: record, at: version)
                {
                    switch entry.content {
                    case .embedded(let data): found = "file " + ContentHash(of: data).hex
                    case .chunks(let hashes): found = "file " + hashes.map(\.hex).joined()
                    case .link(let target): found = "link " + RawName.encode(target)
                    case .tree: found = "folder \(entry.mode)"
                    case .device(let number): found = "\(entry.kind) \(number) \(entry.mode)"
                    }
                } else {
                    found = nil
                }
                byRecord[reference] = found
                return found
            }
        } else {
            let path = path.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
            let meta = LegacyBackupLayout.metaId(path)
            stamp = { at in
                try store.value(id: Value.ID(path), at: at)?.storedVersionId?.rawValue
                    ?? store.value(id: meta, at: at)?.storedVersionId?.rawValue
            }
        }
        let history = store.history
        var changes: [(Version, Change)] = []
        for id in history.ancestors(of: current) {
            guard let version = history.version(id) else { continue }
            let now = try stamp(id)
            let before = try version.predecessors.map { try stamp($0.idOfFirst) } ?? nil
            guard now != before else { continue }
            let kind = now == nil ? "removed" : before == nil ? "added" : "changed"
            changes.append(
                (version, Change(version: id.rawValue, date: VersionSummary.format(version.date), change: kind)))
        }
        let ordered = changes.sorted { History.isOrderedBefore($1.0, $0.0) }.map(\.1)
        guard !ordered.isEmpty else { throw CommandError.notFound("No backup holds \(path).") }
        if json {
            try context.writeJSON(ordered)
        } else {
            ordered.forEach { context.writeLine("\($0.version)  \($0.date)  \($0.change)") }
        }
    }
}

struct BackupsCommand: Command {
    static let name = "backups"
    static let summary = "List the directories the store backs up, with the date and size of each one's last backup."
    static let arguments = ""
    static let atOption = Option("at", "VERSION", "as of this version", .text)
    static let options: [any DeclaredOption] = [CommonOptions.json, atOption]
    static let positionalCount = 0...0

    let json: Bool
    let at: String?

    init(_ arguments: ParsedArguments) throws {
        json = arguments[CommonOptions.json]
        at = arguments[Self.atOption]
    }

    func run(in context: CommandContext) async throws {
        let coordinator = try context.openCoordinator()
        let store = coordinator.store
        guard var version = await coordinator.currentVersionId else {
            throw CommandError.failed("The store is empty: nothing was saved or backed up into it yet.")
        }
        if let at { version = try context.resolveVersion(at, in: store).id }
        let reader = BackupReader(store: store)
        let records = try reader.records(at: version)
        let runs = BackupRunRecord.all(in: store)
        if json {
            try context.writeJSON(records.map { Shown(record: $0, lastRun: runs[$0.name]?.date) })
            return
        }
        guard !records.isEmpty else { context.writeLine("No backups in this version."); return }
        for record in records {
            // A run here that found nothing changed (and is not older than the backup shown) is shown beside it.
            let lastRun = runs[record.name].flatMap { !$0.changed && $0.date >= record.date ? $0.date : nil }
            context.writeLine(
                "\(record.name)  \(VersionSummary.format(record.date))  \(record.files) files, \(record.folders) folders, "
                    + "\(ProgressLine.size(record.bytes))"
                    + (record.path != record.name ? "  (from \(record.path))" : "")
                    + (lastRun.map { "  (last run \(VersionSummary.format($0)): nothing changed)" } ?? ""))
        }
        // What keeping them costs: the store's files, every backup's history in them, compressed and stored once.
        let logical = records.reduce(Int64(0)) { $0 + $1.bytes }
        let stored = try Self.bytesOnDisk(store.rootURL.path)
        context.writeLine(
            "The store keeps all of it, with its history, in \(ProgressLine.size(stored)) on disk"
                + (logical > 0
                    ? String(format: " (%.0f%% of the last backups' size)", Double(stored) * 100 / Double(logical))
                    : "")
                + ".")
    }

    /// A source as `backups --json` shows it: its record's fields, and when this store last ran a backup of it.
    struct Shown: Encodable {
        let record: BackupSourceRecord
        let lastRun: Date?

        enum Keys: String, CodingKey { case lastRun }

        func encode(to encoder: any Encoder) throws {
            try record.encode(to: encoder)
            var container = encoder.container(keyedBy: Keys.self)
            try container.encodeIfPresent(lastRun, forKey: .lastRun)
        }
    }

    /// The bytes the store's files (its versions, packs or database) take on disk, leaving out its temporary folder.
    static func bytesOnDisk(_ root: String) throws -> Int64 {
        var total: Int64 = 0
        guard let walk = FileManager.default.enumerator(atPath: root) else { return 0 }
        while let relative = walk.nextObject() as? String {
            if relative == "tmp" { walk.skipDescendants(); continue }
            var info = stat()
            guard lstat(root + "/" + relative, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
            // Blocks, not sizes: a prune frees the blocks of records inside files whose sizes stay.
            total += Int64(info.st_blocks) * 512
        }
        return total
    }
}
