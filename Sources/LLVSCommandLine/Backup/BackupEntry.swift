import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// What the per-path backup layout of earlier builds recorded about one path besides its contents: the value
/// `.llvs-meta/<path>`, beside the contents under `<path>`. Read only to restore such a store; backups are now trees
/// (`LLVSBackup`).
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
}
