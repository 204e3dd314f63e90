import Foundation
import LLVS
import LLVSBackup
import LLVSRetention
import LLVSSupport
import Synchronization

/// A store as a read-only tree of files, as of the moment it was mounted:
///
///     sources/<source>/<ISO time of each kept backup>/…   the backed-up tree: modes, times, links, sizes, owners
///     sources/<source>/latest                             a link to the newest
///     versions/<version>/…                                each version's values, an ID `a/b` a folder `a` holding `b`
///     heads/<version>, current                            links into versions/
///
/// `<source>` is the source's name without its leading `/`, each further `/` a `-` (`/home/me/docs` is
/// `home-me-docs`). Every path is resolved from the root on each call (the kernel caches what it is told, for as long
/// as it is told: nothing here changes); listings are cached by `BackupReader`, a version's tree of value IDs by
/// `VersionFolders`.
public final class MountedStore: Sendable {
    public let store: Store
    let reader: BackupReader
    let current: Version.ID?
    let mountedAt: Date
    /// Per source folder name: its backups, oldest first, each under its folder name (its time).
    let sources: [String: [(name: String, backup: CatalogedBackup)]]
    let sourceOrder: [String]
    let versionFolders: VersionFolders
    /// Paths whose read failed, told once each.
    private let reported = Mutex<Set<String>>([])
    let report: @Sendable (String) -> Void

    public init(store: Store, current: Version.ID?, report: @escaping @Sendable (String) -> Void) throws {
        self.store = store
        self.current = current
        self.report = report
        reader = BackupReader(store: store)
        mountedAt = Date()
        var sources: [String: [(name: String, backup: CatalogedBackup)]] = [:]
        var order: [String] = []
        if let current, try reader.hasBackups(at: current) {
            let catalog = try BackupCatalog(store: store, at: current)
            var folderOfSource: [String: String] = [:]
            for backup in catalog.kept.sorted(by: { ($0.date, $0.sequence) < ($1.date, $1.sequence) }) {
                let folder: String
                if let known = folderOfSource[backup.source] {
                    folder = known
                } else {
                    folder = Self.unique(Self.folderName(ofSource: backup.source), among: Set(order))
                    folderOfSource[backup.source] = folder
                    order.append(folder)
                }
                let time = Self.timeName(backup.date)
                let taken = Set(sources[folder, default: []].map(\.name))
                sources[folder, default: []].append((Self.unique(time, among: taken), backup))
            }
        }
        self.sources = sources
        sourceOrder = order
        versionFolders = VersionFolders(store: store)
    }

    /// Subfolder listings storage is told of when a folder is listed (`Store.prefetchValues`).
    static let listingsAhead = 32

    static func folderName(ofSource name: String) -> String {
        let trimmed = name.drop(while: { $0 == "/" })
        let folder = trimmed.replacingOccurrences(of: "/", with: "-")
        return folder.isEmpty ? "root" : folder
    }

    static func timeName(_ date: Date) -> String { date.formatted(.iso8601) }

    /// `name`, or `name-2`, `name-3`… when it is taken.
    static func unique(_ name: String, among taken: Set<String>) -> String {
        guard taken.contains(name) else { return name }
        var index = 2
        while taken.contains("\(name)-\(index)") { index += 1 }
        return "\(name)-\(index)"
    }

    /// Reports a failed read of `path` once, on the report channel (standard error).
    func reportOnce(_ path: String, _ error: any Error) {
        let first = reported.withLock { $0.insert(path).inserted }
        if first { report("\(path): \(error)") }
    }

    // MARK: Paths

    /// What a path names.
    enum Node {
        case folder(modified: Date)
        case link(target: String, modified: Date)
        /// An entry of a backup (a file, folder, link, FIFO or device).
        case entry(BackupTreeEntry, version: Version.ID)
        /// A value of a version, shown as a file.
        case value(Value.ID, version: Version.ID, size: Int64, modified: Date)
        /// A folder of a version's value IDs (`a` of `a/b`).
        case valueFolder(version: Version.ID, prefix: String, modified: Date)
    }

    /// The node at `path` (`/sources/x/…`), nil when there is none.
    func node(_ path: [UInt8]) throws -> Node? {
        let components = path.split(separator: UInt8(ascii: "/")).map(Array.init)
        guard let first = components.first.map({ String(decoding: $0, as: UTF8.self) }) else {
            return .folder(modified: mountedAt)
        }
        let rest = Array(components.dropFirst())
        switch first {
        case "sources": return try sourceNode(rest)
        case "versions": return try versionNode(rest)
        case "heads":
            guard !rest.isEmpty else { return .folder(modified: mountedAt) }
            let id = Version.ID(String(decoding: rest[0], as: UTF8.self))
            guard rest.count == 1, store.history.heads.contains(id) else { return nil }
            return .link(target: "../versions/\(id.rawValue)", modified: date(of: id))
        case "current":
            guard rest.isEmpty, let current else { return nil }
            return .link(target: "versions/\(current.rawValue)", modified: date(of: current))
        default: return nil
        }
    }

    private func date(of version: Version.ID) -> Date { store.version(identifiedBy: version)?.date ?? mountedAt }

    private func sourceNode(_ rest: [[UInt8]]) throws -> Node? {
        guard let folderBytes = rest.first else { return .folder(modified: mountedAt) }
        let folder = String(decoding: folderBytes, as: UTF8.self)
        guard let backups = sources[folder] else { return nil }
        guard rest.count > 1 else { return .folder(modified: backups.last?.backup.date ?? mountedAt) }
        let name = String(decoding: rest[1], as: UTF8.self)
        if name == "latest", rest.count == 2, let newest = backups.last {
            return .link(target: newest.name, modified: newest.backup.date)
        }
        guard let backup = backups.first(where: { $0.name == name })?.backup else { return nil }
        guard
            var entry = try reader.entry(at: Array(rest.dropFirst(2)), of: backup.record, at: backup.version)
        else { return nil }
        if rest.count == 2 {
            // The backup's root: its folder, dated by the backup.
            entry.modified = Int64(backup.date.timeIntervalSince1970)
            entry.modifiedNanoseconds = 0
            entry.mode = 0o555
        }
        return .entry(entry, version: backup.version)
    }

    private func versionNode(_ rest: [[UInt8]]) throws -> Node? {
        guard let first = rest.first else { return .folder(modified: mountedAt) }
        let id = Version.ID(String(decoding: first, as: UTF8.self))
        guard let version = store.version(identifiedBy: id) else { return nil }
        let inside = rest.dropFirst().map { String(decoding: $0, as: UTF8.self) }.joined(separator: "/")
        if inside.isEmpty { return .valueFolder(version: id, prefix: "", modified: version.date) }
        let folders = try versionFolders.folders(of: id)
        if folders.children[inside] != nil {
            return .valueFolder(version: id, prefix: inside, modified: version.date)
        }
        let valueId = Value.ID(inside)
        guard let size = try store.valueSize(id: valueId, at: id) else { return nil }
        return .value(valueId, version: id, size: size, modified: version.date)
    }

    /// A folder's entries, each with its node; nil when `path` is not a folder.
    func children(_ path: [UInt8]) throws -> [(name: [UInt8], node: Node)]? {
        guard let node = try node(path) else { return nil }
        let components = path.split(separator: UInt8(ascii: "/")).map { String(decoding: $0, as: UTF8.self) }
        switch node {
        case .folder:
            if components.isEmpty {
                var names: [(name: [UInt8], node: Node)] = [
                    (Array("sources".utf8), .folder(modified: mountedAt)),
                    (Array("versions".utf8), .folder(modified: mountedAt)),
                    (Array("heads".utf8), .folder(modified: mountedAt)),
                ]
                if let current {
                    names.append(
                        (
                            Array("current".utf8),
                            .link(target: "versions/\(current.rawValue)", modified: date(of: current))
                        ))
                }
                return names
            }
            switch (components[0], components.count) {
            case ("sources", 1):
                return sourceOrder.map { folder in
                    (Array(folder.utf8), .folder(modified: sources[folder]?.last?.backup.date ?? mountedAt))
                }
            case ("sources", 2):
                let backups = sources[components[1]] ?? []
                var names: [(name: [UInt8], node: Node)] = []
                for (name, backup) in backups {
                    guard let node = try sourceNode([Array(components[1].utf8), Array(name.utf8)]) else { continue }
                    names.append((Array(name.utf8), node))
                }
                if let newest = backups.last {
                    names.append((Array("latest".utf8), .link(target: newest.name, modified: newest.backup.date)))
                }
                return names
            case ("versions", 1):
                return store.history.versions.values.sorted { $0.date < $1.date }.map { version in
                    (
                        Array(version.id.rawValue.utf8),
                        .valueFolder(version: version.id, prefix: "", modified: version.date)
                    )
                }
            case ("heads", 1):
                return store.history.heads.sorted().map { id in
                    (Array(id.rawValue.utf8), .link(target: "../versions/\(id.rawValue)", modified: date(of: id)))
                }
            default: return nil
            }
        case .entry(let entry, let version):
            guard case .tree(let hash) = entry.content else { return nil }
            let entries = try reader.tree(hash, at: version).entries
            // A walk (`find`, `ls -R`) lists the subfolders next: their listings are asked for now, so a store whose
            // values are on a remote reads them together instead of one round trip each in turn.
            let subfolders = entries.lazy.compactMap { entry -> Value.ID? in
                guard case .tree(let hash) = entry.content else { return nil }
                return BackupObjectID.tree(hash)
            }
            store.prefetchValues(Array(subfolders.prefix(Self.listingsAhead)), at: version)
            return entries.map { ($0.name, .entry($0, version: version)) }
        case .valueFolder(let version, let prefix, let modified):
            let folders = try versionFolders.folders(of: version)
            return try (folders.children[prefix] ?? []).sorted().map { name in
                let full = prefix.isEmpty ? name : prefix + "/" + name
                if folders.children[full] != nil {
                    return (Array(name.utf8), .valueFolder(version: version, prefix: full, modified: modified))
                }
                let size = try store.valueSize(id: Value.ID(full), at: version) ?? 0
                return (Array(name.utf8), .value(Value.ID(full), version: version, size: size, modified: modified))
            }
        case .link, .value:
            return nil
        }
    }
}
