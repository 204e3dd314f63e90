import Foundation
import LLVSSupport

/// A file or folder in a cloud file system, as a listing or a metadata request reports it.
public struct CloudItem: Hashable, Sendable {
    public var name: String
    public var isFolder: Bool
    /// Bytes, for files; nil when the service does not say.
    public var size: Int64?
    public var modified: Date?
    /// The service's own checksums of the contents, by algorithm, in the service's text form (hex, or base64 for
    /// QuickXorHash); empty where it reports none.
    public var checksums: [ChecksumAlgorithm: String]

    public init(name: String, isFolder: Bool, size: Int64? = nil, modified: Date? = nil, checksums: [ChecksumAlgorithm: String] = [:]) {
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
public protocol CloudFileSystem: Sendable {
    /// True when a file or folder is at `path`.
    func exists(_ path: String) async throws -> Bool
    /// The files and folders directly inside a folder. `notFound` when the folder is missing.
    func list(_ folder: String) async throws -> [CloudItem]
    /// Metadata of one file or folder. `notFound` when missing.
    func metadata(_ path: String) async throws -> CloudItem
    /// Writes a file, replacing any, creating missing parent folders. Readers never see part of it.
    func upload(_ data: Data, to path: String) async throws
    /// Writes a file from a local file without holding it in memory.
    func upload(fileAt source: URL, to path: String) async throws
    /// How to write a local file for one upload to `path` with `upload(stagedFileAt:to:)` (`StagedFileWriter`).
    func stager(for path: String) async throws -> FileStager
    /// Writes a file from a local file its `stager` wrote, which the caller gives up: it is gone once this returns,
    /// whether the upload succeeded or not.
    func upload(stagedFileAt source: URL, to path: String) async throws
    func download(_ path: String) async throws -> Data
    /// Reads a file into a local file without holding it in memory.
    func download(_ path: String, toFileAt destination: URL) async throws
    /// Reads a file of `length` bytes into the existing local file `destination` at `offset`, leaving the rest of it
    /// alone: one piece of a larger file downloaded in pieces at once (a snapshot's chunks). A connector that can
    /// streams it there; the default holds it in memory first. A file of another length fails, and nothing is ever
    /// written outside the region.
    func download(_ path: String, into destination: URL, at offset: Int64, length: Int64) async throws
    func read(_ path: String, range: ByteRange) async throws -> Data
    /// Makes a folder and any missing parents; an existing folder is fine.
    func makeFolder(_ path: String) async throws
    /// Removes a file. A missing file is not an error.
    func removeFile(_ path: String) async throws
    /// Removes a folder and everything in it. A missing folder is not an error.
    func removeFolder(_ path: String) async throws
    /// The names directly inside a folder (LLVS's "list names"); an absent folder has none. What an exchange lists
    /// on every sync, so a connector may answer it with a lighter request than `list`.
    func listNames(_ folder: String) async throws -> [String]
    /// What the service reports and refuses: checksums, name rules, upload limits.
    var capabilities: CloudCapabilities { get }
}

extension CloudFileSystem {
    public var capabilities: CloudCapabilities { .plain }

    /// Staged files hold the bytes as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    /// Uploads the staged file as it is, then removes it.
    public func upload(stagedFileAt source: URL, to path: String) async throws {
        defer { try? FileManager.default.removeItem(at: source) }
        try await upload(fileAt: source, to: path)
    }

    /// Downloads into memory, then writes the bytes at their place.
    public func download(_ path: String, into destination: URL, at offset: Int64, length: Int64) async throws {
        let data = try await download(path)
        guard Int64(data.count) == length else { throw CloudFileSystemError.sizeMismatch(path: path, expected: length, received: Int64(data.count)) }
        let fd = open(destination.path, O_WRONLY | O_CLOEXEC)
        guard fd >= 0 else { throw CloudFileSystemError.localFile(path: destination.path, message: String(cString: strerror(errno))) }
        defer { close(fd) }
        do {
            try data.withUnsafeBytes { try POSIX.write($0, at: offset, to: fd, path: destination.path) }
        } catch {
            throw CloudFileSystemError.localFile(path: destination.path, message: "\(error)")
        }
    }

    /// The names from a full listing.
    public func listNames(_ folder: String) async throws -> [String] {
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
        guard let first = bytes.firstIndex(where: { $0 != slash }), let last = bytes.lastIndex(where: { $0 != slash }) else { return [] }
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

    public static func join(_ parts: String...) -> String {
        parts.flatMap { $0.utf8.split(separator: UInt8(ascii: "/")).map { String(Substring($0)) } }.joined(separator: "/")
    }

    public static func parent(_ path: String) throws -> String {
        try components(path).dropLast().joined(separator: "/")
    }

    /// A file's components split into its folder's and its name; the root names no file (`invalidPath(path)`).
    public static func folderAndName(_ components: [String], of path: String) throws -> (folder: [String], name: String) {
        guard let name = components.last else { throw CloudFileSystemError.invalidPath(path) }
        return (Array(components.dropLast()), name)
    }

    public static func name(_ path: String) throws -> String {
        try components(path).last ?? ""
    }
}
