import Foundation
import LLVSSupport

/// The LLVS remote layout and its JSON encodings (docs/remote-format.md): `versions/<id>` holds `{"version": Version}`,
/// `changes/<id>` holds `[Value.Change]`. Shared by every exchange that writes this layout.
public enum RemoteFormat {
    public static let versionsFolder = "versions"
    public static let changesFolder = "changes"

    public static func encodeVersion(_ version: Version) throws -> Data {
        try encoder.encode(["version": version])
    }

    /// Decodes a version file; `path` names it in errors.
    public static func decodeVersion(_ data: Data, path: String) throws -> Version {
        if let version = Version.fastDecodedRemoteFile(from: data) { return version }
        do {
            guard let version = try JSONDecoder().decode([String: Version].self, from: data)["version"] else {
                throw ExchangeError.malformedFile(path: path, reason: "it has no \"version\" key")
            }
            return version
        } catch let error as ExchangeError {
            throw error
        } catch {
            throw ExchangeError.malformedFile(path: path, reason: describe(error))
        }
    }

    public static func encodeChanges(_ changes: [Value.Change]) throws -> Data {
        try encoder.encode(changes)
    }

    /// One change, encoded as it appears inside a changes file.
    static func encodeChange(_ change: Value.Change) throws -> Data {
        try encoder.encode(change)
    }

    /// A string as a JSON literal, escaped as JSONEncoder escapes it.
    static func jsonString(_ text: String) -> Data {
        (try? encoder.encode(text)) ?? Data("\"\"".utf8)
    }

    public static func decodeChanges(_ data: Data, path: String) throws -> [Value.Change] {
        if let changes = Value.Change.fastDecodedList(from: data) { return changes }
        do {
            return try JSONDecoder().decode([Value.Change].self, from: data)
        } catch {
            throw ExchangeError.malformedFile(path: path, reason: describe(error))
        }
    }

    /// Checks that an identifier can name a remote file: not empty, not hidden, no path separator.
    public static func checkFileName(_ id: String) throws {
        let bytes = id.utf8
        guard let first = bytes.first, first != UInt8(ascii: "."),
            !bytes.contains(where: { $0 == UInt8(ascii: "/") || $0 == 0 })
        else {
            throw ExchangeError.unsafeIdentifier(id)
        }
    }

    /// Keys sorted so the same version always gives the same bytes; readers must not rely on any order.
    private static var encoder: JSONEncoder {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return encoder
    }

    /// A one-line account of a decoding error: what was wrong and at which key path.
    static func describe(_ error: any Error) -> String {
        guard let error = error as? DecodingError else { return "\(error)" }
        func path(_ context: DecodingError.Context) -> String {
            let keys = context.codingPath.map { $0.intValue.map { "[\($0)]" } ?? $0.stringValue }.joined(separator: ".")
            return keys.isEmpty ? "" : " at \(keys)"
        }
        switch error {
        case .dataCorrupted(let context): return "\(context.debugDescription)\(path(context))"
        case .keyNotFound(let key, let context): return "missing key \"\(key.stringValue)\"\(path(context))"
        case .typeMismatch(let type, let context): return "expected \(type)\(path(context))"
        case .valueNotFound(let type, let context): return "missing \(type)\(path(context))"
        @unknown default: return "\(error)"
        }
    }

    /// Whether encoded changes are upstream JSON: an array, after any white space. A compact file starts with its
    /// magic, never with `[`.
    static func holdsJSONArray(_ encoded: EncodedChanges) throws -> Bool {
        let start = try encoded.prefix(64)
        return start.first { ![0x20, 0x09, 0x0A, 0x0D].contains($0) } == UInt8(ascii: "[")
    }
}
