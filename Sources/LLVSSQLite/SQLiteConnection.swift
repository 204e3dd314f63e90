import CSQLite3
import Foundation
import LLVS

/// One SQLite connection with its prepared statements. Not thread-safe by itself: `SQLiteStorage` keeps it
/// behind a Mutex, so exactly one thread uses it at a time.
// @unchecked: wraps the sqlite3 C handle, which is only ever touched inside SQLiteStorage's mutex.
final class SQLiteConnection: @unchecked Sendable {
    let path: String
    private let db: OpaquePointer
    private var statements: [String: OpaquePointer] = [:]

    /// The 16 bytes every SQLite database file starts with.
    static let fileHeader = Array("SQLite format 3\0".utf8)

    /// Opens the database at `path`. An existing file must be a SQLite database: that is checked on its first
    /// bytes before SQLite opens it, so nothing (not even a journal-mode change) is written to a foreign file.
    init(path: String, create: Bool, busyTimeout: Int32 = 10_000) throws {
        self.path = path
        if FileManager.default.fileExists(atPath: path) {
            let header = FileHandle(forReadingAtPath: path).map { handle in
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

    func error(_ code: Int32) -> StoreError {
        let primary = code & 0xff
        let message = String(cString: sqlite3_errmsg(db))
        if primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB {
            return .corruptFile(path: path, reason: message)
        }
        return .database(path: path, code: code, message: message)
    }

    func execute(_ sql: String) throws {
        let code = sqlite3_exec(db, sql, nil, nil, nil)
        guard code == SQLITE_OK else { throw error(code) }
    }

    /// Runs a prepared (and cached) statement, binding `arguments` in order, and calls `row` for each result row.
    func run(_ sql: String, _ arguments: [SQLiteValue] = [], row: ((SQLiteRow) throws -> Void)? = nil) throws {
        let statement = try prepared(sql)
        defer {
            sqlite3_reset(statement)
            sqlite3_clear_bindings(statement)
        }
        for (index, argument) in arguments.enumerated() {
            let position = Int32(index + 1)
            let code: Int32
            switch argument {
            case .integer(let value): code = sqlite3_bind_int64(statement, position, value)
            case .text(let value): code = sqlite3_bind_text(statement, position, value, -1, llvs_sqlite_transient())
            case .blob(let value):
                code = value.withUnsafeBytes { raw in
                    sqlite3_bind_blob64(statement, position, raw.baseAddress ?? UnsafeRawPointer(bitPattern: 1), sqlite3_uint64(raw.count), llvs_sqlite_transient())
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
    func transaction<T>(_ body: () throws -> T) throws -> T {
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

enum SQLiteValue {
    case integer(Int64)
    case text(String)
    case blob(Data)
}

/// The current row of a statement, valid only inside the row callback.
struct SQLiteRow {
    let statement: OpaquePointer

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
