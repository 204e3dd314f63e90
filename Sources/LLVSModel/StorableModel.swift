import Foundation
import LLVS

/// A type saved whole in one value of a store, as upstream LLVS's `StorableModel`: its JSON (Foundation's
/// `JSONEncoder` with default strategies) under the value ID `"<instanceIdentifier>/<modelTypeIdentifier>"`.
///
/// The instance comes first so the instances of one type spread across the value map. A model saved here and one
/// saved by an LLVS app on an Apple device are the same bytes under the same ID, so each reads the other's.
public protocol StorableModel: Codable, Sendable {
    /// A stable name for the type, kept across renames of the Swift type (e.g. `"Contact"`). It may not contain `/`.
    static var modelTypeIdentifier: String { get }
}

extension StorableModel {
    /// The value ID of the instance `instanceIdentifier` of this type.
    public static func valueId(instanceIdentifier: String) throws -> Value.ID {
        try ModelValueID.make(instanceIdentifier: instanceIdentifier, typeIdentifier: modelTypeIdentifier)
    }
}

/// How model value IDs are made and read.
public enum ModelValueID {
    public static func make(instanceIdentifier: String, typeIdentifier: String) throws -> Value.ID {
        guard !typeIdentifier.isEmpty, !typeIdentifier.contains("/") else {
            throw ModelError.invalidTypeIdentifier(typeIdentifier)
        }
        guard !instanceIdentifier.isEmpty else { throw ModelError.emptyInstanceIdentifier(type: typeIdentifier) }
        return Value.ID("\(instanceIdentifier)/\(typeIdentifier)")
    }

    /// The type identifier of a model value ID (what follows its last `/`), or nil when the ID is not a model's.
    public static func typeIdentifier(of id: Value.ID) -> Substring? {
        let raw = id.rawValue
        guard let slash = raw.lastIndex(of: "/"), slash != raw.startIndex else { return nil }
        let type = raw[raw.index(after: slash)...]
        return type.isEmpty ? nil : type
    }

    /// The instance identifier of a model value ID of the given type, or nil when the ID is not one.
    public static func instanceIdentifier(of id: Value.ID, typeIdentifier: String) -> Substring? {
        let raw = id.rawValue
        guard raw.hasSuffix("/" + typeIdentifier), raw.utf8.count > typeIdentifier.utf8.count + 1 else { return nil }
        return raw.dropLast(typeIdentifier.count + 1)
    }
}

/// The JSON coding models are stored in: Foundation's defaults, as upstream (dates as seconds since 2001, data as
/// base64, keys as declared).
public enum ModelCoding {
    /// One coder pair for every model: Foundation's coders are safe to share across threads once configured, and
    /// making one per value costs more than decoding a small model.
    private static let encoder = JSONEncoder()
    private static let decoder = JSONDecoder()

    public static func encode<M: Encodable>(_ model: M) throws -> Data {
        try encoder.encode(model)
    }

    public static func decode<M: Decodable>(_ type: M.Type, from data: Data, valueId: Value.ID) throws -> M {
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw ModelError.undecodable(valueId: valueId, type: String(describing: type), reason: "\(error)")
        }
    }
}
