import Foundation
import LLVSSupport

/// A file or folder in a cloud file system, as a listing or a metadata request reports it.
public struct CloudItem: Hashable, Sendable {
    public var name: String
    /// Whether it is a folder.
    public var isFolder: Bool
    /// Bytes, for files; nil when the service does not say.
    public var size: Int64?
    /// When the service says it was last changed; nil when it does not say.
    public var modified: Date?
    /// The service's own checksums of the contents, by algorithm, in the service's text form (hex, or base64 for
    /// QuickXorHash); empty where it reports none.
    public var checksums: [ChecksumAlgorithm: String]

    public init(
        name: String, isFolder: Bool, size: Int64? = nil, modified: Date? = nil,
        checksums: [ChecksumAlgorithm: String] = [:]
    ) {
        self.name = name
        self.isFolder = isFolder
        self.size = size
        self.modified = modified
        self.checksums = checksums
    }
}

/// Part of a file: `bytes(a, b)` is bytes a through b inclusive (HTTP's `a-b`), `from(a)` is a to the end,
/// `last(n)` is the final n bytes.
public enum ByteRange: Hashable, Sendable {
    case bytes(Int64, Int64)
    case from(Int64)
    case last(Int64)

    /// The range as an HTTP Range header value.
    public var httpValue: String {
        switch self {
        case .bytes(let a, let b): "bytes=\(a)-\(b)"
        case .from(let a): "bytes=\(a)-"
        case .last(let n): "bytes=-\(n)"
        }
    }

    /// The offsets this range covers in a file of `size` bytes, clipped to the file; nil when it is unsatisfiable.
    public func resolved(size: Int64) -> Range<Int64>? {
        let range: Range<Int64>
        switch self {
        case .bytes(let a, let b):
            guard a >= 0, b >= a, a < size else { return nil }
            range = a..<min(b + 1, size)
        case .from(let a):
            guard a >= 0, a < size else { return nil }
            range = a..<size
        case .last(let n):
            guard n > 0, size > 0 else { return nil }
            range = max(0, size - n)..<size
        }
        return range
    }
}

/// The file operations LLVS needs of a cloud service. Paths are `/`-separated and relative to the file system's
/// root (`versions/ABC`); a leading `/` is allowed. Every connector implements this, and maps its service's
/// failures to `CloudFileSystemError`, so callers never look at status codes or bodies.
///
/// The contract is these twelve members and nothing else: none has a default, so a wrapper (retrying, fault
/// injecting, encrypting) that forgets to hand one to its base does not compile, and a default can never answer in
/// a base's place unseen. Everything else a caller writes (`upload(_:to:)` of bytes, `download(_:)` into memory,
/// `download(_:toFileAt:)`) is an extension on top of them.
///
/// ```swift
/// let remote: any CloudFileSystem = LocalFolderFileSystem(root: folder)
/// try await remote.upload(Data("hello".utf8), to: "notes/a.txt")
/// let bytes = try await remote.download("notes/a.txt")
/// ```
public protocol CloudFileSystem: Sendable {
    /// What the service reports and refuses: checksums, name rules, upload limits.
    var capabilities: CloudCapabilities { get }
    /// True when a file or folder is at `path`.
    func exists(_ path: String) async throws -> Bool
    /// The files and folders directly inside a folder.
    /// - Throws: `CloudFileSystemError.notFound` when the folder is missing.
    func list(_ folder: String) async throws -> [CloudItem]
    /// The names directly inside a folder (LLVS's "list names"); an absent folder has none. What an exchange lists
    /// on every sync, so a connector may answer it with a lighter request than `list` (`namesFromListing` when it
    /// has none).
    func listNames(_ folder: String) async throws -> [String]
    /// Metadata of one file or folder.
    /// - Throws: `CloudFileSystemError.notFound` when nothing is there.
    func metadata(_ path: String) async throws -> CloudItem
    /// How to write a local file for one upload to `path` as `UploadSource.staged` (`FileStager.plain` for a file
    /// system that sends bytes as they are; an encrypting one seals them as they are written).
    func stager(for path: String) async throws -> FileStager
    /// Writes a file, creating missing parent folders. Readers never see part of it.
    /// - Parameters:
    ///   - source: the bytes, from memory, a local file, or a file `stager(for:)` wrote.
    ///   - mode: `.replace` replaces a file there; `.newName` promises none has ever been there, so a service that
    ///     would look for one to replace may skip the look; `.create` leaves a file there as it is.
    /// - Throws: `wrongKind` when a folder is at `path`, `localFile` when the source cannot be read, `alreadyExists`
    ///   for `.create` when something is at `path`.
    func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws
    /// Bytes of a file into memory: all of it for a nil `range`, else the part `range` names, clipped to the file.
    /// - Throws: `notFound`; `server(status: 416, …)` for a range that starts past the end; `tooLargeForMemory`
    ///   when a connector refuses to hold a whole file that large (download it to a file instead).
    func read(_ path: String, range: ByteRange?) async throws -> Data
    /// Reads a file into a local file without holding it in memory: a whole new file, or one region of an existing
    /// file (a piece of a larger file downloaded in pieces at once), leaving the rest of it alone.
    /// - Throws: `sizeMismatch` when a region's file has another length; nothing is written outside the region.
    func download(_ path: String, to destination: DownloadDestination) async throws
    /// Makes a folder and any missing parents; an existing folder is fine.
    func makeFolder(_ path: String) async throws
    /// Removes a file. A missing file is not an error.
    func removeFile(_ path: String) async throws
    /// Removes a folder and everything in it. A missing folder is not an error.
    func removeFolder(_ path: String) async throws
}

/// How an upload treats a file already at its path.
public enum UploadMode: Sendable, Hashable {
    /// Replace it.
    case replace
    /// The path names a file that has never existed: versions, changes and chunks are named by IDs that never
    /// repeat. A service that must look a name up to replace its file (Drive) creates the file directly. Should a
    /// file be there after all (a send repeated after a crash), it is the same bytes under the same name, which
    /// every reader resolves to one of them.
    case newName
    /// Create the file only where nothing is: a file already at the path is left as it is and the upload throws
    /// `alreadyExists` (a folder there is `wrongKind`, as in every mode). For what must be made once by whichever device comes first (an encrypted remote's key
    /// file). Where the service refuses a second create itself (`CloudCapabilities.exclusiveCreate`) two devices at
    /// the same moment get one success and one `alreadyExists`; elsewhere the connector looks before it writes, so
    /// both may succeed and the later write is what stays: callers read the file back and settle on what is there.
    case create
}

/// Where `download(_:to:)` writes a file.
public enum DownloadDestination: Sendable, Hashable {
    /// A new local file, replacing any; removed again when the download fails.
    case file(URL)
    /// `length` bytes of the existing local file `URL` at `offset`; the file's other bytes are left alone.
    case region(URL, offset: Int64, length: Int64)

    /// Writes bytes read into memory to this destination: the way for a connector that cannot stream a region.
    /// - Throws: `sizeMismatch` when a region's length is not the data's, `localFile` when the file cannot be written.
    public func write(_ data: Data, readFrom path: String) throws {
        switch self {
        case .file(let url):
            do {
                let writer = try AtomicFileWriter(destination: url.path)
                do { try writer.write(data); try writer.commit(durable: false) } catch { writer.discard(); throw error }
            } catch {
                throw CloudFileSystemError.localFile(path: url.path, message: "\(error)")
            }
        case .region(let url, let offset, let length):
            guard Int64(data.count) == length else {
                throw CloudFileSystemError.sizeMismatch(path: path, expected: length, received: Int64(data.count))
            }
            let fd = open(url.path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else {
                throw CloudFileSystemError.localFile(path: url.path, message: String(cString: strerror(errno)))
            }
            defer { close(fd) }
            do {
                try data.withUnsafeBytes { try POSIX.write($0, at: offset, to: fd, path: url.path) }
            } catch {
                throw CloudFileSystemError.localFile(path: url.path, message: "\(error)")
            }
        }
    }
}

extension CloudFileSystem {
    /// Writes bytes from memory, replacing any file there.
    public func upload(_ data: Data, to path: String) async throws {
        try await upload(.data(data), to: path, mode: .replace)
    }

    /// Writes a file from a local file without holding it in memory, replacing any file there.
    public func upload(fileAt source: URL, to path: String) async throws {
        try await upload(try UploadSource(file: source), to: path, mode: .replace)
    }

    /// Writes from `source`, replacing any file there.
    public func upload(_ source: UploadSource, to path: String) async throws {
        try await upload(source, to: path, mode: .replace)
    }

    /// A whole file into memory.
    public func download(_ path: String) async throws -> Data {
        try await read(path, range: nil)
    }

    /// A whole file into a new local file, without holding it in memory.
    public func download(_ path: String, toFileAt destination: URL) async throws {
        try await download(path, to: .file(destination))
    }

    /// A file of `length` bytes into the existing local file `destination` at `offset`.
    public func download(_ path: String, into destination: URL, at offset: Int64, length: Int64) async throws {
        try await download(path, to: .region(destination, offset: offset, length: length))
    }

    /// For an upload in `.create` mode on a service with no create-only request (or one a server may ignore):
    /// `alreadyExists` when a file is at `path` now, `wrongKind` for a folder. Two writers at the same moment may
    /// both pass.
    public func refuseExisting(_ path: String, mode: UploadMode) async throws {
        guard mode == .create else { return }
        let there: CloudItem
        do { there = try await metadata(path) } catch CloudFileSystemError.notFound { return }
        if there.isFolder { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        throw CloudFileSystemError.alreadyExists(path: path)
    }

    /// For an upload in `.create` mode the service refused because something is at `path`: returns when the file
    /// there holds the source's bytes (the create's own first attempt, whose answer was lost), else throws
    /// `alreadyExists` (`wrongKind` for a folder). The bytes are told by size and a checksum the service reports; where
    /// it reports none, a file of at most 1 MiB is read and compared (what is created is small: key files).
    public func settleRefusedCreate(_ path: String, source: UploadSource) async throws {
        let there: CloudItem
        do { there = try await metadata(path) } catch CloudFileSystemError.notFound {
            throw CloudFileSystemError.alreadyExists(path: path)
        }
        if there.isFolder { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        guard there.size == source.size else { throw CloudFileSystemError.alreadyExists(path: path) }
        if let (algorithm, reported) = there.checksums.sorted(by: { $0.key.rawValue < $1.key.rawValue }).first {
            if let ours = try? source.checksum(algorithm), algorithm.matches(reported, ours) { return }
        } else if source.size <= 1 << 20, try await read(path, range: nil) == source.data() {
            return
        }
        throw CloudFileSystemError.alreadyExists(path: path)
    }

    /// `listNames` for a connector with no lighter request than a full listing.
    public func namesFromListing(_ folder: String) async throws -> [String] {
        do {
            return try await list(folder).map(\.name)
        } catch CloudFileSystemError.notFound {
            return []
        }
    }
}

/// Splitting and joining the `/`-separated paths of cloud file systems.
public enum CloudPath {
    /// The components of a path, refusing `.`/`..`, empty components in the middle, and NUL. Split on the UTF-8
    /// bytes (`/` never occurs inside a multi-byte character), as every request of every connector comes here.
    public static func components(_ path: String) throws -> [String] {
        let slash = UInt8(ascii: "/")
        let bytes = path.utf8
        guard let first = bytes.firstIndex(where: { $0 != slash }), let last = bytes.lastIndex(where: { $0 != slash })
        else { return [] }
        let parts = bytes[first...last].split(separator: slash, omittingEmptySubsequences: false)
        var components: [String] = []
        components.reserveCapacity(parts.count)
        for part in parts {
            guard !part.isEmpty, !part.contains(0), !part.elementsEqual(".".utf8), !part.elementsEqual("..".utf8) else {
                throw CloudFileSystemError.invalidPath(path)
            }
            components.append(String(Substring(part)))
        }
        return components
    }

    /// Joins paths with single slashes, dropping empty components: `join("a/", "/b")` is `a/b`.
    public static func join(_ parts: String...) -> String {
        parts.flatMap { $0.utf8.split(separator: UInt8(ascii: "/")).map { String(Substring($0)) } }.joined(
            separator: "/")
    }

    /// The path of the folder holding `path` ("" for an item at the root).
    /// - Throws: `invalidPath` for a path with `.`, `..` or NUL.
    public static func parent(_ path: String) throws -> String {
        try components(path).dropLast().joined(separator: "/")
    }

    /// A file's components split into its folder's and its name; the root names no file (`invalidPath(path)`).
    public static func folderAndName(_ components: [String], of path: String) throws -> (folder: [String], name: String)
    {
        guard let name = components.last else { throw CloudFileSystemError.invalidPath(path) }
        return (Array(components.dropLast()), name)
    }

    public static func name(_ path: String) throws -> String {
        try components(path).last ?? ""
    }
}
