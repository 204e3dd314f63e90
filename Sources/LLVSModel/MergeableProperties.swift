import Foundation

/// Finds which of a value's encoded properties hold a `Mergeable` value, and of which type, by encoding the value
/// into an encoder that writes nothing and only looks at what its top-level keyed container is given.
///
/// This is how the default merge learns, without a macro, which properties to merge recursively: the synthesized
/// `encode(to:)` hands each property's value to the container, optionals through `encodeIfPresent`.
struct MergeableProperties {
    static func of<T: Encodable>(_ value: T) -> [String: any Mergeable.Type] {
        let probe = Probe()
        // A value whose encoding fails here fails again when it is merged, with the error that says why.
        try? value.encode(to: ProbeEncoder(probe: probe, codingPath: []))
        return probe.found
    }

    final class Probe {
        var found: [String: any Mergeable.Type] = [:]
    }

    /// The encoder: only the top level's keyed container looks at what it is given; below, nothing matters.
    struct ProbeEncoder: Encoder {
        let probe: Probe?
        var codingPath: [any CodingKey]
        var userInfo: [CodingUserInfoKey: Any] { [:] }

        func container<Key: CodingKey>(keyedBy type: Key.Type) -> KeyedEncodingContainer<Key> {
            KeyedEncodingContainer(KeyedProbe<Key>(probe: codingPath.isEmpty ? probe : nil, codingPath: codingPath))
        }
        func unkeyedContainer() -> any UnkeyedEncodingContainer { UnkeyedProbe(codingPath: codingPath) }
        func singleValueContainer() -> any SingleValueEncodingContainer { SingleProbe(codingPath: codingPath) }
    }

    /// The keyed container: at the top level (`probe` set) it records Mergeable values; below, it ignores everything.
    struct KeyedProbe<Key: CodingKey>: KeyedEncodingContainerProtocol {
        let probe: Probe?
        var codingPath: [any CodingKey]

        mutating func encode<T: Encodable>(_ value: T, forKey key: Key) throws {
            if let probe, let mergeable = value as? any Mergeable { probe.found[key.stringValue] = type(of: mergeable) }
        }
        mutating func encodeNil(forKey key: Key) throws {}
        mutating func encode(_ value: Bool, forKey key: Key) throws {}
        mutating func encode(_ value: String, forKey key: Key) throws {}
        mutating func encode(_ value: Double, forKey key: Key) throws {}
        mutating func encode(_ value: Float, forKey key: Key) throws {}
        mutating func encode(_ value: Int, forKey key: Key) throws {}
        mutating func encode(_ value: Int8, forKey key: Key) throws {}
        mutating func encode(_ value: Int16, forKey key: Key) throws {}
        mutating func encode(_ value: Int32, forKey key: Key) throws {}
        mutating func encode(_ value: Int64, forKey key: Key) throws {}
        mutating func encode(_ value: UInt, forKey key: Key) throws {}
        mutating func encode(_ value: UInt8, forKey key: Key) throws {}
        mutating func encode(_ value: UInt16, forKey key: Key) throws {}
        mutating func encode(_ value: UInt32, forKey key: Key) throws {}
        mutating func encode(_ value: UInt64, forKey key: Key) throws {}
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type, forKey key: Key
        ) -> KeyedEncodingContainer<NestedKey> {
            KeyedEncodingContainer(KeyedProbe<NestedKey>(probe: nil, codingPath: codingPath + [key]))
        }
        mutating func nestedUnkeyedContainer(forKey key: Key) -> any UnkeyedEncodingContainer {
            UnkeyedProbe(codingPath: codingPath + [key])
        }
        mutating func superEncoder() -> any Encoder { ProbeEncoder(probe: nil, codingPath: codingPath) }
        mutating func superEncoder(forKey key: Key) -> any Encoder {
            ProbeEncoder(probe: nil, codingPath: codingPath + [key])
        }
    }

    struct UnkeyedProbe: UnkeyedEncodingContainer {
        var codingPath: [any CodingKey]
        var count = 0
        mutating func encode<T: Encodable>(_ value: T) throws { count += 1 }
        mutating func encodeNil() throws { count += 1 }
        mutating func nestedContainer<NestedKey: CodingKey>(
            keyedBy keyType: NestedKey.Type
        ) -> KeyedEncodingContainer<NestedKey> {
            count += 1
            return KeyedEncodingContainer(KeyedProbe<NestedKey>(probe: nil, codingPath: codingPath))
        }
        mutating func nestedUnkeyedContainer() -> any UnkeyedEncodingContainer {
            count += 1
            return UnkeyedProbe(codingPath: codingPath)
        }
        mutating func superEncoder() -> any Encoder { ProbeEncoder(probe: nil, codingPath: codingPath) }
    }

    struct SingleProbe: SingleValueEncodingContainer {
        var codingPath: [any CodingKey]
        mutating func encodeNil() throws {}
        mutating func encode(_ value: Bool) throws {}
        mutating func encode(_ value: String) throws {}
        mutating func encode(_ value: Double) throws {}
        mutating func encode(_ value: Float) throws {}
        mutating func encode(_ value: Int) throws {}
        mutating func encode(_ value: Int8) throws {}
        mutating func encode(_ value: Int16) throws {}
        mutating func encode(_ value: Int32) throws {}
        mutating func encode(_ value: Int64) throws {}
        mutating func encode(_ value: UInt) throws {}
        mutating func encode(_ value: UInt8) throws {}
        mutating func encode(_ value: UInt16) throws {}
        mutating func encode(_ value: UInt32) throws {}
        mutating func encode(_ value: UInt64) throws {}
        mutating func encode<T: Encodable>(_ value: T) throws {}
    }
}
