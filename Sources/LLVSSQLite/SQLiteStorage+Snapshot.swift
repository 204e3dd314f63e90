import Foundation
import LLVS

extension SQLiteStorage: SnapshotCapable {
    public func writeBundles(of versions: [Version.ID], to archive: SnapshotArchiveWriter) throws {
        // Committed versions never change, so reading a fixed list version by version is a consistent copy
        // while other saves go on; each version is read under the lock in one piece.
        for id in versions {
            let (header, records) = try withConnection { connection -> (Data?, [VersionBundle.Record]) in
                var header: Data?
                try connection.run("SELECT header FROM versions WHERE id = ?", [.text(id.rawValue)]) { header = $0.blob(0) }
                var records: [VersionBundle.Record] = []
                try connection.run("SELECT offset, zone, data FROM records WHERE version = ? ORDER BY offset", [.text(id.rawValue)]) { row in
                    records.append(VersionBundle.Record(offset: row.integer(0), zone: StorageZone(rawValue: UInt8(truncatingIfNeeded: row.integer(1))) ?? .values,
                                                        data: row.blob(2)))
                }
                return (header, records)
            }
            guard let header else { throw StoreError.versionNotFound(id) }
            let stored = try StoredVersion(decoding: header, source: "\(path), version \(id)")
            var expected: Int64 = 0
            for record in records {
                guard record.offset == expected else {
                    throw StoreError.corruptFile(path: path, reason: "version \(id) has a gap in its records at offset \(expected)")
                }
                expected += VersionBundle.framedSize(ofRecordWithLength: record.data.count)
            }
            try archive.append(bundle: try VersionBundle.encode(header: stored, records: records.map { ($0.zone, $0.data) }))
        }
    }

    public func restoreBundles(from archive: SnapshotArchiveReader) throws {
        let headers = try checkedHeaders(of: archive)
        try withConnection { connection in
            try connection.transaction {
                var count: Int64 = 0
                try connection.run("SELECT count(*) FROM versions") { count = $0.integer(0) }
                guard count == 0 else { throw StoreError.storeNotEmpty(path: path) }
                for (entry, header) in zip(archive.entries, headers) {
                    let bundle = try VersionBundle.decode(try archive.bundle(entry), source: "snapshot version \(header.version.id)")
                    try insert(bundle.records, header: bundle.header, into: connection)
                }
            }
        }
    }
}
