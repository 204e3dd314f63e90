import Foundation

/// A decoder that builds a throwaway instance of a model to learn, from the calls its `init(from:)` makes on the
/// top-level keyed container, which properties it has and of what type. Below the top level it answers every
/// question with an empty value (0, "", false, no elements) so nested types can be made too.
enum SchemaProbe {
    final class Recorder {
        var columns: [SQLiteSchema.Column] = []
        var withoutColumns: [String] = []
        private var seen: Set<String> = []

        func record(_ property: String, _ kind: SQLiteSchema.ColumnKind, optional: Bool) {
            guard seen.insert(property).inserted else { return }
            columns.append(SQLiteSchema.Column(property: property, kind: kind, isOptional: optional))
        }

        func recordWithoutColumn(_ property: String) {
            guard seen.insert(property).inserted else { return }
            withoutColumns.append(property)
        }
    }

    /// The column kind of a property type; nil for types stored as JSON.
    static func kind<T>(of type: T.Type) -> SQLiteSchema.ColumnKind? {
        switch type {
        case is String.Type: .text
        case is Bool.Type: .boolean
        case is Double.Type, is Float.Type: .real
        case is Int.Type, is Int8.Type, is Int16.Type, is Int32.Type, is Int64.Type,
            is UInt.Type, is UInt8.Type, is UInt16.Type, is UInt32.Type, is UInt64.Type:
            .integer
        case is Date.Type: .date
        case is UUID.Type: .uuid
        case is Data.Type: .data
        default: nil
        }
    }

    /// An instance of `T` made from empty answers. Foundation types whose decoding checks its input get a valid one.
    static func placeholder<T: Decodable>(_ type: T.Type) throws -> T {
        let known: Any? =
            switch type {
            case is Date.Type: Date(timeIntervalSinceReferenceDate: 0)
            case is UUID.Type: UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))
            case is Data.Type: Data()
            case is URL.Type: URL(fileURLWithPath: "/")
            case is Decimal.Type: Decimal(0)
            default: nil
            }
        if let value = known as? T { return value }
        return try T(from: Decoder(recorder: nil))
    }

    struct Decoder: Swift.Decoder {
        /// Set only for the model's own (top-level) decoder.
        let recorder: Recorder?
        var codingPath: [any CodingKey] { [] }
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedDecodingContainer<Key> {
            KeyedDecodingContainer(Keyed<Key>(recorder: recorder))
        }
        func unkeyedContainer() -> any UnkeyedDecodingContainer { Unkeyed() }
        func singleValueContainer() -> any SingleValueDecodingContainer { Single() }
    }

    struct Keyed<Key: CodingKey>: KeyedDecodingContainerProtocol {
        let recorder: Recorder?
        var codingPath: [any CodingKey] { [] }
        var allKeys: [Key] { [] }

        /// At the top level every key is there, so code that asks before decoding still decodes and is seen.
        func contains(_ key: Key) -> Bool { recorder != nil }
        func decodeNil(forKey key: Key) -> Bool { false }

        private func value<T>(_ empty: T, _ key: Key, optional: Bool = false) -> T {
            recorder?.record(key.stringValue, SchemaProbe.kind(of: T.self) ?? .json, optional: optional)
            return empty
        }

        func decode(_ type: Bool.Type, forKey key: Key) -> Bool { value(false, key) }
        func decode(_ type: String.Type, forKey key: Key) -> String { value("", key) }
        func decode(_ type: Double.Type, forKey key: Key) -> Double { value(0, key) }
        func decode(_ type: Float.Type, forKey key: Key) -> Float { value(0, key) }
        func decode(_ type: Int.Type, forKey key: Key) -> Int { value(0, key) }
        func decode(_ type: Int8.Type, forKey key: Key) -> Int8 { value(0, key) }
        func decode(_ type: Int16.Type, forKey key: Key) -> Int16 { value(0, key) }
        func decode(_ type: Int32.Type, forKey key: Key) -> Int32 { value(0, key) }
        func decode(_ type: Int64.Type, forKey key: Key) -> Int64 { value(0, key) }
        func decode(_ type: UInt.Type, forKey key: Key) -> UInt { value(0, key) }
        func decode(_ type: UInt8.Type, forKey key: Key) -> UInt8 { value(0, key) }
        func decode(_ type: UInt16.Type, forKey key: Key) -> UInt16 { value(0, key) }
        func decode(_ type: UInt32.Type, forKey key: Key) -> UInt32 { value(0, key) }
        func decode(_ type: UInt64.Type, forKey key: Key) -> UInt64 { value(0, key) }

        func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T {
            do {
                return value(try SchemaProbe.placeholder(T.self), key)
            } catch {
                guard recorder != nil else { throw error }
                throw ProjectionError.unreadableSchema(
                    type: String(describing: T.self),
                    reason:
                        "the property \(key.stringValue) could not be made from empty values (\(error)); declare the schema column by column"
                )
            }
        }

        private func absent<T>(_ type: T.Type, _ key: Key) -> T? {
            recorder?.record(key.stringValue, SchemaProbe.kind(of: T.self) ?? .json, optional: true)
            return nil
        }

        func decodeIfPresent(_ type: Bool.Type, forKey key: Key) -> Bool? { absent(type, key) }
        func decodeIfPresent(_ type: String.Type, forKey key: Key) -> String? { absent(type, key) }
        func decodeIfPresent(_ type: Double.Type, forKey key: Key) -> Double? { absent(type, key) }
        func decodeIfPresent(_ type: Float.Type, forKey key: Key) -> Float? { absent(type, key) }
        func decodeIfPresent(_ type: Int.Type, forKey key: Key) -> Int? { absent(type, key) }
        func decodeIfPresent(_ type: Int8.Type, forKey key: Key) -> Int8? { absent(type, key) }
        func decodeIfPresent(_ type: Int16.Type, forKey key: Key) -> Int16? { absent(type, key) }
        func decodeIfPresent(_ type: Int32.Type, forKey key: Key) -> Int32? { absent(type, key) }
        func decodeIfPresent(_ type: Int64.Type, forKey key: Key) -> Int64? { absent(type, key) }
        func decodeIfPresent(_ type: UInt.Type, forKey key: Key) -> UInt? { absent(type, key) }
        func decodeIfPresent(_ type: UInt8.Type, forKey key: Key) -> UInt8? { absent(type, key) }
        func decodeIfPresent(_ type: UInt16.Type, forKey key: Key) -> UInt16? { absent(type, key) }
        func decodeIfPresent(_ type: UInt32.Type, forKey key: Key) -> UInt32? { absent(type, key) }
        func decodeIfPresent(_ type: UInt64.Type, forKey key: Key) -> UInt64? { absent(type, key) }
        func decodeIfPresent<T: Decodable>(_ type: T.Type, forKey key: Key) -> T? { absent(type, key) }

        func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type, forKey key: Key
        ) -> KeyedDecodingContainer<NestedKey> {
            recorder?.recordWithoutColumn(key.stringValue)
            return KeyedDecodingContainer(Keyed<NestedKey>(recorder: nil))
        }
        func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedDecodingContainer {
            recorder?.recordWithoutColumn(key.stringValue)
            return Unkeyed()
        }
        func superDecoder() -> any Swift.Decoder { Decoder(recorder: nil) }
        func superDecoder(forKey key: Key) -> any Swift.Decoder {
            recorder?.recordWithoutColumn(key.stringValue)
            return Decoder(recorder: nil)
        }
    }

    /// An empty array: at its end from the start.
    struct Unkeyed: UnkeyedDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        var count: Int? { 0 }
        var isAtEnd: Bool { true }
        var currentIndex: Int { 0 }

        private func end<T>() throws -> T {
            throw DecodingError.valueNotFound(
                T.self, .init(codingPath: [], debugDescription: "an empty array has no elements"))
        }
        mutating func decodeNil() throws -> Bool { try end() }
        mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try end() }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy type: NestedKey.Type
        ) throws -> KeyedDecodingContainer<NestedKey> { try end() }
        mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer { try end() }
        mutating func superDecoder() throws -> any Swift.Decoder { try end() }
    }

    struct Single: SingleValueDecodingContainer {
        var codingPath: [any CodingKey] { [] }
        func decodeNil() -> Bool { false }
        func decode(_ type: Bool.Type) -> Bool { false }
        func decode(_ type: String.Type) -> String { "" }
        func decode(_ type: Double.Type) -> Double { 0 }
        func decode(_ type: Float.Type) -> Float { 0 }
        func decode(_ type: Int.Type) -> Int { 0 }
        func decode(_ type: Int8.Type) -> Int8 { 0 }
        func decode(_ type: Int16.Type) -> Int16 { 0 }
        func decode(_ type: Int32.Type) -> Int32 { 0 }
        func decode(_ type: Int64.Type) -> Int64 { 0 }
        func decode(_ type: UInt.Type) -> UInt { 0 }
        func decode(_ type: UInt8.Type) -> UInt8 { 0 }
        func decode(_ type: UInt16.Type) -> UInt16 { 0 }
        func decode(_ type: UInt32.Type) -> UInt32 { 0 }
        func decode(_ type: UInt64.Type) -> UInt64 { 0 }
        func decode<T: Decodable>(_ type: T.Type) throws -> T { try SchemaProbe.placeholder(T.self) }
    }
}
