import Foundation
import LLVS
import LLVSSupport

/// When each source was last backed up by this store, whether or not anything changed, and whether it worked: a run
/// that finds nothing new commits no version, and one that fails commits nothing, so without this a monitor could not
/// tell a backup that ran from one that stopped running or keeps failing. Kept in the store's folder
/// (`last-runs.json`), for this machine only: other devices' runs show as their versions.
public struct BackupRunRecord: Codable, Equatable, Sendable {
    public var date: Date
    /// Whether the run committed a backup (false: nothing had changed, or it failed).
    public var changed: Bool
    public var files: Int
    public var bytes: Int64
    /// Why the run failed; nil when it succeeded.
    public var error: String?
    /// When a run last succeeded (this one's date when it did).
    public var lastSuccess: Date?

    public init(date: Date, changed: Bool, files: Int, bytes: Int64, error: String? = nil, lastSuccess: Date? = nil) {
        self.date = date
        self.changed = changed
        self.files = files
        self.bytes = bytes
        self.error = error
        self.lastSuccess = lastSuccess ?? (error == nil ? date : nil)
    }

    /// Records a failed run of `source`, keeping when the last one succeeded.
    public static func recordFailure(_ error: String, of source: String, in store: Store, date: Date = Date()) throws {
        let previous = all(in: store)[source]
        try record(
            BackupRunRecord(
                date: date, changed: false, files: previous?.files ?? 0, bytes: previous?.bytes ?? 0, error: error,
                lastSuccess: previous?.lastSuccess ?? (previous?.error == nil ? previous?.date : nil)),
            of: source, in: store)
    }

    static func path(in store: Store) -> String { store.rootURL.path + "/last-runs.json" }

    /// Every source's last run; empty when none was recorded (or the file is unreadable: it is only a convenience).
    public static func all(in store: Store) -> [String: BackupRunRecord] {
        ISO8601JSON.read([String: BackupRunRecord].self, from: path(in: store)) ?? [:]
    }

    /// Records a run of `source`, replacing its last one. Two runs at once may each keep only their own source's
    /// record: the file is rewritten whole, atomically.
    public static func record(_ run: BackupRunRecord, of source: String, in store: Store) throws {
        var runs = all(in: store)
        runs[source] = run
        try ISO8601JSON.write(runs, to: path(in: store))
    }
}
