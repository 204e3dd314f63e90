import Foundation
import LLVS
import LLVSBackup
import LLVSSupport

/// One completed backup: the version that completed it, its source and that source's record as of it.
public struct CatalogedBackup: Equatable, Sendable {
    public var version: Version.ID
    public var record: BackupSourceRecord
    /// Whether `llvs forget` removed it (a mark in the version the catalog was read at).
    public var isForgotten: Bool
    /// Its place in the history's topological order: what orders backups whose records give the same second.
    public var sequence: Int

    public var source: String { record.name }
    public var date: Date { record.date }
}

/// Every backup a store's history holds, as of one version: the versions marked completed (checkpoints are not
/// backups), each with its source's record, and which of them are forgotten. Read from version metadata and one
/// record per backup, plus one scan of the version's value IDs for the forget marks.
public struct BackupCatalog: Sendable {
    public let backups: [CatalogedBackup]
    /// The versions that hold a backup under way (their records are checkpoints), not part of any backup kept.
    public let checkpoints: [Version.ID]

    public init(store: Store, at current: Version.ID) throws {
        var marks = Set<Value.ID>()
        try store.forEachValueId(at: current) { id in
            if id.rawValue.hasPrefix(BackupObjectID.forgottenPrefix) { marks.insert(id) }
        }
        let reader = BackupReader(store: store)
        var backups: [CatalogedBackup] = []
        var checkpoints: [Version.ID] = []
        for (sequence, version) in store.history.topologicallySorted().enumerated() {
            if version.metadata[BackupMetadata.checkpoint] != nil { checkpoints.append(version.id) }
            guard let name = try? version.metadata[BackupMetadata.completed]?.decoded(String.self) else { continue }
            guard let record = try reader.record(name, at: version.id) else {
                throw BackupError.missingObject(id: BackupObjectID.source(name).rawValue)
            }
            backups.append(
                CatalogedBackup(
                    version: version.id, record: record,
                    isForgotten: marks.contains(BackupObjectID.forgotten(version.id)), sequence: sequence))
        }
        // Records keep whole seconds: backups made within one second are ordered as the history orders them.
        self.backups = backups.sorted { ($0.date, $0.sequence) > ($1.date, $1.sequence) }
        self.checkpoints = checkpoints
    }

    /// The backups not forgotten, newest first.
    public var kept: [CatalogedBackup] { backups.filter { !$0.isForgotten } }

    /// A source as a command names it: its name, or the path (absolute or relative to the working directory) of the
    /// directory it backs up; `unknownSource` otherwise.
    public func resolvedSource(_ given: String) throws -> String {
        let names = Set(backups.map(\.source))
        if names.contains(given) { return given }
        let path = URL(fileURLWithPath: given).standardizedFileURL.path
        if names.contains(path) { return path }
        let spelled = RawName.encode(Array(path.utf8))
        if let found = backups.first(where: { $0.record.path == spelled }) { return found.source }
        throw BackupError.unknownSource(given, known: names.sorted())
    }

    /// The backup a version completed, if it did.
    public func backup(completedBy version: Version.ID) -> CatalogedBackup? {
        backups.first { $0.version == version }
    }
}

extension BackupCatalog {
    /// Bytes of value data a backup added to the store: those of the version that completed it and of the
    /// checkpoints of its source before it, back along first predecessors to the source's previous backup (what the
    /// run wrote, new chunks and listings, before compression).
    public static func addedBytes(by backup: CatalogedBackup, in store: Store) -> Int64 {
        let history = store.history
        guard var version = history.version(backup.version) else { return 0 }
        var total = version.valueDataSize ?? 0
        while let previous = version.predecessors.flatMap({ history.version($0.idOfFirst) }) {
            let completed = try? previous.metadata[BackupMetadata.completed]?.decoded(String.self)
            if completed == backup.source { break }
            if (try? previous.metadata[BackupMetadata.checkpoint]?.decoded(String.self)) == backup.source {
                total += previous.valueDataSize ?? 0
            } else if previous.metadata[BackupMetadata.checkpoint] == nil, completed == nil {
                break  // a save, a merge or a prune of another kind: not this run's
            }
            version = previous
        }
        return total
    }
}
