import Foundation
import LLVS
import LLVSSupport

/// SQLite deletes a released record's row and reuses its pages for later rows, but the database file keeps its size.
/// A compaction asks SQLite to rebuild the database without the free pages (`VACUUM`), then empties the write-ahead
/// log the rebuild went through, so the space a prune freed leaves the disk too. Locations are rows' keys, which
/// `VACUUM` keeps.
extension SQLiteStorage: CompactableStorage {
    public func compact(versions: [Version.ID], released: Set<RecordLocation>) throws -> StorageCompaction {
        var report = StorageCompaction()
        let files = [path, path + "-wal"]
        report.bytesBefore = files.reduce(0) { $0 + POSIX.allocatedBytes($1) }
        try withConnection { connection in
            try connection.execute("VACUUM")
            try connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        }
        report.bytesAfter = files.reduce(0) { $0 + POSIX.allocatedBytes($1) }
        report.versions = versions.count
        report.replacedFiles = 1
        return report
    }
}
