import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Files only their owner may read (accounts, secrets, remotes), each written whole or not at all.
enum PrivateFile {
    /// Writes `data` to `url` atomically with mode 0600, making the folder (0700) first when needed.
    static func write(_ data: Data, to url: URL) throws {
        let folder = url.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CommandError.failed("Cannot write \(url.path).")
        }
        guard rename(temporary.path, url.path) == 0 else {
            let reason = String(cString: strerror(errno))
            try? FileManager.default.removeItem(at: temporary)
            throw CommandError.failed("Cannot write \(url.path): \(reason).")
        }
    }

    /// Writes a value as sorted, readable JSON.
    static func writeJSON<T: Encodable>(_ value: T, to url: URL) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try write(try encoder.encode(value), to: url)
    }

    /// Reads a JSON file, or nil when there is none; a damaged file is an error naming it, never an empty value
    /// that the next save would write over it.
    static func readJSON<T: Decodable>(_ type: T.Type, from url: URL, what: String) throws -> T? {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            guard !FileManager.default.fileExists(atPath: url.path) else { throw CommandError.failed("The \(what) file \(url.path) cannot be read; check its permissions.") }
            return nil
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw CommandError.failed("The \(what) file \(url.path) cannot be read (\(error)); fix or remove it.")
        }
    }
}
