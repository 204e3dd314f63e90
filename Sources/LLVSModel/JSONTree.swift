import Foundation

/// A JSON document as a tree, read and written with Foundation's coders, so the property-wise merge compares and
/// combines what `JSONEncoder` wrote and hands the result back to `JSONDecoder`.
package enum JSONTree: Hashable, Codable, Sendable {
    case null
    case bool(Bool)
    case integer(Int64)
    case unsigned(UInt64)
    case number(Double)
    case string(String)
    case array([JSONTree])
    case object([String: JSONTree])

    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let value = try? container.decode(Bool.self) {
            self = .bool(value)
        } else if let value = try? container.decode(Int64.self) {
            self = .integer(value)
        } else if let value = try? container.decode(UInt64.self) {
            self = .unsigned(value)
        } else if let value = try? container.decode(Double.self) {
            self = .number(value)
        } else if let value = try? container.decode(String.self) {
            self = .string(value)
        } else if let value = try? container.decode([JSONTree].self) {
            self = .array(value)
        } else {
            self = .object(try container.decode([String: JSONTree].self))
        }
    }

    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let value): try container.encode(value)
        case .integer(let value): try container.encode(value)
        case .unsigned(let value): try container.encode(value)
        case .number(let value): try container.encode(value)
        case .string(let value): try container.encode(value)
        case .array(let value): try container.encode(value)
        case .object(let value): try container.encode(value)
        }
    }

    /// The tree of an encodable value, as `JSONEncoder` writes it.
    package static func of<T: Encodable>(_ value: T) throws -> JSONTree {
        try parse(try JSONEncoder().encode(value))
    }

    package static func parse(_ data: Data) throws -> JSONTree {
        do {
            return try JSONDecoder().decode(JSONTree.self, from: data)
        } catch {
            throw ModelError.unreadableJSON(reason: "\(error)")
        }
    }

    /// The value of type `T` this tree encodes.
    package func decoded<T: Decodable>(as type: T.Type) throws -> T {
        try JSONDecoder().decode(type, from: try JSONEncoder().encode(self))
    }

    package var members: [String: JSONTree]? {
        if case .object(let members) = self { return members }
        return nil
    }
}
