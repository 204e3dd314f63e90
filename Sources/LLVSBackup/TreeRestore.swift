import Foundation
import LLVS
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Restores a source's backup from its folder listings, one folder at a time (memory holds the folders on the
/// current path), inside DEST only (`RestoreTree`): in each folder its subfolders, then its files (in parallel),
/// then its links; a folder's mode and time are set once everything inside it is written.
public struct TreeRestore {
    /// What else a restore takes: patterns, a dry run, a progress callback.
    public struct Options: Sendable {
        /// Only entries matching one of these (or inside a folder that does) are restored: the backup's pattern
        /// language (`BackupExclusions`); empty for all.
        public var include: [String] = []
        /// Entries matching one of these are not restored, nor anything inside them.
        public var exclude: [String] = []
        /// Count what would be restored, and write nothing (DEST is not even made).
        public var dryRun = false
        /// Called with the entries and bytes restored so far, from any thread.
        public var onProgress: (@Sendable (_ entries: Int, _ bytes: Int64) -> Void)?
        public init() {}
    }

    public let reader: BackupReader
    let version: Version.ID
    let tree: RestoreTree?
    let modeMask: UInt32
    /// The paths asked for, as name bytes from the source's root; empty for all.
    let selected: [[[UInt8]]]
    let options: Options
    let includes: BackupExclusions?
    let excludes: BackupExclusions
    /// Whether patterns are given: without them no entry's path is spelled out.
    let filtering: Bool
    public private(set) var restored = 0
    /// The bytes of the files restored (or that would be, in a dry run).
    public private(set) var bytes: Int64 = 0
    public private(set) var refused: [String] = []
    /// Attributes that could not be set on entries that were restored.
    public private(set) var attributeRefusals: [RestoreTree.AttributeRefusal] = []
    /// Where this restore put the first name of each hard-link group it met: later names are linked to it.
    private var hardLinkFirsts: [[UInt8]: [String]] = [:]
    /// Files waiting to be written, from one folder or many (`flush`): written together on every core, so a tree of
    /// small folders keeps the processors as busy as one large folder does. Each holds its folder open.
    private var queue: [(parent: Int32, entry: BackupTreeEntry, components: [String])] = []
    private var queuedBytes: Int64 = 0
    /// Open folders the queue's files go into, closed by the flush.
    private var queueFolders: [Int32] = []
    /// Folders done but for files still queued: given their mode and time by the flush, inner ones first (a file
    /// made in a folder would change the time just set).
    private var unfinished: [(components: [String], entry: BackupTreeEntry)] = []
    /// A flush is due at this many files or bytes queued.
    static let queueFiles = 256
    static let queueBytes: Int64 = 64 << 20

    public init(
        reader: BackupReader, version: Version.ID, destination: String, modeMask: UInt32, paths: [String],
        options: Options = Options()
    ) throws {
        self.reader = reader
        self.version = version
        self.tree = options.dryRun ? nil : try RestoreTree(destination: destination)
        self.modeMask = modeMask
        selected = paths.map { path in path.split(separator: "/").map { RawName.decode(String($0)) } }
        self.options = options
        includes = options.include.isEmpty ? nil : BackupExclusions(patterns: options.include)
        excludes = BackupExclusions(patterns: options.exclude)
        filtering = includes != nil || !excludes.isEmpty
    }

    private func reportProgress() { options.onProgress?(restored, bytes) }

    /// Owners are given back by root only: no one else may give a file away.
    static let restoresOwners = geteuid() == 0

    private static func owner(of entry: BackupTreeEntry) -> BackupTreeEntry.Ownership? {
        restoresOwners ? entry.ownership : nil
    }

    /// Whether an entry at `components` is restored whole (it is a selected path or below one), only passed
    /// through (it leads to one), or left alone.
    private func selection(_ components: [[UInt8]]) -> (restore: Bool, descend: Bool) {
        if selected.isEmpty { return (true, true) }
        var descend = false
        for path in selected {
            if components.count >= path.count, Array(components.prefix(path.count)) == path { return (true, true) }
            if components.count < path.count, Array(path.prefix(components.count)) == components { descend = true }
        }
        return (false, descend)
    }

    public mutating func run(_ record: BackupSourceRecord) throws {
        guard let root = record.rootHash else {
            throw BackupError.damagedObject(id: record.name, reason: "its root is not a hash")
        }
        defer {
            for fd in queueFolders { close(fd) }
            queueFolders = []
        }
        try folder(root, names: [], components: [], included: includes == nil)
        if let tree { try flush(tree) }
        reportProgress()
    }

    /// `included`: a folder on the way matched an include pattern (or none was given).
    private mutating func folder(
        _ hash: ContentHash, names: [[UInt8]], components: [String], included: Bool
    ) throws {
        let listing = try reader.tree(hash, at: version)
        var files: [(entry: BackupTreeEntry, components: [String])] = []
        var links: [BackupTreeEntry] = []
        var hardLinks: [(entry: BackupTreeEntry, components: [String], first: [String])] = []
        for entry in listing.entries {
            let childNames = names + [entry.name]
            let child = components + [RawName.encode(entry.name)]
            var (restore, descend) = selection(childNames)
            guard restore || (descend && entry.kind == .directory) else { continue }
            let isFolder = entry.kind == .directory
            var matched = true
            if filtering {
                let path = childNames.reduce(into: [UInt8]()) { path, name in path += [UInt8(ascii: "/")] + name }
                if excludes.excludes(name: entry.name, path: path, isFolder: isFolder) { continue }
                matched = included || (includes?.excludes(name: entry.name, path: path, isFolder: isFolder) ?? true)
            }
            if restore, !matched {
                // Not asked for by the patterns itself: a folder is looked into for entries that are.
                guard isFolder else { continue }
                (restore, descend) = (false, true)
            }
            do {
                switch (entry.kind, entry.content) {
                case (.directory, .tree(let subtree)):
                    if restore { try tree?.makeDirectory(child) }
                    let before = restored + queue.count
                    try folder(subtree, names: childNames, components: child, included: restore && matched)
                    // A folder only passed through was made when something inside it was restored (or waits to
                    // be): it gets its mode and time as well.
                    if restore || restored + queue.count > before {
                        if queue.isEmpty { finish(child, entry) } else { unfinished.append((child, entry)) }
                        restored += 1
                    }
                case (.file, _):
                    // The first name of a hard-link group restored here is written; the others become links to it.
                    if let group = entry.hardLinkGroup {
                        if let first = hardLinkFirsts[group] {
                            hardLinks.append((entry, child, first))
                            continue
                        }
                        hardLinkFirsts[group] = child
                    }
                    files.append((entry, child))
                case (.symlink, _):
                    links.append(entry)
                case (let kind, .device(let number)) where kind.isSpecial:
                    if let tree {
                        try tree.makeSpecial(
                            child, kind: kind, device: number, mode: entry.mode & modeMask,
                            modified: entry.modifiedTime)
                        attributeRefusals += try tree.setOwner(Self.owner(of: entry), of: child)
                        attributeRefusals += try tree.setAttributes(entry.extendedAttributes, of: child)
                    }
                    restored += 1
                default:
                    refused.append("\(RestoreTree.display(child)): its entry is damaged")
                }
            } catch let refusal as RestoreTree.Refusal {
                refused.append(refusal.description)
            }
        }
        guard let tree else {
            restored += files.count + hardLinks.count + links.count
            bytes += files.reduce(0) { $0 + $1.entry.size }
            return
        }
        try enqueue(files, in: components, tree: tree)
        // A hard link's first name may be waiting in the queue.
        if !hardLinks.isEmpty { try flush(tree) }
        var unlinked: [(entry: BackupTreeEntry, components: [String])] = []
        for (entry, child, first) in hardLinks {
            do {
                if try tree.makeHardLink(child, to: first) { restored += 1 } else { unlinked.append((entry, child)) }
            } catch let refusal as RestoreTree.Refusal {
                refused.append(refusal.description)
            }
        }
        // A name whose first could not be written (refused, say) is written on its own: its contents are its own.
        try enqueue(unlinked, in: components, tree: tree)
        for entry in links {
            let child = components + [RawName.encode(entry.name)]
            guard case .link(let target) = entry.content else { continue }
            do {
                try tree.makeLink(child, target: RawName.encode(target), modified: entry.modifiedTime)
                attributeRefusals += try tree.setOwner(Self.owner(of: entry), of: child)
                attributeRefusals += try tree.setAttributes(entry.extendedAttributes, of: child)
                restored += 1
            } catch let refusal as RestoreTree.Refusal {
                refused.append(refusal.description)
            }
        }
    }

    /// Gives a folder its mode, time, attributes and owner, once nothing more is written in it.
    private mutating func finish(_ components: [String], _ entry: BackupTreeEntry) {
        attributeRefusals +=
            (try? tree?.finishDirectory(
                components, mode: entry.mode & modeMask, modified: entry.modifiedTime,
                attributes: entry.extendedAttributes, owner: Self.owner(of: entry))) ?? []
    }

    /// Queues a folder's files, holding the folder open for them, and writes the queue when it is full.
    private mutating func enqueue(
        _ files: [(entry: BackupTreeEntry, components: [String])], in components: [String], tree: RestoreTree
    ) throws {
        guard !files.isEmpty else { return }
        let parent: Int32
        do { parent = dup(try tree.directory(components)) } catch let refusal as RestoreTree.Refusal {
            refused += Array(repeating: refusal.description, count: files.count)
            return
        }
        guard parent >= 0 else {
            let reason = String(cString: strerror(errno))
            refused += files.map { "\(RestoreTree.display($0.components)): \(reason)" }
            return
        }
        queueFolders.append(parent)
        for (entry, child) in files {
            queue.append((parent, entry, child))
            queuedBytes += entry.size
        }
        if queue.count >= Self.queueFiles || queuedBytes >= Self.queueBytes { try flush(tree) }
    }

    /// Writes the queued files on every core at once: a file costs a few system calls (create, write, mode, time) and
    /// its reads from the store, and one thread would leave the other cores idle. Each is streamed chunk by chunk
    /// from the store to the file, never whole in memory. Refusals are kept in the queue's order; any other failure
    /// stops the files not yet started and is thrown (the first in the queue's order). Then the folders that waited
    /// for them are finished.
    private mutating func flush(_ tree: RestoreTree) throws {
        let files = queue
        defer {
            for fd in queueFolders { close(fd) }
            queueFolders = []
            queue = []
            queuedBytes = 0
        }
        let refusals = Mutex([String?](repeating: nil, count: files.count))
        let unsetAttributes = Mutex<[RestoreTree.AttributeRefusal]>([])
        let failure = Mutex<(index: Int, error: any Error)?>(nil)
        let (store, version, modeMask) = (reader.store, self.version, self.modeMask)
        let written = Mutex<(entries: Int, bytes: Int64)>((restored, bytes))
        let onProgress = options.onProgress
        DispatchQueue.concurrentPerform(iterations: files.count) { index in
            guard failure.withLock({ $0 == nil }) else { return }
            let (parent, entry, child) = files[index]
            do {
                let unset = try RestoreTree.writeFile(
                    child, in: parent, mode: entry.mode & modeMask, modified: entry.modifiedTime,
                    attributes: entry.extendedAttributes, owner: Self.owner(of: entry)
                ) { write in
                    try BackupReader.writeContents(of: entry, at: version, in: store, into: write)
                }
                if !unset.isEmpty { unsetAttributes.withLock { $0 += unset } }
                if let onProgress {
                    let (entries, total) = written.withLock { written in
                        written.entries += 1
                        written.bytes += entry.size
                        return written
                    }
                    onProgress(entries, total)
                }
            } catch let refusal as RestoreTree.Refusal {
                refusals.withLock { $0[index] = refusal.description }
            } catch {
                failure.withLock { earliest in
                    if earliest.map({ index < $0.index }) ?? true { earliest = (index, error) }
                }
            }
        }
        if let (_, error) = failure.withLock({ $0 }) { throw error }
        let folderRefusals = refusals.withLock { $0 }.compactMap { $0 }
        refused += folderRefusals
        restored += files.count - folderRefusals.count
        bytes += zip(files, refusals.withLock { $0 }).reduce(0) { $0 + ($1.1 == nil ? $1.0.entry.size : 0) }
        attributeRefusals += unsetAttributes.withLock { $0 }.sorted { $0.path < $1.path }
        let waiting = unfinished
        unfinished = []
        for (components, entry) in waiting { finish(components, entry) }
    }
}
