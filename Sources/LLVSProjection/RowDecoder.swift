import Foundation
import LLVSSQLite

/// Decodes a model straight from its row's column values, so reading a row costs no JSON but that of its JSON
/// columns: a drain then encodes each changed model once, and a fetch decodes it once.
struct RowDecoder: Decoder {
    /// Column values by property, with their kinds.
    let columns: [String: (kind: SQLiteSchema.ColumnKind, value: SQLiteValue)]
    var codingPath: [any CodingKey] { [] }
    var userInfo: [CodingUserInfoKey: Any] { [:] }

    /// `values` are in the order of `columns`.
    init(columns schemaColumns: [SQLiteSchema.Column], values: [SQLiteValue]) {
        var columns: [String: (kind: SQLiteSchema.ColumnKind, value: SQLiteValue)] = [:]
        for (column, value) in zip(schemaColumns, values) { columns[column.property] = (column.kind, value) }
        self.columns = columns
    }

    func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
        KeyedDecodingContainer(Keyed<Key>(columns: columns))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        throw DecodingError.typeMismatch(
            [Any].self, .init(codingPath: [], debugDescription: "a row is a keyed model, not an array"))
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        throw DecodingError.typeMismatch(
            Any.self, .init(codingPath: [], debugDescription: "a row is a keyed model, not a single value"))
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let columns: [String: (kind: SQLiteSchema.ColumnKind, value: SQLiteValue)]
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { columns.compactMap { $0.value.value == .null ? nil : Key(stringValue: $0.key) } }

        func contains(_ key: Key) -> Bool { columns[key.stringValue] != nil }

        func decodeNil(forKey key: Key) throws -> Bool { (columns[key.stringValue]?.value ?? .null) == .null }

        private func column(_ key: Key, _ type: Any.Type) throws -> (kind: SQLiteSchema.ColumnKind, value: SQLiteValue)
        {
            guard let column = columns[key.stringValue], column.value != .null else {
                throw DecodingError.valueNotFound(
                    type,
                    .init(codingPath: [key], debugDescription: "the column of \(key.stringValue) is NULL or missing"))
            }
            return column
        }

        private func mismatch<T>(_ key: Key, _ type: T.Type, _ value: SQLiteValue) -> DecodingError {
            DecodingError.typeMismatch(
                type, .init(codingPath: [key], debugDescription: "the column of \(key.stringValue) holds \(value)"))
        }

        private func integer<T: FixedWidthInteger>(_ type: T.Type, _ key: Key) throws -> T {
            let (_, value) = try column(key, type)
            guard case .integer(let number) = value, let exact = T(exactly: number) else {
                throw mismatch(key, type, value)
            }
            return exact
        }

        func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool {
            let (_, value) = try column(key, type)
            guard case .integer(let number) = value else { throw mismatch(key, type, value) }
            return number != 0
        }

        func decode(_ type: String.Type, forKey key: Key) throws -> String {
            let (_, value) = try column(key, type)
            guard case .text(let text) = value else { throw mismatch(key, type, value) }
            return text
        }

        func decode(_ type: Double.Type, forKey key: Key) throws -> Double {
            let (_, value) = try column(key, type)
            switch value {
            case .real(let number): return number
            case .integer(let number): return Double(number)
            default: throw mismatch(key, type, value)
            }
        }

        func decode(_ type: Float.Type, forKey key: Key) throws -> Float { Float(try decode(Double.self, forKey: key)) }
        func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try integer(type, key) }
        func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try integer(type, key) }
        func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try integer(type, key) }
        func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try integer(type, key) }
        func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try integer(type, key) }
        func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try integer(type, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try integer(type, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try integer(type, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try integer(type, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try integer(type, key) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            let (kind, value) = try column(key, type)
            let decoded: Any?
            switch (kind, value) {
            case (.date, .real(let seconds)): decoded = Date(timeIntervalSince1970: seconds)
            case (.date, .integer(let seconds)): decoded = Date(timeIntervalSince1970: Double(seconds))
            case (.uuid, .text(let text)): decoded = UUID(uuidString: text)
            case (.data, .blob(let data)): decoded = data
            case (.json, .text(let text)):
                do {
                    return try JSONDecoder().decode(type, from: Data(text.utf8))
                } catch {
                    throw DecodingError.dataCorrupted(
                        .init(codingPath: [key], debugDescription: "the JSON of \(key.stringValue): \(error)"))
                }
            case (.text, .text(let text)): decoded = text
            case (.integer, .integer(let number)): decoded = T.self == Int64.self ? number : Int(exactly: number)
            case (.boolean, .integer(let number)): decoded = number != 0
            case (.real, .real(let number)): decoded = number
            case (.real, .integer(let number)): decoded = Double(number)
            default: decoded = nil
            }
            guard let typed = decoded as? T else { throw mismatch(key, type, value) }
            return typed
        }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) throws -> KeyedDecodingContainer<NestedKey> {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: [key], debugDescription: "\(key.stringValue) has no column"))
        }

        func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: [key], debugDescription: "\(key.stringValue) has no column"))
        }

        func superDecoder() throws -> any Decoder {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "a row has no super decoder"))
        }

        func superDecoder(forKey key: Key) throws -> any Decoder {
            throw DecodingError.keyNotFound(
                key, .init(codingPath: [key], debugDescription: "\(key.stringValue) has no column"))
        }
    }
}
