import Foundation
import LLVS
import LLVSSupport

/// When each source was last backed up by this store, whether or not anything changed: a run that finds nothing new
/// commits no version, so without this a monitor could not tell a backup that ran from one that stopped running.
/// Kept in the store's folder (`last-runs.json`), for this machine only: other devices' runs show as their versions.
public struct BackupRunRecord: Codable, Equatable, Sendable {
    public var date: Date
    /// Whether the run committed a backup (false: nothing had changed).
    public var changed: Bool
    public var files: Int
    public var bytes: Int64

    public init(date: Date, changed: Bool, files: Int, bytes: Int64) {
        self.date = date
        self.changed = changed
        self.files = files
        self.bytes = bytes
    }

    static func path(in store: Store) -> String { store.rootURL.path + "/last-runs.json" }

    /// Every source's last run; empty when none was recorded (or the file is unreadable: it is only a convenience).
    public static func all(in store: Store) -> [String: BackupRunRecord] {
        guard let data = try? POSIX.readFile(path(in: store)) else { return [:] }
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return (try? decoder.decode([String: BackupRunRecord].self, from: data)) ?? [:]
    }

    /// Records a run of `source`, replacing its last one. Two runs at once may each keep only their own source's
    /// record: the file is rewritten whole, atomically.
    public static func record(_ run: BackupRunRecord, of source: String, in store: Store) throws {
        var runs = all(in: store)
        runs[source] = run
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        try POSIX.writeAtomically(try encoder.encode(runs), to: path(in: store))
    }
}
