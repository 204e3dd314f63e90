import Foundation
import LLVSSupport

extension Version {
    /// A metadata key. LLVS encodes metadata as a flat JSON array `[key1, value1, key2, value2, …]`,
    /// because its key is a struct rather than a String; this type keeps that encoding.
    public struct MetadataKey: StringIdentifier {
        public let rawValue: String
        public init(_ rawValue: String) { self.rawValue = rawValue }
        /// The key under which LLVS records the branch a version was saved on.
        public static let branch = MetadataKey("__llvs_branch")
    }

    /// A metadata value: the JSON encoding of the real value, carried as base64 under `data`.
    public struct MetadataValue: Hashable, Sendable, Codable {
        public var data: Data

        public init(data: Data) { self.data = data }

        public init<T: Encodable>(_ value: T) throws {
            self.data = try JSONEncoder().encode(value)
        }

        public func decoded<T: Decodable>(_ type: T.Type) throws -> T {
            try JSONDecoder().decode(type, from: data)
        }
    }

    /// Metadata of a version, encoded as LLVS's flat key/value array.
    public struct Metadata: Hashable, Sendable, ExpressibleByDictionaryLiteral, Sequence {
        public var entries: [MetadataKey: MetadataValue]

        public init(_ entries: [MetadataKey: MetadataValue] = [:]) { self.entries = entries }
        public init(dictionaryLiteral elements: (MetadataKey, MetadataValue)...) {
            self.entries = Dictionary(elements, uniquingKeysWith: { _, last in last })
        }

        public subscript(key: MetadataKey) -> MetadataValue? {
            get { entries[key] }
            set { entries[key] = newValue }
        }

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
