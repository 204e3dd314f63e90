import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// The per-path backup layout of earlier builds: each path's contents as the value `<path>`, and what it recorded
/// about the path as JSON in `.llvs-meta/<path>`. Such a store still restores, and its next backup (in trees) leaves
/// these values out of its version.
public enum LegacyBackupLayout {
    /// What was recorded about one path besides its contents.
    public struct Entry: Codable, Equatable, Sendable {
        public enum Kind: String, Codable, Sendable { case file, symlink, directory }

        public var kind: Kind
        public var size: Int64
        /// Modification time: seconds since 1970 and nanoseconds (kept apart: a Double cannot hold both exactly).
        public var modified: Int64
        public var modifiedNanoseconds: Int
        public var mode: UInt32
        public var sha256: String?
        public var target: String?

        /// The modification time as the system calls that set it take it.
        public var modifiedTime: timespec { timespec(tv_sec: Int(modified), tv_nsec: modifiedNanoseconds) }
    }

    public static let prefix = ".llvs-meta/"
    public static func metaId(_ path: String) -> Value.ID { Value.ID(prefix + path) }

    /// The backed-up paths of a version, sorted, or those at or below `paths`.
    public static func paths(at version: Version.ID, in store: Store, under paths: [String] = []) throws -> [String] {
        try store.valueReferences(at: version).compactMap { reference -> String? in
            let id = reference.valueId.rawValue
            guard id.hasPrefix(prefix) else { return nil }
            let path = String(id.dropFirst(prefix.count))
            return paths.isEmpty || paths.contains { path == $0 || path.hasPrefix($0 + "/") } ? path : nil
        }.sorted()
    }

    /// Removes every value of this layout from the version being built; returns how many. Only looked for while the
    /// store has no backup of the tree layout (a scan of the version's map, once).
    public static func removeAll(from builder: VersionBuilder, at version: Version.ID?, in store: Store) throws -> Int {
        guard let version, try !BackupReader(store: store).hasBackups(at: version) else { return 0 }
        var removed = 0
        let references = try store.valueReferences(at: version)
        let ids = Set(references.map(\.valueId.rawValue))
        for reference in references where reference.valueId.rawValue.hasPrefix(prefix) {
            try builder.remove(reference.valueId)
            removed += 1
            let path = String(reference.valueId.rawValue.dropFirst(prefix.count))
            if ids.contains(path) {
                try builder.remove(Value.ID(path))
                removed += 1
            }
        }
        return removed
    }

    /// Restores `paths` (from `paths(at:in:under:)`) of a version inside `destination` only: files and folders
    /// first, links last as leaves; an entry below a link the store holds, or below a link or file found in the
    /// destination, is refused and reported, never followed.
    /// - Returns: how many entries were restored, and why each refused one was.
    public static func restore(
        _ paths: [String], at version: Version.ID, from store: Store, into destination: String,
        modeMask: UInt32
    ) throws -> (restored: Int, refused: [String]) {
        let tree = try RestoreTree(destination: destination)
        var records: [(path: String, components: [String], entry: Entry)] = []
        var refused: [String] = []
        for path in paths {
            let components = path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard components.allSatisfy({ !$0.isEmpty && $0 != ".." && $0 != "." && !$0.contains("\0") }) else {
                refused.append("\(path): not a path inside DEST")
                continue
            }
            guard let metaValue = try store.value(id: metaId(path), at: version),
                let entry = try? JSONDecoder().decode(Entry.self, from: metaValue.data)
            else { continue }
            records.append((path, components, entry))
        }
        let links = Set(records.filter { $0.entry.kind == .symlink }.map(\.path))
        func underLink(_ path: String) -> String? {
            var prefix = Substring(path)
            while let slash = prefix.lastIndex(of: "/") {
                prefix = prefix[..<slash]
                if links.contains(String(prefix)) { return String(prefix) }
            }
            return nil
        }
        var folders: [(components: [String], entry: Entry)] = []
        var restored = 0
        for record in records.filter({ $0.entry.kind != .symlink }) + records.filter({ $0.entry.kind == .symlink }) {
            if let link = underLink(record.path) {
                refused.append("\(record.path): it is below \(link), which is a symlink in this backup")
                continue
            }
            do {
                switch record.entry.kind {
                case .directory:
                    try tree.makeDirectory(record.components)
                    folders.append((record.components, record.entry))
                case .file:
                    // Streamed from the store to the file: a large file is never whole in memory.
                    try tree.writeFile(
                        record.components, mode: record.entry.mode & modeMask, modified: record.entry.modifiedTime
                    ) { write in
                        try store.writeValue(id: Value.ID(record.path), at: version, into: write)
                    }
                case .symlink:
                    try tree.makeLink(
                        record.components, target: record.entry.target ?? "", modified: record.entry.modifiedTime)
                }
                restored += 1
            } catch let refusal as RestoreTree.Refusal {
                refused.append(refusal.description)
            }
        }
        // Deepest first, so a folder made read-only does not stop the ones inside it.
        for folder in folders.sorted(by: { $0.components.count > $1.components.count }) {
            try? tree.finishDirectory(
                folder.components, mode: folder.entry.mode & modeMask, modified: folder.entry.modifiedTime)
        }
        return (restored, refused)
    }
}
