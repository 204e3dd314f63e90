import Foundation
import LLVSSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A cloud file system in a local folder: the `file://` remote, and how a mounted network share or a folder a
/// sync client mirrors is used. Files are written to a hidden temporary name and renamed into place, so a reader
/// (another device's sync client, another process) never sees part of a file.
public struct LocalFolderFileSystem: CloudFileSystem {
    public let root: URL
    /// Whether each written file is synced to disk before it is renamed into place.
    public let durable: Bool
    static let chunkSize = 1 << 20
    /// Folders already cleared of abandoned temporaries by this file system.
    private let cleanedFolders = CleanedFolders()

    private final class CleanedFolders: Sendable {
        let names = Mutex<Set<String>>([])
        func insert(_ folder: String) -> Bool { names.withLock { $0.insert(folder).inserted } }
    }

    public init(root: URL, durable: Bool = true) {
        self.root = root.standardizedFileURL
        self.durable = durable
    }

    func localPath(_ path: String) throws -> String {
        let components = try CloudPath.components(path)
        return ([root.path] + components).joined(separator: "/")
    }

    /// Maps a failed system call on `path` (remote path `remote`) to the shared vocabulary.
    func failure(_ remote: String, code: Int32 = errno) -> CloudFileSystemError {
        switch code {
        case ENOENT: .notFound(path: remote)
        case ENOTDIR: .wrongKind(path: remote, expectedFolder: true)
        case EISDIR: .wrongKind(path: remote, expectedFolder: false)
        case EEXIST: .alreadyExists(path: remote)
        case ENOSPC, EDQUOT: .quotaExceeded(String(cString: strerror(code)))
        case EACCES, EPERM: .unauthorized("permission denied for \(remote) in \(root.path)")
        case EIO, EAGAIN, EINTR, ETIMEDOUT: .transient(String(cString: strerror(code)))
        default: .server(status: Int(code), message: "\(String(cString: strerror(code))) at \(remote)")
        }
    }

    private func status(_ path: String) throws -> stat? {
        var info = stat()
        guard stat(try localPath(path), &info) == 0 else {
            if errno == ENOENT || errno == ENOTDIR { return nil }
            throw failure(path)
        }
        return info
    }

    private func item(named name: String, _ info: stat) -> CloudItem {
        let isFolder = (info.st_mode & S_IFMT) == S_IFDIR
        let modified = Date(
            timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
        return CloudItem(name: name, isFolder: isFolder, size: isFolder ? nil : Int64(info.st_size), modified: modified)
    }

    public func exists(_ path: String) async throws -> Bool {
        try status(path) != nil
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        guard let info = try status(path) else { throw CloudFileSystemError.notFound(path: path) }
        return item(named: try CloudPath.name(path), info)
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        let local = try localPath(folder)
        guard let info = try status(folder) else { throw CloudFileSystemError.notFound(path: folder) }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true)
        }
        let names: [String]
        do { names = try POSIX.listNames(local, includingHidden: true) } catch { throw failure(folder) }
        var items: [CloudItem] = []
        for name in names where !name.hasPrefix(AtomicFileWriter.temporaryPrefix) {
            var entry = stat()
            guard lstat(local + "/" + name, &entry) == 0 else { continue }  // removed meanwhile
            if (entry.st_mode & S_IFMT) == S_IFLNK { guard stat(local + "/" + name, &entry) == 0 else { continue } }
            items.append(item(named: name, entry))
        }
        return items
    }

    public func makeFolder(_ path: String) async throws {
        // The root is the remote itself, like a cloud drive's root: it is made on first use.
        if !POSIX.isDirectory(root.path) {
            do { try POSIX.makeDirectories(root.path) } catch { throw failure("", code: errno) }
        }
        var current = root.path
        var remote: [String] = []
        for component in try CloudPath.components(path) {
            current += "/" + component
            remote.append(component)
            if mkdir(current, 0o755) != 0 {
                let code = errno
                guard code == EEXIST else { throw failure(remote.joined(separator: "/"), code: code) }
                guard POSIX.isDirectory(current) else {
                    throw CloudFileSystemError.wrongKind(path: remote.joined(separator: "/"), expectedFolder: true)
                }
            }
        }
    }

    private func writer(for path: String) async throws -> AtomicFileWriter {
        guard try !CloudPath.components(path).isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        let parent = try CloudPath.parent(path)
        try await makeFolder(parent)
        removeAbandonedTemporaries(in: parent)
        if let info = try status(path), (info.st_mode & S_IFMT) == S_IFDIR {
            throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
        }
        do { return try AtomicFileWriter(destination: try localPath(path)) } catch { throw failure(path) }
    }

    /// Into place by rename, or for `.create` by a link, which fails where a file is.
    private func commit(_ writer: AtomicFileWriter, _ path: String, mode: UploadMode) throws {
        do { try writer.commit(replacing: mode != .create, durable: durable) } catch {
            writer.discard()
            if case FileError.io(_, _, let code) = error { throw failure(path, code: code) }
            throw failure(path)
        }
    }

    /// Files are renamed into place; `.create` links them, which the file system refuses where a file is.
    public var capabilities: CloudCapabilities {
        var capabilities = CloudCapabilities.plain
        capabilities.exclusiveCreate = true
        return capabilities
    }

    /// Files are written as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    /// The names alone, without a `stat` of each entry.
    public func listNames(_ folder: String) async throws -> [String] {
        guard let info = try status(folder) else { return [] }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true)
        }
        do {
            return try POSIX.listNames(try localPath(folder), includingHidden: true).filter {
                !$0.hasPrefix(AtomicFileWriter.temporaryPrefix)
            }
        } catch {
            throw failure(folder)
        }
    }

    /// A rename into place costs no look first; `.create` links into place instead, refused where a file is.
    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        guard let url = source.fileURL else {
            guard case .data(let data) = source else { return }
            let writer = try await writer(for: path)
            do { try writer.write(data) } catch { writer.discard(); throw failure(path) }
            return try commit(writer, path, mode: mode)
        }
        let input: ReadableFile
        do { input = try ReadableFile(path: url.path) } catch {
            throw CloudFileSystemError.localFile(path: url.path, message: String(cString: strerror(errno)))
        }
        let writer = try await writer(for: path)
        var offset: Int64 = 0
        do {
            while offset < input.size {
                let count = Int(min(Int64(Self.chunkSize), input.size - offset))
                let chunk: Data
                do { chunk = try input.read(at: offset, count: count) } catch {
                    throw CloudFileSystemError.localFile(path: url.path, message: "\(error)")
                }
                do { try writer.write(chunk) } catch { throw failure(path) }
                offset += Int64(count)
            }
        } catch {
            writer.discard()
            throw error
        }
        try commit(writer, path, mode: mode)
    }

    private func open(_ path: String) throws -> ReadableFile {
        guard let info = try status(path) else { throw CloudFileSystemError.notFound(path: path) }
        guard (info.st_mode & S_IFMT) != S_IFDIR else {
            throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
        }
        do { return try ReadableFile(path: try localPath(path)) } catch { throw failure(path) }
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        let file = try open(path)
        guard let range else {
            do { return try file.read(at: 0, count: Int(file.size)) } catch { throw failure(path) }
        }
        guard let span = range.resolved(size: file.size) else {
            throw CloudFileSystemError.server(
                status: 416, message: "range \(range.httpValue) is outside the \(file.size)-byte file \(path)")
        }
        do { return try file.read(at: span.lowerBound, count: Int(span.count)) } catch { throw failure(path) }
    }

    /// Copied a megabyte at a time; a region's file must already be as long as the region says.
    public func download(_ path: String, to destination: DownloadDestination) async throws {
        let file = try open(path)
        switch destination {
        case .file(let url):
            let output: AtomicFileWriter
            do { output = try AtomicFileWriter(destination: url.path) } catch {
                throw CloudFileSystemError.localFile(path: url.path, message: String(cString: strerror(errno)))
            }
            do {
                try copy(file) { try output.write($0) }
                try output.commit(durable: false)
            } catch {
                output.discard()
                throw CloudFileSystemError.localFile(path: url.path, message: "\(error)")
            }
        case .region(let url, let offset, let length):
            guard file.size == length else {
                throw CloudFileSystemError.sizeMismatch(path: path, expected: length, received: file.size)
            }
            let fd = Glibc.open(url.path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw CloudFileSystemError.localFile(path: url.path, message: String(cString: strerror(errno)))
            }
            defer { close(fd) }
            var written: Int64 = 0
            do {
                try copy(file) { piece in
                    try piece.withUnsafeBytes { try POSIX.write($0, at: offset + written, to: fd, path: url.path) }
                    written += Int64(piece.count)
                }
            } catch {
                throw CloudFileSystemError.localFile(path: url.path, message: "\(error)")
            }
        }
    }

    private func copy(_ file: ReadableFile, into write: (Data) throws -> Void) throws {
        var offset: Int64 = 0
        while offset < file.size {
            let count = Int(min(Int64(Self.chunkSize), file.size - offset))
            try write(try file.read(at: offset, count: count))
            offset += Int64(count)
        }
    }

    public func removeFile(_ path: String) async throws {
        guard try !CloudPath.components(path).isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        let local = try localPath(path)
        guard unlink(local) == 0 else {
            let code = errno
            if code == ENOENT { return }
            throw failure(path, code: (code == EPERM || code == EISDIR) && POSIX.isDirectory(local) ? EISDIR : code)
        }
    }

    public func removeFolder(_ path: String) async throws {
        guard let info = try status(path) else { return }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            throw CloudFileSystemError.wrongKind(path: path, expectedFolder: true)
        }
        do { try FileManager.default.removeItem(atPath: try localPath(path)) } catch {
            throw CloudFileSystemError.server(
                status: Int(EIO), message: "could not remove the folder \(path): \(error.localizedDescription)")
        }
    }

    /// Before the first write into a folder, removes temporary files that writers killed mid-way left there: at once
    /// those a process of this machine wrote and that process has ended; others (the folder may be shared with
    /// other machines, whose writers this one cannot see) once untouched for an hour, since a file being written is
    /// always recent.
    private func removeAbandonedTemporaries(in folder: String) {
        guard cleanedFolders.insert(folder), let local = try? localPath(folder),
            let names = try? FileManager.default.contentsOfDirectory(atPath: local)
        else { return }
        let cutoff = Date().timeIntervalSince1970 - 3600
        for name in names where name.hasPrefix(AtomicFileWriter.temporaryPrefix) {
            guard let writer = TemporaryWriter(name.dropFirst(AtomicFileWriter.temporaryPrefix.count)) else { continue }
            if writer.isGoneFromThisMachine {
                unlink(local + "/" + name)
                continue
            }
            guard kill(writer.pid, 0) != 0, errno == ESRCH else { continue }
            var info = stat()
            guard lstat(local + "/" + name, &info) == 0, Double(info.st_mtim.tv_sec) < cutoff else { continue }
            unlink(local + "/" + name)
        }
    }
}
