import Foundation

/// JSON as llvs writes it for people and scripts: dates in ISO 8601 (Foundation's default is seconds since 2001,
/// which `jq todate` reads as 1995), keys sorted so two writes of the same value are the same bytes.
public enum ISO8601JSON {
    public static func encoder(pretty: Bool = false) -> JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting =
            pretty ? [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes] : [.sortedKeys, .withoutEscapingSlashes]
        encoder.dateEncodingStrategy = .iso8601
        return encoder
    }

    public static func decoder() -> JSONDecoder {
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        return decoder
    }

    /// A small record file's value; nil when it is missing or unreadable (for files that are only a convenience).
    public static func read<Value: Decodable>(_ type: Value.Type, from path: String) -> Value? {
        guard let data = try? POSIX.readFile(path) else { return nil }
        return try? decoder().decode(type, from: data)
    }

    /// Rewrites a small record file whole, atomically.
    public static func write<Value: Encodable>(_ value: Value, to path: String) throws {
        try POSIX.writeAtomically(try encoder().encode(value), to: path)
    }
}
