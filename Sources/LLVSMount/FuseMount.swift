import CFuse3
import Foundation
import LLVS
import LLVSBackup
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Serves a `MountedStore` at a mount point through libfuse 3's high-level API until it is unmounted
/// (`fusermount3 -u`) or the process gets SIGINT, SIGTERM or SIGHUP (libfuse's handlers end the loop; the mount is
/// then taken down). Requests are served on libfuse's threads, several at once.
public enum FuseMount {
    public enum Failure: Error, CustomStringConvertible, Equatable {
        /// A killed mount left the mount point connected to nothing.
        case staleMountPoint(String)
        case notADirectory(String)
        case mountFailed(String)

        public var description: String {
            switch self {
            case .staleMountPoint(let path):
                "\(path) is left over from a mount whose process is gone; clear it with `fusermount3 -u \(path)` and mount again."
            case .notADirectory(let path): "\(path) is not a folder to mount on."
            case .mountFailed(let path):
                "Could not mount on \(path) (see the message above: is /dev/fuse there, and fusermount3 installed?)."
            }
        }
    }

    /// Mounts, calls `mounted` once the file system answers, serves until unmounted, unmounts.
    public static func serve(_ filesystem: MountedStore, at mountPoint: String, mounted: () -> Void) throws {
        var info = stat()
        if stat(mountPoint, &info) != 0 {
            if errno == ENOTCONN { throw Failure.staleMountPoint(mountPoint) }
            throw Failure.notADirectory(mountPoint)
        }
        guard info.st_mode & S_IFMT == S_IFDIR else { throw Failure.notADirectory(mountPoint) }

        let context = FuseContext(filesystem: filesystem)
        let retained = Unmanaged.passRetained(context)
        var operations = Self.operations
        let words = ["llvs", "-o", "ro,default_permissions,fsname=llvs,subtype=llvs"]
        var argv = words.map { strdup($0) }
        defer { argv.forEach { free($0) } }
        let fuse: OpaquePointer? = argv.withUnsafeMutableBufferPointer { buffer in
            var arguments = fuse_args(argc: Int32(words.count), argv: buffer.baseAddress, allocated: 0)
            defer { fuse_opt_free_args(&arguments) }
            return llvs_fuse_new(&arguments, &operations, retained.toOpaque())
        }
        guard let fuse else {
            retained.release()
            throw Failure.mountFailed(mountPoint)
        }
        guard fuse_mount(fuse, mountPoint) == 0 else {
            fuse_destroy(fuse)
            retained.release()
            throw Failure.mountFailed(mountPoint)
        }
        // Ctrl-C, SIGTERM and SIGHUP take the mount down from a thread of their own (libfuse's own handlers only set
        // a flag, which its loop sees only when a request reaches it) and end `serve` at once: a file some process
        // still holds open keeps a lazily unmounted connection alive, and with it the loop's threads, which the
        // process's exit then ends. `fusermount3 -u` ends the loop itself.
        let state = Mutex((unmounted: false, loopEnded: false))
        let finished = DispatchSemaphore(value: 0)
        let handle = SendableFuse(fuse)
        let unmount = { @Sendable in
            state.withLock { state in
                guard !state.unmounted else { return }
                state.unmounted = true
                fuse_exit(handle.pointer)
                fuse_unmount(handle.pointer)
            }
        }
        let watchers = [SIGINT, SIGTERM, SIGHUP].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                unmount()
                finished.signal()
            }
            source.resume()
            return source
        }
        mounted()
        Thread {
            _ = llvs_fuse_loop_mt(handle.pointer)
            state.withLock { $0.loopEnded = true }
            finished.signal()
        }.start()
        finished.wait()
        for watcher in watchers { watcher.cancel() }
        unmount()
        // Destroyed only when its loop has ended (its threads may still be in a callback otherwise); then the
        // process's exit releases both.
        if state.withLock({ $0.loopEnded }) {
            fuse_destroy(fuse)
            retained.release()
        }
    }

    /// The `struct fuse *` handed to the loop's thread and the signal handlers'. Safe to share: the pointer itself is
    /// never written, the loop is libfuse's own multi-threaded code, and the only other calls on it (`fuse_exit`,
    /// `fuse_unmount`) are made once, under the state's lock, which libfuse documents as callable from another thread
    /// to end its loop; `fuse_destroy` runs only after the loop has returned.
    private struct SendableFuse: @unchecked Sendable {
        let pointer: OpaquePointer
        init(_ pointer: OpaquePointer) { self.pointer = pointer }
    }

    /// What the callbacks reach through `fuse_get_context()->private_data`.
    final class FuseContext: Sendable {
        let filesystem: MountedStore
        let files = Mutex<(next: UInt64, open: [UInt64: OpenFile])>((1, [:]))

        init(filesystem: MountedStore) { self.filesystem = filesystem }

        static var current: FuseContext? {
            guard let data = fuse_get_context()?.pointee.private_data else { return nil }
            return Unmanaged<FuseContext>.fromOpaque(data).takeUnretainedValue()
        }
    }

    static func bytes(_ path: UnsafePointer<CChar>?) -> [UInt8] {
        guard let path else { return [] }
        return Array(UnsafeBufferPointer(start: path, count: strlen(path))).map { UInt8(bitPattern: $0) }
    }

    /// An error as FUSE takes it: a negative errno. A damaged or missing object is EIO (told once per path).
    static func failure(_ error: any Error, path: [UInt8], in context: FuseContext) -> Int32 {
        context.filesystem.reportOnce(String(decoding: path, as: UTF8.self), error)
        return -EIO
    }

    static let operations: fuse_operations = {
        var operations = fuse_operations()
        operations.`init` = { connection, configuration in
            // Symlinks (`latest`, `current`, `heads/…`) kept by the kernel, and every listing sent with each entry's
            // attributes (readdirplus, not only when the kernel guesses a lookup follows), so `ls -l` or `find` of a
            // large folder is not one request per entry.
            if let connection {
                let capable = connection.pointee.capable
                connection.pointee.want |= capable & UInt32(FUSE_CAP_CACHE_SYMLINKS | FUSE_CAP_READDIRPLUS)
                connection.pointee.want &= ~UInt32(FUSE_CAP_READDIRPLUS_AUTO)
            }
            // Nothing in the mount ever changes: the kernel may keep what it read, names and attributes for long.
            configuration?.pointee.kernel_cache = 1
            configuration?.pointee.entry_timeout = 3600
            configuration?.pointee.attr_timeout = 3600
            configuration?.pointee.negative_timeout = 3600
            return fuse_get_context()?.pointee.private_data
        }
        operations.getattr = { path, status, _ in
            guard let context = FuseContext.current, let status else { return -EIO }
            let bytes = FuseMount.bytes(path)
            do {
                guard let node = try context.filesystem.node(bytes) else { return -ENOENT }
                status.pointee = NodeStatus.of(node)
                return 0
            } catch {
                return FuseMount.failure(error, path: bytes, in: context)
            }
        }
        operations.readlink = { path, buffer, size in
            guard let context = FuseContext.current, let buffer, size > 0 else { return -EIO }
            let bytes = FuseMount.bytes(path)
            do {
                let target: [UInt8]
                switch try context.filesystem.node(bytes) {
                case .link(let text, _)?: target = Array(text.utf8)
                case .entry(let entry, _)? where entry.kind == .symlink:
                    guard case .link(let raw) = entry.content else { return -EINVAL }
                    target = raw
                case nil: return -ENOENT
                default: return -EINVAL
                }
                let count = min(target.count, size - 1)
                for index in 0..<count { buffer[index] = CChar(bitPattern: target[index]) }
                buffer[count] = 0
                return 0
            } catch {
                return FuseMount.failure(error, path: bytes, in: context)
            }
        }
        operations.open = { path, info in
            guard let context = FuseContext.current, let info else { return -EIO }
            guard info.pointee.flags & O_ACCMODE == O_RDONLY else { return -EROFS }
            let bytes = FuseMount.bytes(path)
            do {
                let source: OpenFile.Source
                switch try context.filesystem.node(bytes) {
                case .entry(let entry, let version)? where entry.kind == .file:
                    switch entry.content {
                    case .embedded(let data): source = .bytes(data)
                    case .chunks(let hashes): source = .chunks(hashes, version: version, size: entry.size)
                    default: return -EIO
                    }
                case .value(let id, let version, let size, _)?: source = .value(id, version: version, size: size)
                case nil: return -ENOENT
                default: return -EISDIR
                }
                let file = OpenFile(source, store: context.filesystem.store)
                info.pointee.fh = context.files.withLock { files in
                    defer { files.next += 1 }
                    files.open[files.next] = file
                    return files.next
                }
                return 0
            } catch {
                return FuseMount.failure(error, path: bytes, in: context)
            }
        }
        operations.read = { path, buffer, size, offset, info in
            guard let context = FuseContext.current, let buffer, let info else { return -EIO }
            guard let file = context.files.withLock({ $0.open[info.pointee.fh] }) else { return -EBADF }
            do {
                let data = try file.read(at: Int64(offset), count: size)
                data.withUnsafeBytes { raw in
                    if let base = raw.baseAddress { memcpy(buffer, base, raw.count) }
                }
                return Int32(data.count)
            } catch {
                return FuseMount.failure(error, path: FuseMount.bytes(path), in: context)
            }
        }
        operations.release = { _, info in
            guard let context = FuseContext.current, let info else { return 0 }
            _ = context.files.withLock { $0.open.removeValue(forKey: info.pointee.fh) }
            return 0
        }
        operations.readdir = { path, buffer, fill, _, _, _ in
            guard let context = FuseContext.current, let fill else { return -EIO }
            let bytes = FuseMount.bytes(path)
            do {
                guard let children = try context.filesystem.children(bytes) else { return -ENOTDIR }
                for name in [".", ".."] { _ = fill(buffer, name, nil, 0, fuse_fill_dir_flags(rawValue: 0)) }
                for child in children {
                    var status = NodeStatus.of(child.node)
                    let full = RawName.withCString(bytes: child.name) { name in
                        fill(buffer, name, &status, 0, FUSE_FILL_DIR_PLUS)
                    }
                    if full != 0 { break }
                }
                return 0
            } catch {
                return FuseMount.failure(error, path: bytes, in: context)
            }
        }
        operations.statfs = { _, status in
            guard let status else { return -EIO }
            status.pointee = statvfs()
            status.pointee.f_bsize = 4096
            status.pointee.f_frsize = 4096
            status.pointee.f_namemax = 255
            return 0
        }
        return operations
    }()
}
