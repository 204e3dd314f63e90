import CLinux
import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// One extended attribute of a file: `user.*` ones that programs set, and POSIX ACLs, which Linux keeps as the
/// attributes `system.posix_acl_access` and `system.posix_acl_default` (so keeping attributes keeps ACLs).
public struct ExtendedAttribute: Equatable, Sendable {
    public var name: [UInt8]
    public var value: Data

    public init(name: [UInt8], value: Data) {
        self.name = name
        self.value = value
    }

    /// Linux's limits (`XATTR_NAME_MAX`, `XATTR_SIZE_MAX`): a listing asking for more is damaged.
    static let nameLimit = 255
    static let valueLimit = 65536
    /// More than any file system keeps on one inode.
    static let countLimit = 4096
}

/// Reads and writes extended attributes through paths relative to an open folder (`/proc/self/fd/N/NAME`, whose
/// last component is never followed), since Linux has no `*xattrat` calls glibc wraps.
public enum ExtendedAttributes {
    /// The attributes of `name` in the folder open as `folder`, sorted by name; empty when it has none or its file
    /// system keeps none. A failure is returned as the reason, for a warning.
    static func read(_ name: [UInt8], in folder: Int32) -> Result<[ExtendedAttribute], Failure> {
        // Most files have no attributes: asked through `listxattrat` where the kernel has it (a third of the cost of
        // the path through /proc), which answers them in one call; the others are read through the path.
        if hasListAt.load(ordering: .relaxed) {
            var probe = [CChar](repeating: 0, count: 1)
            let listed = OpenDirectory.withName(name) {
                llvs_listxattrat(folder, $0, UInt32(AT_SYMLINK_NOFOLLOW), &probe, 0)
            }
            if listed == 0 { return .success([]) }
            if listed < 0, errno == ENOSYS { hasListAt.store(false, ordering: .relaxed) }
        }
        return withPath(name, in: folder) { path in
            var size = 1024
            var names = [CChar](repeating: 0, count: size)
            var listed = llistxattr(path, &names, size)
            while listed < 0, errno == ERANGE {
                size = llistxattr(path, nil, 0)
                guard size > 0 else { return size == 0 ? .success([]) : .failure(Failure(errno: errno)) }
                names = [CChar](repeating: 0, count: size)
                listed = llistxattr(path, &names, size)
            }
            guard listed >= 0 else {
                return errno == ENOTSUP || errno == ENOENT ? .success([]) : .failure(Failure(errno: errno))
            }
            var attributes: [ExtendedAttribute] = []
            var start = 0
            while start < listed {
                var end = start
                while end < listed, names[end] != 0 { end += 1 }
                defer { start = end + 1 }
                guard end > start else { continue }
                let attributeName = names[start..<end].map { UInt8(bitPattern: $0) }
                let value = names.withUnsafeBufferPointer { buffer in
                    valueOf(path: path, name: buffer.baseAddress! + start)
                }
                switch value {
                case .success(let value?): attributes.append(ExtendedAttribute(name: attributeName, value: value))
                case .success(nil): continue  // removed since the listing
                case .failure(let failure): return .failure(failure)
                }
            }
            return .success(attributes.sorted { $0.name.lexicographicallyPrecedes($1.name) })
        }
    }

    private static func valueOf(path: UnsafePointer<CChar>, name: UnsafePointer<CChar>) -> Result<Data?, Failure> {
        var size = 256
        while true {
            var buffer = [UInt8](repeating: 0, count: size)
            let got = lgetxattr(path, name, &buffer, size)
            if got >= 0 { return .success(Data(buffer.prefix(got))) }
            if errno == ENODATA { return .success(nil) }
            guard errno == ERANGE else { return .failure(Failure(errno: errno)) }
            let needed = lgetxattr(path, name, nil, 0)
            guard needed >= 0 else { return errno == ENODATA ? .success(nil) : .failure(Failure(errno: errno)) }
            size = max(needed, size * 2)
        }
    }

    /// Sets `attributes` on the file open as `fd`; returns the names that could not be set, with why.
    static func write(_ attributes: [ExtendedAttribute], toOpenFile fd: Int32) -> [(name: String, reason: String)] {
        attributes.compactMap { attribute in
            let done = OpenDirectory.withName(attribute.name) { name in
                attribute.value.withUnsafeBytes { fsetxattr(fd, name, $0.baseAddress, $0.count, 0) }
            }
            return done == 0 ? nil : (RawName.encode(attribute.name), String(cString: strerror(errno)))
        }
    }

    /// Sets `attributes` on `name` in the folder open as `folder`, not following a symlink there.
    static func write(
        _ attributes: [ExtendedAttribute], to name: String, in folder: Int32
    ) -> [(
        name: String, reason: String
    )] {
        withPath(RawName.decode(name), in: folder) { path in
            attributes.compactMap { attribute in
                let done = OpenDirectory.withName(attribute.name) { attributeName in
                    attribute.value.withUnsafeBytes { lsetxattr(path, attributeName, $0.baseAddress, $0.count, 0) }
                }
                return done == 0 ? nil : (RawName.encode(attribute.name), String(cString: strerror(errno)))
            }
        }
    }

    /// Whether the kernel has `listxattrat`; cleared at the first ENOSYS (and by tests, to take the other path).
    static let hasListAt = Atomic<Bool>(true)

    public struct Failure: Error, CustomStringConvertible {
        var errno: Int32
        public var description: String { String(cString: strerror(errno)) }
    }

    private static func withPath<T>(_ name: [UInt8], in folder: Int32, _ body: (UnsafePointer<CChar>) -> T) -> T {
        OpenDirectory.withName(Array("/proc/self/fd/\(folder)/".utf8) + name, body)
    }
}
