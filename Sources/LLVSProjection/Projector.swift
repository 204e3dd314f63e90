import Foundation
import LLVS
import LLVSModel
import LLVSSQLite

/// Brings a database's projection tables to a version of a store: from the version they reflect, by the
/// differences between the two (so a pass costs what changed), or from nothing after a schema change.
///
/// A pass is one transaction holding the rows and the version marker: a crash leaves the tables at the previous
/// version, and the next pass repeats the work.
struct Projector {
    let types: [ProjectedType]
    let schemaVersion: Int
    private let typesByIdentifier: [String: ProjectedType]

    init(types: [ProjectedType], schemaVersion: Int) throws {
        var byIdentifier: [String: ProjectedType] = [:]
        var tables = Set<String>()
        for type in types {
            _ = try SQLName.checked(type.tableName)
            guard tables.insert(type.tableName).inserted else { throw ProjectionError.duplicateName(type.tableName) }
            guard byIdentifier.updateValue(type, forKey: type.typeIdentifier) == nil else {
                throw ProjectionError.duplicateName(type.typeIdentifier)
            }
            var columns: Set<String> = ["llvs_id"]
            for column in type.columns {
                guard columns.insert(try SQLName.checked(column.name)).inserted else { throw ProjectionError.duplicateName(column.name) }
            }
        }
        self.types = types
        self.schemaVersion = schemaVersion
        self.typesByIdentifier = byIdentifier
    }

    func prepare(_ database: SQLiteDatabase) throws {
        try database.execute(ProjectionState.createStatement())
    }

    /// Projects `target` (no version: empty tables) of `store` into `database`.
    func project(_ target: Version.ID?, of store: Store, into database: SQLiteDatabase) throws -> ProjectionResult {
        var result = ProjectionResult(versionId: target)
        try database.transaction {
            let state = try ProjectionState.read(from: database)
            let tableNames = types.map(\.tableName)
            let knownVersion = state.versionId.map { store.version(identifiedBy: $0) != nil } ?? true
            let rebuild = state.schemaVersion != schemaVersion || state.tables != tableNames || !knownVersion
            if !rebuild && state.versionId == target { return }
            if rebuild {
                for table in Set(state.tables).union(tableNames) {
                    try database.execute("DROP TABLE IF EXISTS \(SQLName.quoted(try SQLName.checked(table)))")
                }
                for type in types { try database.execute(createStatement(for: type)) }
                result.rebuilt = true
            }
            let from = rebuild ? nil : state.versionId
            if let target {
                try store.forEachValueChange(madeBetween: from, and: target) { change in
                    try apply(change, to: database, result: &result)
                }
            } else {
                for type in types { try database.run("DELETE FROM \(SQLName.quoted(type.tableName))") }
            }
            try ProjectionState(versionId: target, schemaVersion: schemaVersion, tables: tableNames).write(to: database)
        }
        return result
    }

    private func createStatement(for type: ProjectedType) -> String {
        let columns = ["llvs_id TEXT PRIMARY KEY NOT NULL"] + type.columns.map { "\(SQLName.quoted($0.name)) \($0.declaration)" }
        return "CREATE TABLE \(SQLName.quoted(type.tableName))(\(columns.joined(separator: ", ")))"
    }

    private func apply(_ change: Value.Change, to database: SQLiteDatabase, result: inout ProjectionResult) throws {
        guard let typeId = ModelValueID.typeIdentifier(of: change.valueId), let type = typesByIdentifier[String(typeId)],
              let instance = ModelValueID.instanceIdentifier(of: change.valueId, typeIdentifier: type.typeIdentifier) else { return }
        let table = SQLName.quoted(type.tableName)
        switch change {
        case .insert(let value), .update(let value):
            let extracted: [String: ProjectedValue]
            do {
                extracted = try type.extract(value)
            } catch {
                result.recordUnreadable(value.id)
                try database.run("DELETE FROM \(table) WHERE llvs_id = ?", [.text(String(instance))])
                return
            }
            for column in extracted.keys where !type.columns.contains(where: { $0.name == column }) {
                throw ProjectionError.unknownColumn(table: type.tableName, column: column)
            }
            let names = ["llvs_id"] + type.columns.map(\.name)
            let placeholders = Array(repeating: "?", count: names.count).joined(separator: ", ")
            let sql = "INSERT OR REPLACE INTO \(table)(\(names.map(SQLName.quoted).joined(separator: ", "))) VALUES (\(placeholders))"
            try database.run(sql, [.text(String(instance))] + type.columns.map { extracted[$0.name] ?? .null })
            result.rowsWritten += 1
        case .remove, .preserveRemoval:
            try database.run("DELETE FROM \(table) WHERE llvs_id = ?", [.text(String(instance))])
            result.rowsRemoved += database.changeCount
        case .preserve:
            break // Differences between two versions are only inserts, updates and removals.
        }
    }
}
