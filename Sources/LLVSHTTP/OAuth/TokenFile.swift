import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The token file of one remote: JSON, mode 0600, replaced atomically (temporary file, fsync, rename), and
/// guarded across processes by an advisory lock (`flock`) on a companion `.lock` file.
public struct TokenFile: Sendable {
    public let path: String
    /// The companion file every process using this token file locks (`withLock`).
    public var lockPath: String { path + ".lock" }

    public init(path: String) { self.path = path }

    /// The folder holding the file; "." for a bare file name.
    var folder: String {
        let folder = (path as NSString).deletingLastPathComponent
        return folder.isEmpty ? "." : folder
    }

    func failure(_ message: String) -> OAuthError { .tokenFile(path: path, message: message) }

    /// The token on disk, or nil when there is no file.
    public func read() throws -> OAuthToken? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        let data: Data
        do { data = try Data(contentsOf: URL(fileURLWithPath: path)) } catch {
            throw failure("cannot read it (\(error.localizedDescription))")
        }
        do { return try JSONDecoder().decode(OAuthToken.self, from: data) } catch {
            throw failure("it does not hold a token (\(error))")
        }
    }

    /// Replaces the file with `token`: written to a 0600 temporary file beside it, synced, renamed over it.
    public func write(_ token: OAuthToken) throws {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys]
        let data = try encoder.encode(token)
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let temporary = folder + "/.\((path as NSString).lastPathComponent).\(getpid()).\(UUID().uuidString)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot create \(temporary): \(String(cString: strerror(errno)))") }
        var ok = data.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) == $0.count }
        ok = ok && fsync(fd) == 0
        close(fd)
        guard ok, rename(temporary, path) == 0 else {
            let message = String(cString: strerror(errno))
            unlink(temporary)
            throw failure("cannot write it: \(message)")
        }
        let dirfd = open(folder, O_RDONLY | O_DIRECTORY)
        if dirfd >= 0 { fsync(dirfd); close(dirfd) }
        removeAbandonedTemporaries(in: folder)
    }

    /// Temporary files of processes killed between creating one and renaming it (their PID is in the name): they
    /// hold a token, so they are removed rather than left to pile up. Another live process's are left alone.
    private func removeAbandonedTemporaries(in folder: String) {
        let prefix = ".\((path as NSString).lastPathComponent)."
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: folder) else { return }
        for name in names where name.hasPrefix(prefix) {
            guard let pid = Int32(name.dropFirst(prefix.count).prefix { $0 != "." }), pid != getpid() else { continue }
            if kill(pid, 0) != 0 && errno == ESRCH { unlink(folder + "/" + name) }
        }
    }

    /// Runs `body` holding the exclusive lock shared by every process using this token file. Waiting for the lock
    /// polls rather than blocks, so it does not tie up a thread of the concurrency pool.
    /// Makes `folder` (and its parents) with mode 0700, and takes an existing one of this user's that others can read
    /// or enter back to 0700: the secrets in it are only as private as it is. Only for a folder that holds secrets and
    /// nothing else (an application's accounts folder), never one others share: a sticky folder (`/tmp`) is left as
    /// it is, and `TokenFile` itself, which may be given any path, never calls this.
    public static func makePrivateFolder(_ folder: String) throws {
        try FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        var info = stat()
        if lstat(folder, &info) == 0, info.st_mode & S_IFMT == S_IFDIR, info.st_uid == geteuid(),
            info.st_mode & S_ISVTX == 0,
            info.st_mode & 0o077 != 0
        {
            chmod(folder, 0o700)
        }
    }

    public func withLock<T: Sendable>(
        isolation: isolated (any Actor)? = #isolation, _ body: () async throws -> T
    ) async throws -> T {
        try? FileManager.default.createDirectory(
            atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        // Not through a link: a planted `.lock` link would make this create or open its target.
        let fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw failure("cannot open its lock \(lockPath): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        while flock(fd, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR else {
                throw failure("cannot lock it: \(String(cString: strerror(errno)))")
            }
            try await Task.sleep(for: .milliseconds(5))
        }
        defer { flock(fd, LOCK_UN) }
        return try await body()
    }
}
