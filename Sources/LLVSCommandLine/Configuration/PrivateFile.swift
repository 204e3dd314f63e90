import Foundation
import LLVSHTTP
#if canImport(Glibc)
import Glibc
#endif

/// Files only their owner may read (accounts, secrets, remotes), each written whole or not at all.
enum PrivateFile {
    /// Writes `data` to `url` atomically, as token files are written: a new temporary made 0600 from the start
    /// (O_EXCL, never through a link), synced, then renamed over the file; the folder made (or taken back to) 0700.
    /// `secretsFolder`: the file's folder holds secrets and nothing else (accounts, passphrases), so one left open to
    /// others is taken back to 0700; any other folder (a store's) is only made, 0700, when missing.
    static func write(_ data: Data, to url: URL, secretsFolder: Bool = false) throws {
        let folder = url.deletingLastPathComponent()
        do {
            if secretsFolder {
                try TokenFile.makePrivateFolder(folder.path)
            } else {
                try FileManager.default.createDirectory(
                    at: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            }
        } catch {
            throw CommandError.failed("Cannot make \(folder.path): \(error).")
        }
        let temporary = folder.appendingPathComponent(".\(url.lastPathComponent).\(getpid()).\(UUID().uuidString)").path
        func fail() -> CommandError {
            CommandError.failed("Cannot write \(url.path): \(String(cString: strerror(errno))).")
        }
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw fail() }
        var written = true
        data.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n < 0, errno == EINTR { continue }
                guard n > 0 else { written = false; return }
                offset += n
            }
        }
        let synced = written && fsync(fd) == 0
        close(fd)
        guard synced, rename(temporary, url.path) == 0 else {
            let error = fail()
            unlink(temporary)
            throw error
        }
        let directory = open(folder.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if directory >= 0 { fsync(directory); close(directory) }
    }

    /// Writes a value as sorted, readable JSON.
    static func writeJSON<T: Encodable>(_ value: T, to url: URL, secretsFolder: Bool = false) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        try write(try encoder.encode(value), to: url, secretsFolder: secretsFolder)
    }

    /// Reads a JSON file, or nil when there is none; a damaged file is an error naming it, never an empty value
    /// that the next save would write over it.
    static func readJSON<T: Decodable>(_ type: T.Type, from url: URL, what: String) throws -> T? {
        guard let data = FileManager.default.contents(atPath: url.path) else {
            guard !FileManager.default.fileExists(atPath: url.path) else {
                throw CommandError.failed("The \(what) file \(url.path) cannot be read; check its permissions.")
            }
            return nil
        }
        do {
            return try JSONDecoder().decode(T.self, from: data)
        } catch {
            throw CommandError.failed("The \(what) file \(url.path) cannot be read (\(error)); fix or remove it.")
        }
    }
}
