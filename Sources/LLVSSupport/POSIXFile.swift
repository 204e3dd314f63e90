import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Thin wrappers over POSIX file calls, each failure reported as `FileError.io` naming the path.
///
/// The store uses these rather than FileManager where durability matters: `fsync` of files and folders,
/// `rename` for atomic replacement and `pread` for reads at an offset from many threads at once.
package enum POSIX {
    /// A path's folder and last name, split at its last `/` (`("", path)` without one), on the bytes: this runs for
    /// every file a bulk receive writes, and bridging to NSString for it costs more than the rest of the write's bookkeeping.
    package static func folderAndName(_ path: String) -> (folder: String, name: String) {
        let utf8 = path.utf8
        guard let slash = utf8.lastIndex(of: UInt8(ascii: "/")) else { return ("", path) }
        return (String(path[..<slash]), String(path[path.index(after: slash)...]))
    }

    package static func fail(_ path: String, _ operation: String) -> FileError {
        .io(path: path, operation: operation, errno: errno)
    }

    package static func makeDirectories(_ path: String) throws {
        // Most calls find the folder there (a store's version folders, made once each): one stat answers them.
        var info = stat()
        if stat(path, &info) == 0, info.st_mode & S_IFMT == S_IFDIR { return }
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw FileError.io(path: path, operation: "create the folder", errno: EIO)
        }
    }

    /// Writes all of `bytes` at `offset` of `fd` (open at `path`, named in errors), however many calls it takes.
    package static func write(_ bytes: UnsafeRawBufferPointer, at offset: Int64, to fd: Int32, path: String) throws {
        var done = 0
        while done < bytes.count {
            let n = pwrite(fd, bytes.baseAddress! + done, bytes.count - done, off_t(offset) + off_t(done))
            if n < 0 {
                if errno == EINTR { continue }
                throw fail(path, "write")
            }
            done += n
        }
    }

    /// Reads exactly `count` bytes at `offset` of `fd` (open at `path`); a file ending first is `corruptFile`.
    package static func read(_ count: Int, at offset: Int64, from fd: Int32, path: String) throws -> Data {
        var data = Data(count: count)
        try data.withUnsafeMutableBytes { (raw: UnsafeMutableRawBufferPointer) in
            var done = 0
            while done < count {
                let n = pread(fd, raw.baseAddress! + done, count - done, off_t(offset) + off_t(done))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw fail(path, "read")
                }
                if n == 0 {
                    throw FileError.endedEarly(
                        path: path, reason: "the file ended early at offset \(offset + Int64(done))")
                }
                done += n
            }
        }
        return data
    }

    /// Makes a new empty file at `path` (0644, emptied if it was there) and opens it for writing. In place: unlike
    /// `FileManager.createFile`, which writes through a hidden temporary (`.dat.nosync…`) beside it, nothing is left
    /// under another name when the process is killed, so whatever is left is named as the caller named it.
    package static func createFile(_ path: String) throws -> FileHandle {
        let fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError.io(path: path, operation: "create", errno: errno) }
        return FileHandle(fileDescriptor: fd, closeOnDealloc: true)
    }

    package static func fileExists(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0
    }

    package static func isDirectory(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
    }

    package static func isRegularFile(_ path: String) -> Bool {
        var info = stat()
        return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
    }

    /// Names in a folder, hidden ones excluded unless asked for; an absent folder has none.
    package static func listNames(_ path: String, includingHidden: Bool = false) throws -> [String] {
        guard let dir = opendir(path) else {
            if errno == ENOENT { return [] }
            throw fail(path, "list")
        }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafePointer(to: entry.pointee.d_name) {
                $0.withMemoryRebound(to: CChar.self, capacity: 256) { String(cString: $0) }
            }
            if name == "." || name == ".." || (!includingHidden && name.hasPrefix(".")) { continue }
            names.append(name)
        }
        return names
    }

    package static func syncDirectory(_ path: String) throws {
        let fd = open(path, O_RDONLY | O_DIRECTORY)
        guard fd >= 0 else { throw fail(path, "open the folder") }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw fail(path, "sync the folder") }
    }

    /// Writes `data` to `path` so that a reader sees either the old file or the whole new one:
    /// a temporary file in the same folder is written, synced, then renamed over the target.
    package static func writeAtomically(_ data: Data, to path: String) throws {
        let writer = try AtomicFileWriter(destination: path)
        do {
            try writer.write(data)
            try writer.commit()
        } catch {
            writer.discard()
            throw error
        }
    }

    /// Copies a file to `path` atomically, 1 MiB at a time.
    package static func copyAtomically(_ source: String, to path: String) throws {
        let input = try ReadableFile(path: source)
        let writer = try AtomicFileWriter(destination: path)
        do {
            var offset: Int64 = 0
            while offset < input.size {
                let piece = try input.read(at: offset, count: Int(min(1 << 20, input.size - offset)))
                try writer.write(piece)
                offset += Int64(piece.count)
            }
            try writer.commit()
        } catch {
            writer.discard()
            throw error
        }
    }

    /// Moves a finished file to `path` (which must not exist) durably: synced, hard-linked into place, the old name
    /// removed, the folder synced. False, with nothing changed, when the two lie on different file systems.
    package static func moveDurably(_ source: String, to path: String) throws -> Bool {
        let fd = open(source, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw fail(source, "open") }
        let synced = fsync(fd) == 0
        close(fd)
        guard synced else { throw fail(source, "sync") }
        guard link(source, path) == 0 else {
            if errno == EXDEV { return false }
            throw fail(path, "create")
        }
        unlink(source)
        try syncDirectory((path as NSString).deletingLastPathComponent)
        return true
    }

    /// The bytes a file takes on disk (its allocated blocks, so a hole counts for nothing); 0 when it is not there.
    package static func allocatedBytes(_ path: String) -> Int64 {
        var info = stat()
        return stat(path, &info) == 0 ? Int64(info.st_blocks) * 512 : 0
    }

    package static func readFile(_ path: String) throws -> Data {
        let file = try ReadableFile(path: path)
        return try file.read(at: 0, count: Int(file.size))
    }

    package static func remove(_ path: String) {
        unlink(path)
    }

    package static func removeTree(_ path: String) throws {
        guard fileExists(path) else { return }
        do { try FileManager.default.removeItem(atPath: path) } catch {
            throw FileError.io(path: path, operation: "remove", errno: EIO)
        }
    }
}

/// A file open for reading at any offset. `pread` does not move a shared position, so one open file serves
/// many threads; the descriptor closes when the last user lets go.
package final class ReadableFile: Sendable {
    package let path: String
    /// The size when opened (of a file still being appended to, what it had then).
    package let size: Int64
    private let fd: Int32
    /// False for a file another writer of this process is still appending to: reads may go past `size`.
    private let sizeIsFinal: Bool

    package convenience init(path: String) throws {
        try self.init(path: path, sizeIsFinal: true)
    }

    /// A file this process is still appending to (a group's pack, `FileStorage+Grouping`): a read past the size it
    /// had when opened is allowed, and fails with `endedEarly` only where the file really ends.
    package convenience init(appendedFileAt path: String) throws {
        try self.init(path: path, sizeIsFinal: false)
    }

    private init(path: String, sizeIsFinal: Bool) throws {
        self.path = path
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw POSIX.fail(path, "open") }
        var info = stat()
        guard fstat(fd, &info) == 0 else { close(fd); throw POSIX.fail(path, "inspect") }
        self.fd = fd
        self.size = Int64(info.st_size)
        self.sizeIsFinal = sizeIsFinal
    }

    deinit { close(fd) }

    /// Reads exactly `count` bytes at `offset`, or throws `corruptFile` when the file ends first.
    package func read(at offset: Int64, count: Int) throws -> Data {
        guard count > 0 else { return Data() }
        guard offset >= 0, offset + Int64(count) <= size || !sizeIsFinal else {
            throw FileError.endedEarly(
                path: path,
                reason: "a record at offset \(offset) of \(count) bytes runs past the end of the \(size)-byte file")
        }
        return try POSIX.read(count, at: offset, from: fd, path: path)
    }

    /// Gives the whole file to `body` in pieces of at most `pieceSize` bytes, in order: bounded memory at any size.
    package func forEachPiece(pieceSize: Int = 1 << 20, _ body: (Data) throws -> Void) throws {
        var offset: Int64 = 0
        while offset < size {
            let piece = try read(at: offset, count: Int(min(Int64(pieceSize), size - offset)))
            try body(piece)
            offset += Int64(piece.count)
        }
    }
}

/// Removes temporary files left in `folder` by writers whose process has ended (a crash mid-write).
/// Files of live processes are left alone: another process sharing the folder may be writing them now.
package func removeAbandonedTemporaryFiles(in folder: String) throws {
    for name in try POSIX.listNames(folder, includingHidden: true)
    where name.hasPrefix(AtomicFileWriter.temporaryPrefix) {
        guard let writer = TemporaryWriter(name.dropFirst(AtomicFileWriter.temporaryPrefix.count)) else { continue }
        if writer.isGone { unlink(folder + "/" + name) }
    }
}

/// Who made a temporary name: `<pid>@<machine>-…` (the process and a tag of the machine it ran on), or `<pid>-…` as
/// earlier builds wrote it. A folder shared between machines (a synced or mounted remote) holds other machines'
/// temporaries, whose processes this one cannot see; its own it can tell dead at once.
package struct TemporaryWriter {
    package let pid: pid_t
    /// Nil for names written before machines were named.
    package let machine: Substring?

    /// This machine's tag: FNV-1a (32 bits, hex) of its host name.
    package static let thisMachine: String = {
        var buffer = [CChar](repeating: 0, count: 256)
        gethostname(&buffer, buffer.count - 1)
        var hash: UInt32 = 0x811C_9DC5
        for byte in buffer.prefix(while: { $0 != 0 }) { hash = (hash ^ UInt32(UInt8(bitPattern: byte))) &* 0x0100_0193 }
        return String(format: "%08x", hash)
    }()

    /// The prefix of a temporary name for this process.
    package static var tag: String { "\(getpid())@\(thisMachine)" }

    package init?(_ rest: Substring) {
        let field = rest.prefix { $0 != "-" }
        let parts = field.split(separator: "@", maxSplits: 1)
        guard let first = parts.first, let pid = pid_t(first), pid > 0 else { return nil }
        self.pid = pid
        machine = parts.count == 2 ? parts[1] : nil
    }

    /// Written on this machine (or by an earlier build, which only ever cleaned its own store) by a process that
    /// has ended.
    package var isGone: Bool {
        (machine == nil || machine! == Self.thisMachine[...]) && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Written here, for certain, by a process that has ended: nothing can still be writing it.
    package var isGoneFromThisMachine: Bool {
        machine.map { $0 == Self.thisMachine[...] } == true && kill(pid, 0) != 0 && errno == ESRCH
    }

    /// Written here by a process that is still running: it may be writing it now, however old it looks.
    package var isLiveHere: Bool {
        machine.map { $0 == Self.thisMachine[...] } == true && !(kill(pid, 0) != 0 && errno == ESRCH)
    }
}

/// Writes a new file through a temporary name, made visible by `commit()` in one rename.
/// Writes are buffered, so callers may append many small pieces; nothing partial is ever seen at `destination`.
package final class AtomicFileWriter {
    package let destination: String
    package let temporaryPath: String
    private var fd: Int32
    private var buffer: [UInt8] = []
    package private(set) var bytesWritten: Int64 = 0
    private static let bufferLimit = 1 << 20
    package static let temporaryPrefix = ".tmp-"

    package init(destination: String) throws {
        self.destination = destination
        let (folder, name) = POSIX.folderAndName(destination)
        // The destination's name only helps a person reading the folder: it is cut so the whole stays a legal name
        // (255 bytes) for a destination whose own name is near that.
        let head = Self.temporaryPrefix + TemporaryWriter.tag + "-\(UUID.drawn().uuidString)-"
        var tail = String.UnicodeScalarView()
        var room = 255 - head.utf8.count
        for scalar in name.unicodeScalars {
            room -= String(scalar).utf8.count
            guard room >= 0 else { break }
            tail.append(scalar)
        }
        self.temporaryPath = folder + "/" + head + String(tail)
        fd = open(temporaryPath, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw POSIX.fail(temporaryPath, "create") }
    }

    deinit {
        if fd >= 0 { discard() }
    }

    package func write(_ data: Data) throws {
        bytesWritten += Int64(data.count)
        guard data.count < Self.bufferLimit else {
            // Large pieces go straight to the file, never copied into the buffer.
            try flush()
            try data.withUnsafeBytes { try writeAll($0) }
            return
        }
        data.withUnsafeBytes { buffer.append(contentsOf: $0) }
        if buffer.count >= Self.bufferLimit { try flush() }
    }

    package func write(_ bytes: [UInt8]) throws {
        buffer.append(contentsOf: bytes)
        bytesWritten += Int64(bytes.count)
        if buffer.count >= Self.bufferLimit { try flush() }
    }

    /// Unbuffered writes at given offsets, for pieces that arrive out of order (a snapshot's chunks) and are written
    /// by several tasks at once. Valid until `commit` or `discard`; not to be mixed with the buffered `write`s.
    package var positional: PositionalFileWriter { PositionalFileWriter(fd: fd, path: temporaryPath) }

    /// Writes `bytes` over what was written at `offset` (a frame's checksum known only after its record).
    package func overwrite(_ bytes: [UInt8], at offset: Int64) throws {
        precondition(offset + Int64(bytes.count) <= bytesWritten, "only bytes already written can be overwritten")
        try flush()
        try bytes.withUnsafeBytes { try POSIX.write($0, at: offset, to: fd, path: temporaryPath) }
    }

    /// Passes the buffered bytes to the file, so a reader of the temporary name sees everything written.
    package func flush() throws {
        try buffer.withUnsafeBytes { try writeAll($0) }
        buffer.removeAll(keepingCapacity: true)
    }

    /// Cuts the file back to its first `length` bytes (an append that failed part way), buffered bytes included;
    /// a length past what was written is refused (EINVAL).
    package func truncate(to length: Int64) throws {
        guard length >= 0, length <= bytesWritten else {
            throw FileError.io(path: temporaryPath, operation: "truncate", errno: EINVAL)
        }
        let flushed = bytesWritten - Int64(buffer.count)
        if length >= flushed {
            buffer.removeLast(Int(bytesWritten - length))
        } else {
            buffer.removeAll(keepingCapacity: true)
            guard ftruncate(fd, off_t(length)) == 0, lseek(fd, off_t(length), SEEK_SET) == off_t(length) else {
                throw POSIX.fail(temporaryPath, "truncate")
            }
        }
        bytesWritten = length
    }

    private func writeAll(_ raw: UnsafeRawBufferPointer) throws {
        var done = 0
        while done < raw.count {
            let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
            if n < 0 {
                if errno == EINTR { continue }
                throw POSIX.fail(temporaryPath, "write")
            }
            done += n
        }
    }

    /// Flushes, syncs the data to disk, moves it into place and syncs the folder, so the new file
    /// survives a crash once this returns and never appears half-written.
    ///
    /// With `replacing: false` the move is a hard link, which fails with `EEXIST` rather than overwrite.
    /// With `durable: false` nothing is synced: the file still appears whole or not at all, but a power cut
    /// may lose it (right for caches and transfers that are redone, wrong for a store's own data).
    package func commit(replacing: Bool = true, durable: Bool = true) throws {
        try flush()
        if durable { guard fsync(fd) == 0 else { throw POSIX.fail(temporaryPath, "sync") } }
        close(fd)
        fd = -1
        defer { unlink(temporaryPath) }
        if replacing {
            guard rename(temporaryPath, destination) == 0 else { throw POSIX.fail(destination, "rename into place") }
        } else {
            guard link(temporaryPath, destination) == 0 else { throw POSIX.fail(destination, "create") }
        }
        if durable { try POSIX.syncDirectory((destination as NSString).deletingLastPathComponent) }
    }

    package func discard() {
        if fd >= 0 { close(fd); fd = -1 }
        unlink(temporaryPath)
    }
}

/// Writes at offsets of a file another owner opened and closes (`AtomicFileWriter.positional`); `pwrite` lets
/// several threads write different ranges at once.
package struct PositionalFileWriter: Sendable {
    package let fd: Int32
    package let path: String

    package func write(_ data: Data, at offset: Int64) throws {
        try data.withUnsafeBytes { try POSIX.write($0, at: offset, to: fd, path: path) }
    }
}
