import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// What a backup records about one path besides its contents: kept as the value `.llvs-meta/<path>`, beside the
/// contents under `<path>`, so an unchanged file costs nothing (size and mtime decide, then the hash).
struct BackupEntry: Codable, Equatable {
    enum Kind: String, Codable { case file, symlink, directory }

    var kind: Kind
    var size: Int64
    /// Modification time: seconds since 1970 and nanoseconds (kept apart: a Double cannot hold both exactly).
    var modified: Int64
    var modifiedNanoseconds: Int
    var mode: UInt32

    /// The modification time as the system calls that set it take it.
    var modifiedTime: timespec { timespec(tv_sec: Int(modified), tv_nsec: modifiedNanoseconds) }
    var sha256: String?
    var target: String?

    static let prefix = ".llvs-meta/"
    static func metaId(_ path: String) -> Value.ID { Value.ID(prefix + path) }

    /// Reads what is at `path` without following a symlink.
    static func inspect(_ path: LocalPath) -> (kind: Kind, size: Int64, modified: Int64, nanoseconds: Int, mode: UInt32)? {
        guard let info = path.lstat() else { return nil }
        let kind: Kind
        switch info.st_mode & S_IFMT {
        case S_IFREG: kind = .file
        case S_IFLNK: kind = .symlink
        case S_IFDIR: kind = .directory
        default: return nil // sockets, devices and fifos are not backed up
        }
        return (kind, Int64(info.st_size), Int64(info.st_mtim.tv_sec), info.st_mtim.tv_nsec, UInt32(info.st_mode & 0o7777))
    }

    /// SHA-256 of a file, read in pieces.
    static func hash(_ path: LocalPath) throws -> String {
        let fd = path.openForReading()
        guard fd >= 0 else { throw CommandError.failed("cannot read \(path.display)") }
        let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        defer { try? handle.close() }
        let digest = DigestStream(.sha256)
        while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { digest.update(chunk) }
        return digest.finalizeHex()
    }
}
