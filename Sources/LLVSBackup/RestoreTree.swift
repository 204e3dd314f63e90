import Foundation
import LLVS
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// Writes a restore inside DEST and nowhere else. Every directory is opened relative to its parent with
/// `O_NOFOLLOW`, so a symlink inside DEST (planted there, or made by this restore) is never followed; a file is
/// written to a fresh temporary name in its real parent directory and renamed over the leaf, which replaces a link
/// there rather than writing through it; links are made last, as leaves. DEST itself is the user's to choose and
/// may be a link.
public final class RestoreTree {
    public enum Refusal: Error, CustomStringConvertible {
        /// A component on the way is a symlink or a file, not a directory.
        case notADirectory(String)
        case failed(String, String)

        public var description: String {
            switch self {
            case .notADirectory(let path): "\(path) is a symlink or a file, not a folder; nothing is written through it"
            case .failed(let path, let message): "\(path): \(message)"
            }
        }
    }

    public let destination: String
    private let root: Int32
    /// The directories open along the last path used: `open[i]` is the fd of `openPath[0...i]`.
    private var openPath: [String] = []
    private var open: [Int32] = []

    public init(destination: String) throws {
        self.destination = destination
        try FileManager.default.createDirectory(atPath: destination, withIntermediateDirectories: true)
        root = Glibc.open(destination, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard root >= 0 else {
            throw BackupError.unwritable(path: destination, reason: String(cString: strerror(errno)))
        }
    }

    deinit {
        for fd in open { close(fd) }
        close(root)
    }

    public static func display(_ components: [String]) -> String { components.joined(separator: "/") }

    /// A component's bytes name one entry of its folder: no `/`, no NUL, not `.` or `..` (a value ID could spell
    /// them through the raw-name encoding).
    static func check(_ name: String, in components: [String]) throws {
        let bytes = RawName.decode(name)
        guard !bytes.isEmpty, !bytes.contains(UInt8(ascii: "/")), !bytes.contains(0), bytes != [46], bytes != [46, 46]
        else {
            throw Refusal.failed(display(components), "not a name inside DEST")
        }
    }

    /// The fd of the directory at `components` (relative to DEST), made where missing (0700 until its mode is set).
    public func directory(_ components: [String]) throws -> Int32 {
        var common = 0
        while common < min(openPath.count, components.count), openPath[common] == components[common] { common += 1 }
        while open.count > common { close(open.removeLast()); openPath.removeLast() }
        for index in common..<components.count {
            let parent = open.last ?? root
            let name = components[index]
            try Self.check(name, in: components)
            var fd = RawName.withCString(name) { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            if fd < 0, errno == ENOENT {
                if RawName.withCString(name, { mkdirat(parent, $0, 0o700) }) != 0, errno != EEXIST {
                    throw Refusal.failed(Self.display(Array(components[...index])), String(cString: strerror(errno)))
                }
                fd = RawName.withCString(name) { openat(parent, $0, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC) }
            }
            guard fd >= 0 else {
                if errno == ELOOP || errno == ENOTDIR {
                    throw Refusal.notADirectory(Self.display(Array(components[...index])))
                }
                throw Refusal.failed(Self.display(Array(components[...index])), String(cString: strerror(errno)))
            }
            open.append(fd)
            openPath.append(name)
        }
        return open.last ?? root
    }

    /// Writes a file: `fill` gives the contents, in pieces, to a new file in the real parent directory (under its own
    /// name, or a temporary one renamed over what is there), created, written and given its mode and time through
    /// the one descriptor: one new inode per file.
    public func writeFile(
        _ components: [String], mode: UInt32, modified: timespec, fill: (_ write: (Data) throws -> Void) throws -> Void
    ) throws {
        let parent = try directory(Array(components.dropLast()))
        try Self.writeFile(components, in: parent, mode: mode, modified: modified, fill: fill)
    }

    /// `writeFile` into `parent`, the open directory of `components` without its leaf (from `directory`, kept open
    /// by the caller): safe from several threads at once, so a folder's files are written in parallel.
    /// The attributes are set before the mode (an ACL sets the group bits, which the mode then confirms); the names
    /// of those that could not be set are returned, with why.
    @discardableResult
    public static func writeFile(
        _ components: [String], in parent: Int32, mode: UInt32, modified: timespec,
        attributes: [ExtendedAttribute] = [], owner: BackupTreeEntry.Ownership? = nil,
        fill: (_ write: (Data) throws -> Void) throws -> Void
    ) throws -> [AttributeRefusal] {
        var attributeRefusals: [AttributeRefusal] = []
        let name = components[components.count - 1]
        try check(name, in: components)
        let flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
        // Made under its own name when nothing is there (a restore into a new folder, the usual case): a rename per
        // file cost more than writing a small file. Where something is, a temporary file is renamed over it, so what
        // was there stays whole until the new one is. A killed restore may so leave a file cut short under its own
        // name; the next restore into the same place replaces it.
        // `UUID.drawn()`, not `UUID()`: Foundation's opens `/dev/urandom` for each one.
        var temporary: String?
        var fd = RawName.withCString(name) { openat(parent, $0, flags, 0o600) }
        if fd < 0, errno == EEXIST {
            let made = ".llvs-restore-\(UUID.drawn().uuidString)"
            temporary = made
            fd = openat(parent, made, flags, 0o600)
        }
        guard fd >= 0 else { throw Refusal.failed(display(components), String(cString: strerror(errno))) }
        func removeWritten() {
            if let temporary {
                unlinkat(parent, temporary, 0)
            } else {
                _ = RawName.withCString(name) { unlinkat(parent, $0, 0) }
            }
        }
        do {
            defer { close(fd) }
            try fill { data in
                try data.withUnsafeBytes { raw in
                    var offset = 0
                    while offset < raw.count {
                        let written = Glibc.write(fd, raw.baseAddress! + offset, raw.count - offset)
                        if written < 0, errno == EINTR { continue }
                        guard written > 0 else {
                            throw Refusal.failed(display(components), String(cString: strerror(errno)))
                        }
                        offset += written
                    }
                }
            }
            attributeRefusals = AttributeRefusal.of(
                ExtendedAttributes.write(attributes, toOpenFile: fd), at: components)
            // Before the mode: a change of owner clears the setuid and setgid bits.
            if let owner, fchown(fd, owner.user, owner.group) != 0 {
                attributeRefusals.append(AttributeRefusal.owner(components))
            }
            guard fchmod(fd, mode_t(mode)) == 0 else {
                throw Refusal.failed(display(components), String(cString: strerror(errno)))
            }
            var times = [modified, modified]
            futimens(fd, &times)
        } catch {
            removeWritten()
            throw error
        }
        guard let temporary else { return attributeRefusals }
        guard RawName.withCString(name, { renameat(parent, temporary, parent, $0) }) == 0 else {
            let reason = errno == EISDIR ? "a folder is in the way" : String(cString: strerror(errno))
            unlinkat(parent, temporary, 0)
            throw Refusal.failed(display(components), reason)
        }
        return attributeRefusals
    }

    /// An extended attribute a restore could not set (a file system without them, a namespace only root may write):
    /// told, but the file is restored.
    public struct AttributeRefusal: CustomStringConvertible, Sendable {
        public var path: String
        public var name: String
        public var reason: String
        public var description: String { "\(path): extended attribute \(name) not restored (\(reason))" }

        static func of(_ failures: [(name: String, reason: String)], at components: [String]) -> [AttributeRefusal] {
            failures.map { AttributeRefusal(path: display(components), name: $0.name, reason: $0.reason) }
        }

        /// The owner could not be set (read from `errno`).
        static func owner(_ components: [String]) -> AttributeRefusal {
            AttributeRefusal(path: display(components), name: "(owner)", reason: String(cString: strerror(errno)))
        }
    }

    /// Gives a leaf already made (a link, a FIFO, a device) its owner, not following it.
    public func setOwner(_ owner: BackupTreeEntry.Ownership?, of components: [String]) throws -> [AttributeRefusal] {
        guard let owner else { return [] }
        let parent = try directory(Array(components.dropLast()))
        let done = RawName.withCString(components[components.count - 1]) {
            fchownat(parent, $0, owner.user, owner.group, AT_SYMLINK_NOFOLLOW)
        }
        return done == 0 ? [] : [AttributeRefusal.owner(components)]
    }

    /// Sets the attributes of a leaf already made (a link, a FIFO, a device), not following it.
    public func setAttributes(_ attributes: [ExtendedAttribute], of components: [String]) throws -> [AttributeRefusal] {
        guard !attributes.isEmpty else { return [] }
        let parent = try directory(Array(components.dropLast()))
        return AttributeRefusal.of(
            ExtendedAttributes.write(attributes, to: components[components.count - 1], in: parent), at: components)
    }

    public func makeDirectory(_ components: [String]) throws {
        _ = try directory(components)
    }

    /// Sets a directory's mode and time once everything inside it is written.
    @discardableResult
    public func finishDirectory(
        _ components: [String], mode: UInt32, modified: timespec, attributes: [ExtendedAttribute] = [],
        owner: BackupTreeEntry.Ownership? = nil
    ) throws -> [AttributeRefusal] {
        let fd = try directory(components)
        // After the folder's entries: a default ACL set first would be inherited by entries that had none.
        var refusals = AttributeRefusal.of(ExtendedAttributes.write(attributes, toOpenFile: fd), at: components)
        if let owner, fchown(fd, owner.user, owner.group) != 0 { refusals.append(AttributeRefusal.owner(components)) }
        fchmod(fd, mode_t(mode))
        var times = [modified, modified]
        futimens(fd, &times)
        return refusals
    }

    /// Clears the leaf `name` of `parent` for a new entry: a file or link there goes (it is replaced, never written
    /// through), a folder stays and refuses the entry.
    private static func clearLeaf(
        _ name: UnsafePointer<CChar>, in parent: Int32, _ components: [String], for what: String
    ) throws {
        var info = stat()
        guard fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else { return }
        guard info.st_mode & S_IFMT != S_IFDIR else {
            throw Refusal.failed(display(components), "a folder is in the way of the \(what)")
        }
        unlinkat(parent, name, 0)
    }

    /// Makes a FIFO or a device as a leaf (devices only as root, as `mknod` allows), with its mode and time.
    public func makeSpecial(
        _ components: [String], kind: BackupTreeEntry.Kind, device: UInt64, mode: UInt32, modified: timespec
    ) throws {
        let parent = try directory(Array(components.dropLast()))
        let name = components[components.count - 1]
        try Self.check(name, in: components)
        let type: mode_t =
            switch kind {
            case .fifo: S_IFIFO
            case .characterDevice: S_IFCHR
            default: S_IFBLK
            }
        try RawName.withCString(name) { name in
            try Self.clearLeaf(name, in: parent, components, for: "\(kind)")
            guard mknodat(parent, name, type | mode_t(mode & 0o7777), dev_t(device)) == 0 else {
                let reason =
                    errno == EPERM && kind != .fifo
                    ? "a device (number \(device)) that only root can make; not restored"
                    : String(cString: strerror(errno))
                throw Refusal.failed(Self.display(components), reason)
            }
            // mknod applies the umask: the mode is set again, without following anything.
            fchmodat(parent, name, mode_t(mode & 0o7777), 0)
            var times = [modified, modified]
            utimensat(parent, name, &times, AT_SYMLINK_NOFOLLOW)
        }
    }

    /// Makes `components` a second name of the file this restore wrote at `first` (both inside DEST, neither
    /// followed through a link). False when `first` is not there to link to (it was refused): the caller writes the
    /// file on its own instead.
    public func makeHardLink(_ components: [String], to first: [String]) throws -> Bool {
        let firstParent = dup(try directory(Array(first.dropLast())))
        guard firstParent >= 0 else { return false }
        defer { close(firstParent) }
        let parent = try directory(Array(components.dropLast()))
        let name = components[components.count - 1]
        try Self.check(name, in: components)
        return try RawName.withCString(first[first.count - 1]) { target in
            var info = stat()
            guard fstatat(firstParent, target, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG else {
                return false
            }
            return try RawName.withCString(name) { name in
                try Self.clearLeaf(name, in: parent, components, for: "hard link")
                return linkat(firstParent, target, parent, name, 0) == 0
            }
        }
    }

    /// Makes a symlink as a leaf, replacing a file or link there (never a folder); the link is not followed.
    public func makeLink(_ components: [String], target: String, modified: timespec) throws {
        let parent = try directory(Array(components.dropLast()))
        let name = components[components.count - 1]
        try Self.check(name, in: components)
        try RawName.withCString(name) { name in
            var info = stat()
            if fstatat(parent, name, &info, AT_SYMLINK_NOFOLLOW) == 0 {
                guard info.st_mode & S_IFMT != S_IFDIR else {
                    throw Refusal.failed(Self.display(components), "a folder is in the way of the link")
                }
                unlinkat(parent, name, 0)
            }
            guard RawName.withCString(target, { symlinkat($0, parent, name) }) == 0 else {
                throw Refusal.failed(Self.display(components), String(cString: strerror(errno)))
            }
            var times = [modified, modified]
            utimensat(parent, name, &times, AT_SYMLINK_NOFOLLOW)
        }
    }
}
