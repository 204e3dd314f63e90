import CSQLite3
import Foundation
import LLVS

/// One SQLite connection with its prepared statements, on the system's sqlite3.
///
/// A connection is not thread-safe, so this type is not `Sendable`: whoever opens it owns it (`SQLiteStorage`
/// behind a mutex, a projection follower inside its actor, an app on its own queue). Failures are
/// `StoreError.database` (with SQLite's code and message) or `StoreError.corruptFile`, both naming the file.
public final class SQLiteDatabase {
    public let path: String
    private let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// The 16 bytes every SQLite database file starts with.
    static let fileHeader = Array("SQLite format 3\0".utf8)

    /// Opens the database at `path`. An existing file must be a SQLite database: that is checked on its first
    /// bytes before SQLite opens it, so nothing (not even a journal-mode change) is written to a foreign file.
    /// Opens (or creates) the database at `fileURL`, in WAL mode so readers in other processes do not block its
    /// writer, with a 10-second busy timeout.
    public convenience init(fileURL: URL) throws {
        try self.init(path: fileURL.path, create: true)
        try execute("PRAGMA journal_mode=WAL")
    }

    init(path: String, create: Bool, busyTimeout: Int32 = 10_000) throws {
        self.path = path
        if FileManager.default.fileExists(atPath: path) {
            let header =
                FileHandle(forReadingAtPath: path).map { handle in
                    defer { try? handle.close() }
                    return (try? handle.read(upToCount: 16)) ?? Data()
                } ?? Data()
            // An empty file is what SQLite itself leaves before the first write; anything else must carry the header.
            if !header.isEmpty, [UInt8](header) != Self.fileHeader {
                throw StoreError.corruptFile(path: path, reason: "it is not a SQLite database")
            }
        } else if !create {
            throw StoreError.corruptFile(path: path, reason: "the store's database is missing")
        }
        var handle: OpaquePointer?
        let flags = SQLITE_OPEN_READWRITE | (create ? SQLITE_OPEN_CREATE : 0) | SQLITE_OPEN_NOMUTEX
        let code = sqlite3_open_v2(path, &handle, flags, nil)
        guard code == SQLITE_OK, let handle else {
            let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
            sqlite3_close(handle)
            throw StoreError.database(path: path, code: code, message: message)
        }
        db = handle
        sqlite3_busy_timeout(db, busyTimeout)
        sqlite3_extended_result_codes(db, 1)
    }

    deinit {
        for statement in statements.values { sqlite3_finalize(statement) }
        sqlite3_close_v2(db)
    }

    /// The most bytes SQLite takes in one string or blob (and in one row), as this connection is configured.
    public var lengthLimit: Int64 { Int64(sqlite3_limit(db, SQLITE_LIMIT_LENGTH, -1)) }

    /// The number of rows the last INSERT, UPDATE or DELETE changed.
    public var changeCount: Int { Int(sqlite3_changes64(db)) }

    func error(_ code: Int32) -> StoreError {
        let primary = code & 0xff
        let message = String(cString: sqlite3_errmsg(db))
        if primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB {
            return .corruptFile(path: path, reason: message)
        }
        return .database(path: path, code: code, message: message)
    }

    /// Runs one or more statements without arguments (schema changes, pragmas).
    public func execute(_ sql: String) throws {
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Runs a query and calls `rowHandler` for each row (upstream LLVS's name for `run`).
    public func forEach(
        matchingQuery query: String, withBindings bindings: [SQLiteValue] = [],
        rowHandler: (SQLiteRow) throws -> Void
    ) throws {
        try withoutActuallyEscaping(rowHandler) { try run(query, bindings, row: $0) }
    }

    /// Runs a prepared (and cached) statement, binding `arguments` in order, and calls `row` for each result row.
    public func run(_ sql: String, _ arguments: [SQLiteValue] = [], row: ((SQLiteRow) throws -> Void)? = nil) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let code: Int32
            switch argument {
            case .null: code = sqlite3_bind_null(statement, position)
            case .integer(let value): code = sqlite3_bind_int64(statement, position, value)
            case .real(let value): code = sqlite3_bind_double(statement, position, value)
            case .text(let value): code = sqlite3_bind_text(statement, position, value, -1, llvs_sqlite_transient())
            case .blob(let value):
                code = value.withUnsafeBytes { raw in
                    sqlite3_bind_blob64(
                        statement, position, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1),
                        sqlite3_uint64(raw.count), llvs_sqlite_transient())
                }
            }
            guard code == SQLITE_OK else { throw error(code) }
        }
        while true {
            let code = sqlite3_step(statement)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw error(code) }
            try row?(SQLiteRow(statement: statement))
        }
    }

    private func prepared(_ sql: String) throws -> OpaquePointer {
        if let statement = statements[sql] { return statement }
        var statement: OpaquePointer?
        let code = sqlite3_prepare_v3(db, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
        guard code == SQLITE_OK, let statement else { throw error(code) }
        statements[sql] = statement
        return statement
    }

    /// Runs `body` in one IMMEDIATE transaction: all of it is committed, or none of it.
    public func transaction<T>(_ body: () throws -> T) throws -> T {
        try execute("BEGIN IMMEDIATE")
        do {
            let result = try body()
            try execute("COMMIT")
            return result
        } catch {
            try? execute("ROLLBACK")
            throw error
        }
    }
}

/// A value bound to a statement or read from a row: SQLite's five storage classes.
public enum SQLiteValue: Hashable, Sendable {
    case null
    case integer(Int64)
    case real(Double)
    case text(String)
    case blob(Data)
}

/// The current row of a statement, valid only inside the row callback.
public struct SQLiteRow {
    let statement: OpaquePointer

    public var columnCount: Int { Int(sqlite3_column_count(statement)) }

    public func columnName(at column: Int) -> String {
        sqlite3_column_name(statement, Int32(column)).map { String(cString: $0) } ?? ""
    }

    /// The column's value in the storage class SQLite holds it in.
    public func value(inColumnAtIndex column: Int) -> SQLiteValue {
        let index = Int32(column)
        switch sqlite3_column_type(statement, index) {
        case SQLITE_INTEGER: return .integer(integer(index))
        case SQLITE_FLOAT: return .real(sqlite3_column_double(statement, index))
        case SQLITE_TEXT: return .text(text(index))
        case SQLITE_BLOB: return .blob(blob(index))
        default: return .null
        }
    }

    func integer(_ column: Int32) -> Int64 { sqlite3_column_int64(statement, column) }

    func text(_ column: Int32) -> String {
        sqlite3_column_text(statement, column).map { String(cString: $0) } ?? ""
    }

    func blob(_ column: Int32) -> Data {
        let count = Int(sqlite3_column_bytes(statement, column))
        guard count > 0, let bytes = sqlite3_column_blob(statement, column) else { return Data() }
        return Data(bytes: bytes, count: count)
    }
}
