import Foundation
import LLVS

extension SQLiteStorage: SnapshotCapable {
    /// A released record (its row gone) is written as zeros in its place, its length from `released`, so the
    /// bundle is laid out as a file store's.
    public func writeBundles(
        of versions: [Version.ID], to archive: SnapshotArchiveWriter, released: Set<RecordLocation>
    ) throws {
        let releasedLengths = Self.lengthsByVersion(released)
        // A connection of its own with one read transaction: WAL gives it a consistent view of the database for the
        // whole copy, while saves go on through the main connection (never a copy of the live file).
        let reader = try SQLiteDatabase(path: path, create: false)
        try reader.execute("BEGIN")
        defer { try? reader.execute("COMMIT") }
        for id in versions {
            let (header, stored) = try readVersion(id, from: reader)
            let gaps = releasedLengths[id] ?? [:]
            var records: [VersionBundle.Record] = []
            var expected: Int64 = 0
            for record in stored {
                while record.offset != expected, let length = gaps[expected] {
                    records.append(VersionBundle.Record(released: expected, length: length))
                    expected += VersionBundle.framedSize(ofRecordWithLength: Int(length))
                }
                guard record.offset == expected else {
                    throw StoreError.corruptFile(
                        path: path, reason: "version \(id) has a gap in its records at offset \(expected)")
                }
                records.append(record)
                expected += VersionBundle.framedSize(ofRecordWithLength: record.data.count)
            }
            while let length = gaps[expected] {
                records.append(VersionBundle.Record(released: expected, length: length))
                expected += VersionBundle.framedSize(ofRecordWithLength: Int(length))
            }
            try archive.append(
                bundle: try VersionBundle.encode(header: header, records: records))
        }
    }

    /// One version's header and records, in offset order.
    private func readVersion(
        _ id: Version.ID, from connection: SQLiteDatabase
    ) throws -> (StoredVersion, [VersionBundle.Record]) {
        var header: Data?
        try connection.run("SELECT header FROM versions WHERE id = ?", [.text(id.rawValue)]) { header = $0.blob(0) }
        guard let header else { throw StoreError.versionNotFound(id) }
        var records: [VersionBundle.Record] = []
        try connection.run(
            "SELECT offset, zone, data FROM records WHERE version = ? ORDER BY offset", [.text(id.rawValue)]
        ) { row in
            guard let (zone, encoding) = SQLiteStorage.parse(tag: row.integer(1)) else { return }
            records.append(
                VersionBundle.Record(offset: row.integer(0), zone: zone, data: row.blob(2), encoding: encoding))
        }
        return (try StoredVersion(decoding: header, source: "\(path), version \(id)"), records)
    }

    /// Inserted in one transaction; the archive is read, never taken over (the database is its own file).
    /// A released record is left out, as a release here leaves it (its row deleted).
    public func restoreBundles(
        from archive: SnapshotArchiveReader, checkedHeaders known: [StoredVersion]?, takingOver: Bool,
        released: Set<RecordLocation>
    ) throws {
        let releasedLengths = Self.lengthsByVersion(released)
        let headers = try known ?? checkedHeaders(of: archive)
        try withConnection { connection in
            try connection.transaction {
                var count: Int64 = 0
                try connection.run("SELECT count(*) FROM versions") { count = $0.integer(0) }
                guard count == 0 else { throw StoreError.storeNotEmpty(path: path) }
                for (entry, header) in zip(archive.entries, headers) {
                    let bundle = try VersionBundle.decode(
                        try archive.bundle(entry), source: "snapshot version \(header.version.id)",
                        released: releasedLengths[header.version.id] ?? [:])
                    try insert(bundle.records, header: bundle.header, into: connection)
                }
            }
        }
    }

    /// Released records by version, each version's as offset → length: what its bundle holds as zeros.
    private static func lengthsByVersion(_ released: Set<RecordLocation>) -> [Version.ID: [Int64: Int64]] {
        var lengths: [Version.ID: [Int64: Int64]] = [:]
        for location in released { lengths[location.versionId, default: [:]][location.offset] = location.length }
        return lengths
    }
}
