import Foundation
import LLVS
import LLVSBackup
#if canImport(Glibc)
import Glibc
#endif

/// Restores a source's backup from its folder listings, one folder at a time (memory holds the folders on the
/// current path), inside DEST only (`RestoreTree`): in each folder files and folders first, links last; a folder's
/// mode and time are set once everything inside it is written.
struct TreeRestore {
    let reader: BackupReader
    let version: Version.ID
    let tree: RestoreTree
    let modeMask: UInt32
    /// The paths asked for, as name bytes from the source's root; empty for all.
    let selected: [[[UInt8]]]
    private(set) var restored = 0
    private(set) var refused: [String] = []

    init(reader: BackupReader, version: Version.ID, destination: String, modeMask: UInt32, paths: [String]) throws {
        self.reader = reader
        self.version = version
        self.tree = try RestoreTree(destination: destination)
        self.modeMask = modeMask
        selected = paths.map { path in path.split(separator: "/").map { RawName.decode(String($0)) } }
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

    mutating func run(_ record: BackupSourceRecord) throws {
        guard let root = record.rootHash else { throw BackupError.damagedObject(id: record.name, reason: "its root is not a hash") }
        try folder(root, names: [], components: [])
    }

    private mutating func folder(_ hash: ContentHash, names: [[UInt8]], components: [String]) throws {
        let listing = try reader.tree(hash, at: version)
        var links: [BackupTreeEntry] = []
        for entry in listing.entries {
            let childNames = names + [entry.name]
            let child = components + [RawName.encode(entry.name)]
            let (restore, descend) = selection(childNames)
            guard restore || (descend && entry.kind == .directory) else { continue }
            do {
                switch (entry.kind, entry.content) {
                case (.directory, .tree(let subtree)):
                    try tree.makeDirectory(child)
                    try folder(subtree, names: childNames, components: child)
                    if restore {
                        try? tree.finishDirectory(child, mode: entry.mode & modeMask, modified: entry.modifiedTime)
                        restored += 1
                    }
                case (.file, _):
                    // Streamed chunk by chunk from the store to the file: a large file is never whole in memory.
                    try tree.writeFile(child, mode: entry.mode & modeMask, modified: entry.modifiedTime) { write in
                        try reader.writeContents(of: entry, at: version, into: write)
                    }
                    restored += 1
                case (.symlink, _):
                    links.append(entry)
                default:
                    refused.append("\(RestoreTree.display(child)): its entry is damaged")
                }
            } catch let refusal as RestoreTree.Refusal {
                refused.append(refusal.description)
            }
        }
        for entry in links {
            let child = components + [RawName.encode(entry.name)]
            guard case .link(let target) = entry.content else { continue }
            do {
                try tree.makeLink(child, target: RawName.encode(target), modified: entry.modifiedTime)
                restored += 1
            } catch let refusal as RestoreTree.Refusal {
                refused.append(refusal.description)
            }
        }
    }
}
