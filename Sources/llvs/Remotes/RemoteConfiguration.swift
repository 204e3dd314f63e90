import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// One configured remote: where it is and how to reach it. Kept in `$XDG_CONFIG_HOME/llvs/remotes.json` (mode 0600);
/// passwords live in a separate 0600 file per remote or in environment variables, never in this file or on a
/// command line.
struct RemoteConfiguration: Codable, Equatable {
    var url: String
    /// The folder on the remote that holds the store's files.
    var basePath: String?
    var user: String?
    var concurrency: Int?
    /// One base URL standing in for every host of the service (a mock's), for OAuth remotes.
    var endpoint: String?
    /// The OAuth client the user registered with the service (the secret is kept in NAME.secret or the environment).
    var clientId: String?
    /// Google Drive: what removing a file does, `trash` (default) or `delete`.
    var removal: String?
    /// Google Drive: the ID of the folder that is the remote's root (default: My Drive).
    var rootFolderId: String?
    /// Google Drive: the OAuth scope, `drive.file` (default: only what llvs created) or `drive` (the whole Drive).
    var scope: String?
    /// OneDrive: a drive by ID (a SharePoint library) instead of the user's own.
    var driveId: String?
    /// OneDrive: the Microsoft identity platform tenant (`common` by default).
    var tenant: String?
}

/// The remotes file and the secrets beside it.
struct RemoteRegistry {
    let folder: URL

    init(environment: [String: String] = ProcessInfo.processInfo.environment) {
        let base = environment["XDG_CONFIG_HOME"].map { URL(fileURLWithPath: $0) }
            ?? URL(fileURLWithPath: environment["HOME"] ?? NSHomeDirectory()).appendingPathComponent(".config")
        folder = base.appendingPathComponent("llvs")
    }

    var file: URL { folder.appendingPathComponent("remotes.json") }
    func secretFile(_ name: String) -> URL { folder.appendingPathComponent("\(name).secret") }
    func tokenFile(_ name: String) -> URL { folder.appendingPathComponent("\(name).token.json") }

    /// The remote's password or client secret, from its private file.
    func secret(_ name: String) -> String? {
        (try? String(contentsOf: secretFile(name), encoding: .utf8))?.trimmingCharacters(in: .newlines)
    }

    func load() throws -> [String: RemoteConfiguration] {
        guard FileManager.default.fileExists(atPath: file.path) else { return [:] }
        do {
            return try JSONDecoder().decode([String: RemoteConfiguration].self, from: Data(contentsOf: file))
        } catch {
            throw CommandError.failed("The remotes file \(file.path) cannot be read (\(error)); fix or remove it.")
        }
    }

    func save(_ remotes: [String: RemoteConfiguration]) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try writePrivately(try encoder.encode(remotes), to: file)
    }

    /// Writes a file only its owner can read, atomically.
    func writePrivately(_ data: Data, to url: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: temporary.path, contents: data, attributes: [.posixPermissions: 0o600]) else {
            throw CommandError.failed("Cannot write \(url.path).")
        }
        guard rename(temporary.path, url.path) == 0 else {
            try? FileManager.default.removeItem(at: temporary)
            throw CommandError.failed("Cannot write \(url.path): \(String(cString: strerror(errno))).")
        }
    }

    /// The remote called `name`, or the only one when no name is given.
    func remote(_ name: String?) throws -> (String, RemoteConfiguration) {
        let remotes = try load()
        if let name {
            guard let remote = remotes[name] else {
                throw CommandError.notFound("There is no remote called \(name); add it with `llvs remote add \(name) URL`.")
            }
            return (name, remote)
        }
        guard remotes.count == 1, let only = remotes.first else {
            throw CommandError.usage(remotes.isEmpty ? "no remote is configured; add one with `llvs remote add NAME URL`"
                                                     : "name the remote: \(remotes.keys.sorted().joined(separator: ", "))")
        }
        return (only.key, only.value)
    }
}
