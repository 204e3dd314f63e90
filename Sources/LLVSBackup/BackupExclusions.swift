import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// What a backup leaves out, as restic's options say it: patterns, folders tagged as caches or holding a named file,
/// files over a size, and other file systems. Remembered in the source's record, so the next backup of the source
/// leaves out the same unless told otherwise.
///
/// A pattern is a shell pattern (`*`, `?`, `[…]`): without `/` it is matched against each entry's name, at any depth
/// (`*.tmp`, `node_modules`); with `/` against the entry's path from the source's root (`/build`, `/docs/*.pdf`),
/// `*` not crossing `/`. A pattern ending in `/` matches folders only.
public struct BackupExclusions: Codable, Equatable, Sendable {
    public var patterns: [String] = []
    /// Names whose presence in a folder leaves the folder out (`.nobackup`).
    public var ifPresent: [String] = []
    /// Leave out folders holding a valid `CACHEDIR.TAG` (the Cache Directory Tagging Specification).
    public var caches = false
    /// Leave out files larger than this many bytes.
    public var largerThan: Int64?
    /// Stay on the source's file system: folders on another one are left out.
    public var oneFileSystem = false

    public init(
        patterns: [String] = [], ifPresent: [String] = [], caches: Bool = false, largerThan: Int64? = nil,
        oneFileSystem: Bool = false
    ) {
        self.patterns = patterns
        self.ifPresent = ifPresent
        self.caches = caches
        self.largerThan = largerThan
        self.oneFileSystem = oneFileSystem
    }

    public var isEmpty: Bool {
        patterns.isEmpty && ifPresent.isEmpty && !caches && largerThan == nil && !oneFileSystem
    }

    /// Whether an entry is left out by its name or path (`path` from the source's root, starting with `/`).
    public func excludes(name: [UInt8], path: [UInt8], isFolder: Bool) -> Bool {
        for pattern in patterns {
            var spelled = pattern
            if spelled.hasSuffix("/") {
                guard isFolder else { continue }
                spelled.removeLast()
            }
            let anchored = spelled.contains("/")
            if anchored, !spelled.hasPrefix("/") { spelled = "/" + spelled }
            let subject = anchored ? path : name
            let matched = OpenDirectory.withName(subject) { text in
                fnmatch(spelled, text, anchored ? FNM_PATHNAME : 0) == 0
            }
            if matched { return true }
        }
        return false
    }

    /// Whether a folder is left out for what it holds: a named file, or a cache tag.
    func excludesFolder(_ name: [UInt8], in directory: OpenDirectory) -> Bool {
        for marker in ifPresent where directory.holds(name + [UInt8(ascii: "/")] + Array(marker.utf8)) { return true }
        if caches, let tag = directory.prefix(of: name + Array("/CACHEDIR.TAG".utf8), count: Self.cacheSignature.count)
        {
            return tag == Self.cacheSignature
        }
        return false
    }

    /// The first bytes of a valid cache tag.
    static let cacheSignature = Array("Signature: 8a477f597d28d172789f06886806bc55".utf8)
}
