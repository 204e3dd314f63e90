import Foundation
import LLVS
import LLVSSupport
import Synchronization

/// Storage in one SQLite database (`store.sqlite` in the store's folder), on the system's sqlite3.
///
/// Each version is saved in one transaction, records and header together, so a crash or a killed process
/// leaves the last committed version and nothing half-written. The database runs in WAL mode with a busy
/// timeout, so several processes can share it; within a process one connection, behind a mutex, serves all
/// threads, with its prepared statements kept for reuse.
public final class SQLiteStorage: Storage {
    public let kind = "sqlite"
    public static let fileName = "store.sqlite"
    public let path: String
    private let connection: Mutex<LockedDatabase>
    /// How deep the nested groups of commits are (see `beginGroupedCommits`).
    private let groupDepth = Mutex(0)
    /// The highest version sequence number already returned by `newlyCommittedVersions`.
    private let lastSequence = Mutex<Int64>(0)

    public init(storeRoot: String, create: Bool) throws {
        path = storeRoot + "/" + Self.fileName
        let connection = try SQLiteDatabase(path: path, create: create)
        // Reading the schema first makes SQLite check the file before anything is written to it.
        try connection.run("SELECT count(*) FROM sqlite_master")
        try connection.execute("PRAGMA journal_mode=WAL")
        try connection.execute("PRAGMA synchronous=FULL")
        try connection.execute(
            """
            CREATE TABLE IF NOT EXISTS versions(
                sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                id TEXT NOT NULL UNIQUE,
                header BLOB NOT NULL);
            CREATE TABLE IF NOT EXISTS records(
                version TEXT NOT NULL,
                offset INTEGER NOT NULL,
                zone INTEGER NOT NULL,
                data BLOB NOT NULL,
                PRIMARY KEY (version, offset));
            """)
        // A record's row also holds its version's ID and its place; 4 KiB is far more than they take.
        maximumRecordLength = connection.lengthLimit - 4096
        self.connection = Mutex(LockedDatabase(database: connection))
    }

    /// The largest record a row takes. A larger one is refused before it is read or written (`valueTooLarge`), rather
    /// than read whole into memory for SQLite to refuse when the version commits.
    let maximumRecordLength: Int64

    /// Opens or creates SQLite storage for the stores whose descriptor says `sqlite`, and FileStorage otherwise.
    public static let storageMaker: Store.StorageMaker = { root, descriptor, creating in
        descriptor.storage == "sqlite"
            ? try SQLiteStorage(storeRoot: root, create: creating)
            : try Store.fileStorageMaker(root, descriptor, creating)
    }

    public func newlyCommittedVersions() throws -> [StoredVersion] {
        let after = lastSequence.withLock { $0 }
        var rows: [(Int64, Data)] = []
        try withConnection { connection in
            try connection.run(
                "SELECT sequence, header FROM versions WHERE sequence > ? ORDER BY sequence", [.integer(after)]
            ) { row in
                rows.append((row.integer(0), row.blob(1)))
            }
        }
        let versions = try rows.map { sequence, header in
            try StoredVersion(decoding: header, source: "\(path), version row \(sequence)")
        }
        if let last = rows.last?.0 { lastSequence.withLock { $0 = max($0, last) } }
        return versions
    }

    public func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter {
        SQLiteVersionWriter(versionId: id, storage: self)
    }

    public func readStoredRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [StoredRecord] {
        try locations.map { try readStoredRecord(at: $0, zone: zone) }
    }

    public func copyStoredRecord(
        at location: RecordLocation, zone: StorageZone, into write: (RecordEncoding, Data) throws -> Void
    ) throws {
        let record = try readStoredRecord(at: location, zone: zone)
        try write(record.encoding, record.bytes)
    }

    private func readStoredRecord(at location: RecordLocation, zone: StorageZone) throws -> StoredRecord {
        var found: (tag: Int64, data: Data)?
        try withConnection { connection in
            try connection.run(
                "SELECT zone, data FROM records WHERE version = ? AND offset = ?",
                [.text(location.versionId.rawValue), .integer(location.offset)]
            ) { row in
                found = (row.integer(0), row.blob(1))
            }
        }
        let place = "record \(location.offset) of version \(location.versionId)"
        guard let found else { throw StoreError.corruptFile(path: path, reason: "\(place) is missing") }
        guard let (storedZone, encoding) = Self.parse(tag: found.tag), storedZone == zone else {
            throw StoreError.corruptFile(
                path: path, reason: "\(place) has tag \(found.tag), expected zone \(zone.rawValue)")
        }
        guard Int64(found.data.count) == location.length else {
            throw StoreError.corruptFile(
                path: path, reason: "\(place) has \(found.data.count) bytes, expected \(location.length)")
        }
        return StoredRecord(bytes: found.data, encoding: encoding)
    }

    /// Deletes the rows of released value records (a prune's); SQLite reuses their pages for later writes, and a
    /// released record reads as missing.
    public func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64 {
        var released: Int64 = 0
        try withConnection { connection in
            try connection.transaction {
                for location in Set(locations) {
                    let arguments: [SQLiteValue] = [.text(location.versionId.rawValue), .integer(location.offset)]
                    let valueZone = "(zone & 127) = \(StorageZone.values.rawValue)"
                    try connection.run(
                        "SELECT length(data) FROM records WHERE version = ? AND offset = ? AND " + valueZone, arguments
                    ) { released += $0.integer(0) }
                    try connection.run(
                        "DELETE FROM records WHERE version = ? AND offset = ? AND " + valueZone, arguments)
                }
            }
        }
        return released
    }

    /// A row's `zone` column: the zone with the encoding's bit (`RecordTag`), as in a bundle's record frame.
    static func tag(_ zone: StorageZone, _ encoding: RecordEncoding) -> Int64 {
        Int64(RecordTag(zone: zone, encoding: encoding).byte)
    }

    static func parse(tag: Int64) -> (StorageZone, RecordEncoding)? {
        guard let byte = UInt8(exactly: tag), let tag = RecordTag(byte: byte) else { return nil }
        return (tag.zone, tag.encoding)
    }

    /// Saves a version's records and header in one transaction.
    func commit(_ records: [VersionBundle.Record], header: StoredVersion) throws {
        try withConnection { connection in
            try connection.transaction { try insert(records, header: header, into: connection) }
        }
    }

    /// Inserts one version's rows; the caller holds the lock and a transaction.
    func insert(_ records: [VersionBundle.Record], header: StoredVersion, into connection: SQLiteDatabase) throws {
        let id = header.version.id
        var exists = false
        try connection.run("SELECT 1 FROM versions WHERE id = ?", [.text(id.rawValue)]) { _ in exists = true }
        if exists { throw StoreError.versionAlreadyExists(id) }
        for record in records {
            try connection.run(
                "INSERT INTO records(version, offset, zone, data) VALUES (?, ?, ?, ?)",
                [
                    .text(id.rawValue), .integer(record.offset), .integer(Self.tag(record.zone, record.encoding)),
                    .blob(record.data),
                ])
        }
        try connection.run(
            "INSERT INTO versions(id, header) VALUES (?, ?)", [.text(id.rawValue), .blob(header.encoded())])
    }

    /// Inside a group of commits (a bulk receive), each version's transaction is still atomic but not synced
    /// (`synchronous=NORMAL`: WAL frames reach the disk at the next checkpoint); the end of the group checkpoints
    /// with a sync, so everything committed in it is durable before it returns.
    public func beginGroupedCommits() {
        let first = groupDepth.withLock { depth -> Bool in
            depth += 1
            return depth == 1
        }
        // Should relaxing fail, commits stay synced one by one: slower, never less safe.
        if first { try? withConnection { try $0.execute("PRAGMA synchronous=NORMAL") } }
    }

    public func endGroupedCommits() throws {
        let last = groupDepth.withLock { depth -> Bool in
            depth = max(0, depth - 1)
            return depth == 0
        }
        guard last else { return }
        try withConnection { connection in
            try connection.execute("PRAGMA synchronous=FULL")
            try connection.execute("PRAGMA wal_checkpoint(FULL)")
        }
    }

    /// Runs `body` with the connection, under the lock.
    func withConnection<T>(_ body: (SQLiteDatabase) throws -> T) throws -> T {
        try connection.withLock { try body($0.database) }
    }
}

/// The storage's database, kept behind its mutex.
// @unchecked: it holds a sqlite3 C handle, which only the thread holding SQLiteStorage's lock touches.
private struct LockedDatabase: @unchecked Sendable {
    let database: SQLiteDatabase
}

/// Gathers a version's records; `commit` writes them and the header in one transaction.
/// Records are held in memory until then, which suits app-sized values; FileStorage streams large ones.
/// Each record gets the offset it would have in a version bundle, so snapshots move between storages unchanged.
final class SQLiteVersionWriter: VersionWriter {
    let versionId: Version.ID
    private let storage: SQLiteStorage
    private var records: [VersionBundle.Record] = []
    private var nextOffset: Int64 = 0

    init(versionId: Version.ID, storage: SQLiteStorage) {
        self.versionId = versionId
        self.storage = storage
    }

    func append(_ record: StoredRecord, zone: StorageZone) throws -> RecordLocation {
        try checkLength(Int64(record.bytes.count))
        let location = RecordLocation(versionId: versionId, offset: nextOffset, length: Int64(record.bytes.count))
        records.append(
            VersionBundle.Record(offset: nextOffset, zone: zone, data: record.bytes, encoding: record.encoding))
        nextOffset += VersionBundle.framedSize(ofRecordWithLength: record.bytes.count)
        return location
    }

    /// Refuses a file too large for one row by its size, before reading it into memory.
    func append(
        contentsOf file: URL, zone: StorageZone, encoding: RecordEncoding, digest: DigestStream?
    ) throws -> RecordLocation {
        var info = stat()
        if stat(file.path, &info) == 0 { try checkLength(Int64(info.st_size)) }
        return try appendWhole(contentsOf: file, zone: zone, encoding: encoding, digest: digest)
    }

    /// Refused by the file's size before it is read, as above, even where it would compress to fit: whether a value
    /// fits must not depend on its bytes.
    func appendValue(contentsOf file: URL, digest: DigestStream?) throws -> (RecordLocation, size: Int64) {
        var info = stat()
        if stat(file.path, &info) == 0 { try checkLength(Int64(info.st_size)) }
        return try appendValueWhole(contentsOf: file, digest: digest)
    }

    private func checkLength(_ length: Int64) throws {
        guard length <= storage.maximumRecordLength else {
            throw StoreError.valueTooLarge(bytes: length, limit: storage.maximumRecordLength, storage: "SQLite")
        }
    }

    func commit(_ header: StoredVersion) throws {
        try storage.commit(records, header: header)
        records = []
    }

    func discard() { records = [] }
}
