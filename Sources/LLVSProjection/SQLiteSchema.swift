import CSQLite3
import Foundation
import LLVSModel
import LLVSSQLite

/// The columns of an owned table, one per stored property of a model, as upstream LLVS derives them.
///
/// Upstream reads the property types with a macro; here `SQLiteSchema(for:)` reads them from the type's
/// `Decodable` conformance (which decode call each property makes). String, integers, Double/Float, Bool, Date,
/// UUID and Data properties (and optionals of them) get columns of their own, indexable and comparable in SQL;
/// anything else is a TEXT column of JSON (query it with `json_extract`, `json_each`).
public struct SQLiteSchema: Sendable {
    /// How a property is held in its column.
    public enum ColumnKind: String, Sendable, Hashable {
        case text, integer, real, boolean, date, uuid, data, json

        /// The column's SQL type. A date is Unix seconds (REAL); a boolean 0 or 1; a UUID its uppercase string.
        public var sqlType: String {
            switch self {
            case .text, .uuid, .json: "TEXT"
            case .integer, .boolean: "INTEGER"
            case .real, .date: "REAL"
            case .data: "BLOB"
            }
        }
    }

    public struct Column: Sendable, Hashable {
        /// The property's key in the model's encoding.
        public var property: String
        /// The column's name: the property in snake_case, with `_` after an SQL keyword.
        public var name: String
        public var kind: ColumnKind
        public var isOptional: Bool

        public init(property: String, name: String? = nil, kind: ColumnKind, isOptional: Bool) {
            self.property = property
            self.name = name ?? SQLiteSchema.columnName(forProperty: property)
            self.kind = kind
            self.isOptional = isOptional
        }

        var declaration: String { kind.sqlType + (isOptional ? "" : " NOT NULL") }
    }

    public var columns: [Column]
    /// Properties the type decodes in a way no column can hold (a nested container of its own): they are not
    /// stored in the table, so a row read back lacks them.
    public var propertiesWithoutColumns: [String]
    /// The model JSON of a row's column values (in `columns` order), made by decoding the model type from them and
    /// encoding it as the type encodes itself; so a row that is no model fails here. Nil for a schema declared
    /// column by column, whose rows are written as JSON objects of their columns.
    let modelJSON: (@Sendable ([SQLiteValue]) throws -> Data)?

    public init(columns: [Column], propertiesWithoutColumns: [String] = []) {
        self.columns = columns
        self.propertiesWithoutColumns = propertiesWithoutColumns
        self.modelJSON = nil
    }

    /// The schema of a model type, read from its `Decodable` conformance.
    public init<M: Codable & Sendable>(for type: M.Type) throws {
        let probe = SchemaProbe.Recorder()
        do {
            _ = try M(from: SchemaProbe.Decoder(recorder: probe))
        } catch let error as ProjectionError {
            throw error
        } catch {
            throw ProjectionError.unreadableSchema(type: String(describing: M.self), reason: "\(error)")
        }
        let columns = probe.columns
        self.columns = columns
        propertiesWithoutColumns = probe.withoutColumns
        modelJSON = { values in try ModelCoding.encode(try M(from: RowDecoder(columns: columns, values: values))) }
    }

    /// `firstName` → `first_name`, `avatarJPEGData` → `avatar_jpeg_data`; an SQL keyword gets a trailing `_`
    /// (`when` → `when_`), by SQLite's own keyword list.
    public static func columnName(forProperty property: String) -> String {
        let characters = Array(property)
        var name = ""
        for (index, character) in characters.enumerated() {
            if character.isUppercase, index > 0 {
                let previous = characters[index - 1]
                let nextIsLower = index + 1 < characters.count && characters[index + 1].isLowercase
                if previous.isLowercase || previous.isNumber || (previous.isUppercase && nextIsLower) {
                    name.append("_")
                }
            }
            name.append(contentsOf: character.lowercased())
        }
        let isKeyword = name.utf8CString.withUnsafeBufferPointer {
            sqlite3_keyword_check($0.baseAddress, Int32($0.count - 1)) != 0
        }
        return isKeyword ? name + "_" : name
    }
}

extension StorableModel {
    /// The owned-table schema of this type (see `SQLiteSchema(for:)`).
    public static var sqliteSchema: SQLiteSchema {
        get throws { try SQLiteSchema(for: Self.self) }
    }
}
