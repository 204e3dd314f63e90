import Foundation
import LLVSSupport

extension Version {
    /// A metadata key. LLVS encodes metadata as a flat JSON array `[key1, value1, key2, value2, …]`,
    /// because its key is a struct rather than a String; this type keeps that encoding.
    public struct MetadataKey: StringIdentifier {
        public let rawValue: String
        /// A key by its name.
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The key under which LLVS records the branch a version was saved on.
        public static let branch = MetadataKey("__llvs_branch")
    }

    /// A metadata value: the JSON encoding of the real value, carried as base64 under `data`.
    public struct MetadataValue: Hashable, Sendable, Codable {
        /// The value's bytes (JSON, as upstream LLVS keeps them).
        public var data: Data

        /// A value of bytes already encoded.
        public init(data: Data) { self.data = data }

        /// A value encoded as JSON.
        public init<T: Encodable>(_ value: T) throws {
            self.data = try JSONEncoder().encode(value)
        }

        /// The value decoded from JSON as `type`.
        public func decoded<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONDecoder().decode(type, from: data)
        }
    }

    /// Metadata of a version, encoded as LLVS's flat key/value array.
    public struct Metadata: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
        /// The entries, by key.
        public var entries: [MetadataKey: MetadataValue]

        /// Metadata with these entries.
        public init(_ entries: [MetadataKey: MetadataValue] = [:]) { self.entries = entries }
        public init(dictionaryLiteral elements: (MetadataKey, MetadataValue)...) {
            self.entries = Dictionary(elements, uniquingKeysWith: { _, last in last })
        }

        /// The value for a key; nil removes it.
        public subscript(key: MetadataKey) -> MetadataValue? {
            get { entries[key] }
            set { entries[key] = newValue }
        }

        /// Whether there are no entries.
        public var isEmpty: Bool { entries.isEmpty }
        public func makeIterator() -> Dictionary<MetadataKey, MetadataValue>.Iterator { entries.makeIterator() }
    }
}

extension Version.Metadata: Codable {
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var entries: [Version.MetadataKey: Version.MetadataValue] = [:]
        while !container.isAtEnd {
            let key = try container.decode(Version.MetadataKey.self)
            guard !container.isAtEnd else {
                throw DecodingError.dataCorruptedError(
                    in: container, debugDescription: "metadata key \(key) has no value")
            }
            entries[key] = try container.decode(Version.MetadataValue.self)
        }
        self.entries = entries
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.unkeyedContainer()
        // Sorted so that the same metadata always encodes the same way; LLVS readers accept any order.
        for key in entries.keys.sorted() {
            try container.encode(key)
            try container.encode(entries[key]!)
        }
    }
}
