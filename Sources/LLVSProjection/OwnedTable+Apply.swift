import Foundation
import LLVS
import LLVSModel
import LLVSSQLite

extension OwnedTable {
    /// Applies value changes made elsewhere (`store.valueChanges(madeBetween: table version, and: version)`) to the
    /// rows, without recording them as local changes, and makes `version` the table's version, in one transaction.
    /// Changes to other types are skipped; a value that does not fit the schema is left out and reported.
    ///
    /// Fails with `undrainedChanges` while local changes wait to be drained: applying would overwrite them.
    @discardableResult
    public func apply(
        _ changes: [Value.Change], in database: SQLiteDatabase, atVersion version: Version.ID
    ) throws -> ProjectionResult {
        try database.transaction {
            let pending = try pendingChangeCount(in: database)
            guard pending == 0 else { throw ProjectionError.undrainedChanges(table: tableName, count: pending) }
            try database.run("UPDATE \(Self.stateTable) SET applying = 1 WHERE table_name = ?", [.text(tableName)])
            var result = ProjectionResult(versionId: version)
            let coding = RowCoding(schema: schema, table: tableName)
            let table = SQLName.quoted(tableName)
            let placeholders = Array(repeating: "?", count: schema.columns.count + 1).joined(separator: ", ")
            let replace = "INSERT OR REPLACE INTO \(table)(\(selectedColumns)) VALUES (\(placeholders))"
            for change in changes {
                guard let rowId = ModelValueID.instanceIdentifier(of: change.valueId, typeIdentifier: typeIdentifier)
                else { continue }
                switch change {
                case .insert(let value), .update(let value):
                    guard let columns = try? coding.columns(of: value.data, id: String(rowId)) else {
                        result.recordUnreadable(value.id)
                        continue
                    }
                    try database.run(replace, [.text(String(rowId))] + columns)
                    result.rowsWritten += 1
                case .remove, .preserveRemoval:
                    try database.run("DELETE FROM \(table) WHERE llvs_id = ?", [.text(String(rowId))])
                    if database.changeCount > 0 { result.rowsRemoved += 1 }
                case .preserve(let reference):
                    throw ProjectionError.unappliableChange(valueId: reference.valueId)
                }
            }
            try database.run(
                "UPDATE \(Self.stateTable) SET applying = 0, version = ? WHERE table_name = ?",
                [.text(version.rawValue), .text(tableName)])
            return result
        }
    }

    /// Brings the table from its version to `version` of `store` (every row, when it has none yet).
    @discardableResult
    public func apply(
        changesIn store: Store, upTo version: Version.ID, in database: SQLiteDatabase
    ) throws -> ProjectionResult {
        let from = try currentVersion(in: database)
        return try apply(try store.valueChanges(madeBetween: from, and: version), in: database, atVersion: version)
    }
}
