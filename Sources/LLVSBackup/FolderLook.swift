import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// A small file read whole (at most `BackupWalk.embeddedLimit` bytes), with what tells it was not changed meanwhile.
enum SmallRead: Sendable {
    case data(Data, after: stat)
    case vanished
    case unreadable(Int32)
    case changed

    /// Opens, reads and closes a small file of `directory` (the open uses no path walk, nor follows a link).
    static func read(
        _ name: [UInt8], in directory: OpenDirectory, listed: stat, afterOpening: (@Sendable ([UInt8]) -> Void)? = nil
    ) -> SmallRead {
        let fd = directory.openFile(name)
        guard fd >= 0 else {
            switch errno {
            case ENOENT: return .vanished
            case ELOOP, ENXIO: return .changed  // replaced by a link or a FIFO since it was listed
            case let code: return .unreadable(code)
            }
        }
        defer { close(fd) }
        afterOpening?(name)
        return read(fd, listed: listed)
    }

    /// Reads an open small file: one read when the listing's size is right (a file that grew since is caught by the
    /// look after it).
    static func read(_ fd: Int32, listed: stat) -> SmallRead {
        let limit = BackupWalk.embeddedLimit
        var buffer = [UInt8](repeating: 0, count: limit + 1)
        var count = 0
        let expected = Int(listed.st_size)
        while count < buffer.count {
            let got = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + count, $0.count - count) }
            if got < 0 {
                if errno == EINTR { continue }
                return .unreadable(errno)
            }
            if got == 0 { break }
            count += got
            if count == expected { break }
        }
        var after = stat()
        guard fstat(fd, &after) == 0, count == expected, count <= limit else { return .changed }
        return .data(Data(buffer[0..<count]), after: after)
    }

    /// What the walk makes of it: the entry, when the file after the read is the one listed, unchanged.
    func outcome(entry: BackupTreeEntry, listed: stat) -> BackupWalk.ReadOutcome {
        switch self {
        case .data(let data, let after):
            guard after.st_mode & S_IFMT == S_IFREG, after.st_ino == listed.st_ino, after.st_dev == listed.st_dev,
                after.st_size == listed.st_size, after.st_mtim.tv_sec == listed.st_mtim.tv_sec,
                after.st_mtim.tv_nsec == listed.st_mtim.tv_nsec, after.st_ctim.tv_sec == listed.st_ctim.tv_sec,
                after.st_ctim.tv_nsec == listed.st_ctim.tv_nsec
            else { return .changed }
            var result = entry
            result.size = Int64(listed.st_size)
            result.modified = Int64(listed.st_mtim.tv_sec)
            result.modifiedNanoseconds = listed.st_mtim.tv_nsec
            result.mode = UInt32(listed.st_mode & 0o7777)
            result.content = .embedded(data)
            return .stored(result)
        case .vanished: return .vanished
        case .unreadable(let code): return .unreadable(String(cString: strerror(code)))
        case .changed: return .changed
        }
    }
}

/// The first look at each entry of a folder: its status and, for a small file that is new or changed, its bytes.
/// Done on several threads at once for a large folder: for trees of small files the time goes to system calls
/// (a look, an open, a read and a close per file), which run in parallel in the kernel.
struct FolderLook: Sendable {
    var status: stat?
    var read: SmallRead?

    static let parallelFrom = 16
    static let workers = max(1, min(8, ProcessInfo.processInfo.activeProcessorCount))

    static func take(
        _ names: [[UInt8]], in directory: OpenDirectory, previous: BackupTree?, interrupted: BackupTree?,
        afterOpening: (@Sendable ([UInt8]) -> Void)?
    ) -> [FolderLook] {
        @Sendable func look(_ name: [UInt8]) -> FolderLook {
            guard let info = directory.status(name) else { return FolderLook(status: nil, read: nil) }
            guard info.st_mode & S_IFMT == S_IFREG, info.st_size <= BackupWalk.embeddedLimit else {
                return FolderLook(status: info, read: nil)
            }
            let entry = BackupTreeEntry(
                name: name, kind: .file, mode: UInt32(info.st_mode & 0o7777), size: Int64(info.st_size),
                modified: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: info.st_mtim.tv_nsec,
                content: .embedded(Data()))
            let candidates = [interrupted?.entry(named: name), previous?.entry(named: name)].compactMap { $0 }
            if candidates.contains(where: { BackupWalk.isUnchanged($0, entry) }) {
                return FolderLook(status: info, read: nil)
            }
            return FolderLook(
                status: info, read: SmallRead.read(name, in: directory, listed: info, afterOpening: afterOpening))
        }
        guard names.count >= parallelFrom, workers > 1 else { return names.map(look) }
        let results = UnsafeMutableBufferPointer<FolderLook>.allocate(capacity: names.count)
        defer { results.deallocate() }
        nonisolated(unsafe) let output = results
        DispatchQueue.concurrentPerform(iterations: workers) { worker in
            for index in stride(from: worker, to: names.count, by: workers) {
                (output.baseAddress! + index).initialize(to: look(names[index]))
            }
        }
        let taken = Array(results)
        _ = results.deinitialize()
        return taken
    }
}
