import Foundation
import LLVSModel
import LLVSSQLite

/// Turns a model's JSON (as stored in a value) into column values and back, by the schema's column kinds. Dates are
/// Unix seconds in the table and seconds since 2001 in the JSON, as upstream converts them at the boundary.
struct RowCoding {
    static let secondsFrom1970To2001 = 978_307_200.0

    let schema: SQLiteSchema
    let table: String

    /// The columns of a model's JSON. A property the JSON lacks (or holds null) is NULL.
    func columns(of json: Data, id: String) throws -> [SQLiteValue] {
        guard let members = (try? JSONTree.parse(json))?.members else {
            throw ProjectionError.unreadableRow(table: table, id: id, reason: "the value is not a JSON object")
        }
        return try schema.columns.map { column in
            guard let member = members[column.property], member != .null else { return .null }
            guard let value = try Self.columnValue(member, kind: column.kind) else {
                throw ProjectionError.unreadableRow(
                    table: table, id: id,
                    reason: "the property \(column.property) does not fit a \(column.kind.rawValue) column")
            }
            return value
        }
    }

    /// The model JSON of a row's column values (in schema order), encoded as the model type encodes itself.
    func json(of values: [SQLiteValue], id: String) throws -> Data {
        if let modelJSON = schema.modelJSON {
            do {
                return try modelJSON(values)
            } catch {
                throw ProjectionError.unreadableRow(table: table, id: id, reason: "\(error)")
            }
        }
        var members: [String: JSONTree] = [:]
        for (column, value) in zip(schema.columns, values) where value != .null {
            guard let member = Self.member(value, kind: column.kind) else {
                throw ProjectionError.unreadableRow(
                    table: table, id: id,
                    reason: "the column \(column.name) holds a value a \(column.kind.rawValue) property cannot take")
            }
            members[column.property] = member
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return try encoder.encode(JSONTree.object(members))
    }

    private static func columnValue(_ member: JSONTree, kind: SQLiteSchema.ColumnKind) throws -> SQLiteValue? {
        switch (kind, member) {
        case (.text, .string(let text)), (.uuid, .string(let text)): return .text(text)
        case (.integer, .integer(let number)): return .integer(number)
        case (.integer, .unsigned(let number)): return Int64(exactly: number).map(SQLiteValue.integer)
        case (.real, .number(let number)): return .real(number)
        case (.real, .integer(let number)): return .real(Double(number))
        case (.boolean, .bool(let flag)): return .integer(flag ? 1 : 0)
        case (.date, .number(let seconds)): return .real(seconds + secondsFrom1970To2001)
        case (.date, .integer(let seconds)): return .real(Double(seconds) + secondsFrom1970To2001)
        case (.data, .string(let base64)): return Data(base64Encoded: base64).map(SQLiteValue.blob)
        case (.json, _):
            let encoder = JSONEncoder()
            encoder.outputFormatting = [.sortedKeys]
            return .text(String(decoding: try encoder.encode(member), as: UTF8.self))
        default: return nil
        }
    }

    private static func member(_ value: SQLiteValue, kind: SQLiteSchema.ColumnKind) -> JSONTree? {
        switch (kind, value) {
        case (.text, .text(let text)), (.uuid, .text(let text)): return .string(text)
        case (.integer, .integer(let number)): return .integer(number)
        case (.real, .real(let number)): return .number(number)
        case (.real, .integer(let number)): return .number(Double(number))
        case (.boolean, .integer(let flag)): return .bool(flag != 0)
        case (.date, .real(let seconds)): return .number(seconds - secondsFrom1970To2001)
        case (.date, .integer(let seconds)): return .number(Double(seconds) - secondsFrom1970To2001)
        case (.data, .blob(let data)): return .string(data.base64EncodedString())
        case (.json, .text(let text)): return try? JSONTree.parse(Data(text.utf8))
        default: return nil
        }
    }
}
