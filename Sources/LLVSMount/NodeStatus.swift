import Foundation
import LLVSBackup
#if canImport(Glibc)
import Glibc
#endif

/// What `stat` says of a node: a backed-up entry as it was (kind, mode, size, time to the nanosecond, owner when the
/// backup recorded one), a synthetic folder or link read-only and owned by whoever mounted, a value as a file of its
/// size. Every node has one link, folders too: 1 tells `find` and fts not to take a folder's link count as its number
/// of subfolders, which nothing here counts. Blocks are counted as the size needs them.
enum NodeStatus {
    static func of(_ node: MountedStore.Node) -> stat {
        var status = stat()
        status.st_uid = getuid()
        status.st_gid = getgid()
        status.st_nlink = 1
        switch node {
        case .folder(let modified), .valueFolder(_, _, let modified):
            status.st_mode = S_IFDIR | 0o555
            set(&status, modified)
        case .link(let target, let modified):
            status.st_mode = S_IFLNK | 0o777
            status.st_size = off_t(target.utf8.count)
            set(&status, modified)
        case .value(_, _, let size, let modified):
            status.st_mode = S_IFREG | 0o444
            status.st_size = off_t(size)
            set(&status, modified)
        case .entry(let entry, _):
            let kind: mode_t =
                switch entry.kind {
                case .file: S_IFREG
                case .directory: S_IFDIR
                case .symlink: S_IFLNK
                case .fifo: S_IFIFO
                case .characterDevice: S_IFCHR
                case .blockDevice: S_IFBLK
                }
            status.st_mode = kind | mode_t(entry.mode & 0o7777)
            switch entry.content {
            case .link(let target): status.st_size = off_t(target.count)
            case .device(let number): status.st_rdev = dev_t(number)
            default: status.st_size = off_t(entry.size)
            }
            if let owner = entry.ownership {
                status.st_uid = owner.user
                status.st_gid = owner.group
            }
            let time = timespec(tv_sec: Int(entry.modified), tv_nsec: entry.modifiedNanoseconds)
            status.st_mtim = time
            status.st_atim = time
            status.st_ctim = time
        }
        status.st_blksize = 4096
        status.st_blocks = blkcnt_t((Int64(status.st_size) + 511) / 512)
        return status
    }

    private static func set(_ status: inout stat, _ date: Date) {
        let seconds = date.timeIntervalSince1970
        let time = timespec(tv_sec: Int(seconds.rounded(.down)), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
        status.st_mtim = time
        status.st_atim = time
        status.st_ctim = time
    }
}
