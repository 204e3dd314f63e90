import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// A folder being backed up, held open: its entries are looked at and opened relative to it (`fstatat`, `openat`),
/// never through their full path, so the kernel does not walk the path again for every file, and a folder swapped
/// for a symlink while the walk is inside it is not followed.
struct OpenDirectory: Sendable {
    let fd: Int32
    /// For messages.
    let path: LocalPath

    static func open(_ path: LocalPath) throws -> OpenDirectory {
        let fd = path.withCString { Glibc.open($0, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
        guard fd >= 0 else {
            throw BackupError.unreadable(path: path.display, reason: String(cString: strerror(errno)))
        }
        return OpenDirectory(fd: fd, path: path)
    }

    func close() { _ = Glibc.close(fd) }

    /// A folder inside this one; never through a symlink.
    func openFolder(_ name: [UInt8]) throws -> OpenDirectory {
        let child = Self.withName(name) { openat(fd, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
        guard child >= 0 else {
            throw BackupError.unreadable(path: path.appending(name).display, reason: String(cString: strerror(errno)))
        }
        return OpenDirectory(fd: child, path: path.appending(name))
    }

    /// Whether the folder `name` inside this one is an LLVS store (it holds the store's descriptor file).
    func holdsStore(_ name: [UInt8]) -> Bool {
        holds(name + [UInt8(ascii: "/")] + Array(StoreDescriptor.fileName.utf8))
    }

    /// Whether a regular file is at `relative` (a path below this folder), not through a final symlink.
    func holds(_ relative: [UInt8]) -> Bool {
        var info = stat()
        let found = Self.withName(relative) { fstatat(fd, $0, &info, AT_SYMLINK_NOFOLLOW) }
        return found == 0 && info.st_mode & S_IFMT == S_IFREG
    }

    /// The first `count` bytes of the regular file at `relative`; nil when there is none or it is shorter.
    func prefix(of relative: [UInt8], count: Int) -> [UInt8]? {
        let file = Self.withName(relative) { openat(fd, $0, O_RDONLY | O_NOFOLLOW | O_CLOEXEC) }
        guard file >= 0 else { return nil }
        defer { _ = Glibc.close(file) }
        var bytes = [UInt8](repeating: 0, count: count)
        let read = bytes.withUnsafeMutableBytes { pread(file, $0.baseAddress, count, 0) }
        return read == count ? bytes : nil
    }

    /// The names in the folder, as bytes, without `.` and `..`, sorted by their bytes.
    func names() throws -> [[UInt8]] {
        let copy = dup(fd)
        guard copy >= 0, let stream = fdopendir(copy) else {
            if copy >= 0 { Glibc.close(copy) }
            throw BackupError.unreadable(path: path.display, reason: String(cString: strerror(errno)))
        }
        defer { closedir(stream) }
        // The copy shares the folder's read position with `fd`: start from the beginning whatever read it before.
        rewinddir(stream)
        var names: [[UInt8]] = []
        errno = 0
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in Array(raw.prefix { $0 != 0 }) }
            if name == [46] || name == [46, 46] { continue }
            names.append(name)
        }
        guard errno == 0 else {
            throw BackupError.unreadable(path: path.display, reason: String(cString: strerror(errno)))
        }
        return names.sorted { $0.lexicographicallyPrecedes($1) }
    }

    /// What the entry is, without following a symlink; nil when it is gone.
    func status(_ name: [UInt8]) -> stat? {
        var info = stat()
        return Self.withName(name) { fstatat(fd, $0, &info, AT_SYMLINK_NOFOLLOW) } == 0 ? info : nil
    }

    /// Opens a file for reading: never through a symlink, and never waiting on a FIFO put there since the listing.
    func openFile(_ name: [UInt8]) -> Int32 {
        Self.withName(name) { openat(fd, $0, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC) }
    }

    func linkTarget(_ name: [UInt8]) -> [UInt8]? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        let count = Self.withName(name) { readlinkat(fd, $0, &buffer, buffer.count - 1) }
        guard count >= 0 else { return nil }
        return buffer.prefix(count).map { UInt8(bitPattern: $0) }
    }

    static func withName<T>(_ name: [UInt8], _ body: (UnsafePointer<CChar>) -> T) -> T {
        withUnsafeTemporaryAllocation(of: CChar.self, capacity: name.count + 1) { buffer in
            for (index, byte) in name.enumerated() { buffer[index] = CChar(bitPattern: byte) }
            buffer[name.count] = 0
            return body(buffer.baseAddress!)
        }
    }
}
