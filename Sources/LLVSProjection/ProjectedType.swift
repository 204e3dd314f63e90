import Foundation
import LLVS
import LLVSModel
import LLVSSQLite

/// A value in a projected column: SQLite's storage classes.
public typealias ProjectedValue = SQLiteValue

/// A column of a projection table: its name and its SQL declaration (`"TEXT"`, `"INTEGER NOT NULL"`, …).
public struct ProjectedColumn: Sendable, Hashable {
    public var name: String
    public var declaration: String

    public init(name: String, declaration: String) {
        self.name = name
        self.declaration = declaration
    }
}

/// Which values go into which table, and how a value becomes a row: the values whose ID ends in
/// `"/<typeIdentifier>"` are projected into `tableName`, one row each, keyed by `llvs_id` (the instance
/// identifier), with the columns `extract` returns. A column it leaves out is NULL.
public struct ProjectedType: Sendable {
    public var typeIdentifier: String
    public var tableName: String
    public var columns: [ProjectedColumn]
    /// Reads a value into column values. Throwing marks the value unreadable: it is left out and reported.
    public var extract: @Sendable (Value) throws -> [String: ProjectedValue]

    public init(
        typeIdentifier: String, tableName: String, columns: [ProjectedColumn],
        extract: @escaping @Sendable (Value) throws -> [String: ProjectedValue]
    ) {
        self.typeIdentifier = typeIdentifier
        self.tableName = tableName
        self.columns = columns
        self.extract = extract
    }

    /// A projection of a model type: each value is decoded as `M` (a value that does not decode is unreadable)
    /// and `extract` picks the columns from the model.
    public static func model<M: StorableModel>(
        _ type: M.Type, tableName: String, columns: [ProjectedColumn],
        extract: @escaping @Sendable (M) throws -> [String: ProjectedValue]
    ) -> ProjectedType {
        ProjectedType(typeIdentifier: M.modelTypeIdentifier, tableName: tableName, columns: columns) { value in
            try extract(try ModelCoding.decode(M.self, from: value.data, valueId: value.id))
        }
    }
}
