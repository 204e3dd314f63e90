import Foundation
import LLVS
import LLVSBackup

/// What `llvs forget` does to a store's backups: the policy applied to each source's backups on its own, every
/// backup kept or removed with the rules that decided. Backups forgotten before are left out; so are sources not
/// asked for.
public struct ForgetPlan: Sendable {
    public struct Item: Sendable {
        public var backup: CatalogedBackup
        /// The rules that keep it; empty for a backup the plan removes.
        public var reasons: [RetentionReason]
        public var isKept: Bool { !reasons.isEmpty }
    }

    /// Per source (sorted by name), its backups newest first.
    public let sources: [(name: String, items: [Item])]

    public init(
        catalog: BackupCatalog, policy: RetentionPolicy, sources wanted: Set<String>? = nil, now: Date = Date(),
        calendar: Calendar = RetentionPolicy.localCalendar
    ) {
        let bySource = Dictionary(grouping: catalog.kept) { $0.source }
        sources = bySource.keys.sorted().filter { wanted?.contains($0) ?? true }.map { name in
            let backups = bySource[name] ?? []
            let decisions = policy.decide(
                backups.map { (id: $0.version.rawValue, date: $0.date) }, now: now, calendar: calendar)
            return (name, zip(backups, decisions).map { Item(backup: $0, reasons: $1.reasons) })
        }
    }

    public var removed: [CatalogedBackup] { sources.flatMap { $0.items.filter { !$0.isKept }.map(\.backup) } }

    /// The marks that forget the removed backups, as changes for one version: each a small JSON value (which
    /// backup, and when it was forgotten) whose ID is all a reader needs.
    public func marks(date: Date = Date()) throws -> [Value.Change] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        return try removed.map { backup in
            let mark = ForgottenMark(version: backup.version.rawValue, source: backup.source, forgotten: date)
            return .insert(Value(id: BackupObjectID.forgotten(backup.version), data: try encoder.encode(mark)))
        }
    }
}

/// The data of a forget mark: for a person reading the store, since a reader needs only the mark's ID.
public struct ForgottenMark: Codable, Equatable, Sendable {
    public var version: String
    public var source: String
    public var forgotten: Date
}
