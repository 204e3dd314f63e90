import Foundation
import LLVS
import LLVSModel
import LLVSSQLite

/// A SQLite table an app writes with plain SQL, whose row changes become versions of a store ("local-first
/// SQLite", as upstream LLVS offers it).
///
/// Each row is one model (`llvs_id` is its instance identifier; the value is `"<llvs_id>/<typeIdentifier>"`, the
/// model's JSON, exactly what `StoreCoordinator.save(_:instanceIdentifier:)` would store). Triggers record which
/// rows changed; `drain` turns them into one version on top of the version the table is a working copy of;
/// `apply` brings changes from elsewhere (a sync) into the rows without recording them as local changes.
public struct OwnedTable: Sendable {
    public let typeIdentifier: String
    public let tableName: String
    public let schema: SQLiteSchema

    static let changesTable = "llvs_owned_changes"
    static let stateTable = "llvs_owned_state"

    public init(typeIdentifier: String, tableName: String, schema: SQLiteSchema) throws {
        guard !typeIdentifier.isEmpty, !typeIdentifier.contains("/") else {
            throw ModelError.invalidTypeIdentifier(typeIdentifier)
        }
        var names: Set<String> = ["llvs_id"]
        for column in schema.columns {
            guard names.insert(try SQLName.checked(column.name)).inserted else {
                throw ProjectionError.duplicateName(column.name)
            }
        }
        self.typeIdentifier = typeIdentifier
        self.tableName = try SQLName.checked(tableName)
        self.schema = schema
    }

    /// The table of a model type, with the schema read from the type.
    public init<M: StorableModel>(_ type: M.Type, tableName: String) throws {
        try self.init(typeIdentifier: M.modelTypeIdentifier, tableName: tableName, schema: try M.sqliteSchema)
    }

    /// The statements that make the table, its change-recording triggers and the bookkeeping tables; each may be
    /// run again harmlessly. An app may add indexes of its own.
    public func createStatements() -> [String] {
        let table = SQLName.quoted(tableName)
        let columns =
            ["llvs_id TEXT PRIMARY KEY NOT NULL"]
            + schema.columns.map { "\(SQLName.quoted($0.name)) \($0.declaration)" }
        let recording =
            "NOT EXISTS (SELECT 1 FROM \(Self.stateTable) WHERE table_name = '\(tableName)' AND applying = 1)"
        func record(_ row: String) -> String {
            "INSERT OR IGNORE INTO \(Self.changesTable)(table_name, llvs_id) VALUES ('\(tableName)', \(row).llvs_id);"
        }
        return [
            "CREATE TABLE IF NOT EXISTS \(Self.changesTable)(table_name TEXT NOT NULL, llvs_id TEXT NOT NULL, PRIMARY KEY (table_name, llvs_id))",
            "CREATE TABLE IF NOT EXISTS \(Self.stateTable)(table_name TEXT PRIMARY KEY NOT NULL, version TEXT, applying INTEGER NOT NULL DEFAULT 0)",
            "INSERT OR IGNORE INTO \(Self.stateTable)(table_name) VALUES ('\(tableName)')",
            "CREATE TABLE IF NOT EXISTS \(table)(\(columns.joined(separator: ", ")))",
            "CREATE TRIGGER IF NOT EXISTS \(SQLName.quoted("llvs_\(tableName)_insert")) AFTER INSERT ON \(table) WHEN \(recording) BEGIN \(record("NEW")) END",
            "CREATE TRIGGER IF NOT EXISTS \(SQLName.quoted("llvs_\(tableName)_update")) AFTER UPDATE ON \(table) WHEN \(recording) BEGIN \(record("OLD")) \(record("NEW")) END",
            "CREATE TRIGGER IF NOT EXISTS \(SQLName.quoted("llvs_\(tableName)_delete")) AFTER DELETE ON \(table) WHEN \(recording) BEGIN \(record("OLD")) END",
        ]
    }

    /// Runs `createStatements()`.
    public func create(in database: SQLiteDatabase) throws {
        for statement in createStatements() { try database.execute(statement) }
    }

    /// The version the table is a working copy of (nil before the first drain or apply).
    public func currentVersion(in database: SQLiteDatabase) throws -> Version.ID? {
        var version: Version.ID?
        try database.run("SELECT version FROM \(Self.stateTable) WHERE table_name = ?", [.text(tableName)]) { row in
            if case .text(let id) = row.value(inColumnAtIndex: 0) { version = Version.ID(id) }
        }
        return version
    }

    /// How many rows changed since the last drain.
    public func pendingChangeCount(in database: SQLiteDatabase) throws -> Int {
        var count = 0
        try database.run("SELECT count(*) FROM \(Self.changesTable) WHERE table_name = ?", [.text(tableName)]) { row in
            if case .integer(let n) = row.value(inColumnAtIndex: 0) { count = Int(n) }
        }
        return count
    }

    /// The rows, as models, optionally filtered by an SQL condition with `?` bindings
    /// (`where: "updated_at > ?", bindings: [.real(cutoff)]`), in `llvs_id` order.
    public func fetch<M: StorableModel>(
        _ type: M.Type, in database: SQLiteDatabase, where condition: String? = nil,
        bindings: [SQLiteValue] = []
    ) throws -> [OwnedRow<M>] {
        var rows: [OwnedRow<M>] = []
        let filter = condition.map { " WHERE \($0)" } ?? ""
        try database.run(
            "SELECT \(selectedColumns) FROM \(SQLName.quoted(tableName))\(filter) ORDER BY llvs_id", bindings
        ) { row in
            guard case .text(let id) = row.value(inColumnAtIndex: 0) else { return }
            let values = (0..<schema.columns.count).map { row.value(inColumnAtIndex: $0 + 1) }
            do {
                rows.append(OwnedRow(id: id, model: try M(from: RowDecoder(columns: schema.columns, values: values))))
            } catch {
                throw ProjectionError.unreadableRow(table: tableName, id: id, reason: "\(error)")
            }
        }
        return rows
    }

    var selectedColumns: String {
        (["llvs_id"] + schema.columns.map { SQLName.quoted($0.name) }).joined(separator: ", ")
    }

    func valueId(_ rowId: String) throws -> Value.ID {
        try ModelValueID.make(instanceIdentifier: rowId, typeIdentifier: typeIdentifier)
    }
}

/// A row of an owned table read as its model.
public struct OwnedRow<M: StorableModel>: Sendable {
    public var id: String
    public var model: M
}
