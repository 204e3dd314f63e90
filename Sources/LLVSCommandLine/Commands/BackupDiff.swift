import Foundation
import LLVS
import LLVSBackup

/// The differences between two backups of one source, by path: added, removed, modified (contents, kind, mode or
/// link target; a touch alone is no change). Folders whose listings are the same are passed over whole, so the work
/// is that of what changed.
struct BackupDiff {
    struct Change: Encodable, Equatable {
        var change: String
        var path: String
        var size: Int64?
        var sizeBefore: Int64?
    }

    let reader: BackupReader

    func changes(
        from old: (record: BackupSourceRecord, version: Version.ID),
        to new: (record: BackupSourceRecord, version: Version.ID)
    ) throws -> [Change] {
        var result: [Change] = []
        guard let oldRoot = old.record.rootHash, let newRoot = new.record.rootHash else { return result }
        try compare(oldRoot, newRoot, at: "", old.version, new.version, into: &result)
        return result
    }

    private func compare(
        _ a: ContentHash, _ b: ContentHash, at path: String, _ va: Version.ID, _ vb: Version.ID,
        into result: inout [Change]
    ) throws {
        guard a != b else { return }
        let before = try reader.tree(a, at: va).entries, after = try reader.tree(b, at: vb).entries
        var i = 0, j = 0
        while i < before.count || j < after.count {
            switch (i < before.count ? before[i] : nil, j < after.count ? after[j] : nil) {
            case (let x?, nil):
                try all(x, at: path, va, "removed", into: &result)
                i += 1
            case (nil, let y?):
                try all(y, at: path, vb, "added", into: &result)
                j += 1
            case (let x?, let y?) where x.name.lexicographicallyPrecedes(y.name):
                try all(x, at: path, va, "removed", into: &result)
                i += 1
            case (let x?, let y?) where y.name.lexicographicallyPrecedes(x.name):
                try all(y, at: path, vb, "added", into: &result)
                j += 1
            case (let x?, let y?):
                let child = path + "/" + RawName.encode(y.name)
                if case .tree(let ha) = x.content, case .tree(let hb) = y.content {
                    if x.mode != y.mode { result.append(Change(change: "modified", path: child + "/")) }
                    try compare(ha, hb, at: child, va, vb, into: &result)
                } else if x.content != y.content || x.kind != y.kind || x.mode != y.mode {
                    result.append(Change(change: "modified", path: child, size: y.size, sizeBefore: x.size))
                }
                i += 1
                j += 1
            case (nil, nil):
                return
            }
        }
    }

    /// An entry and, for a folder, everything under it, as added or removed.
    private func all(
        _ entry: BackupTreeEntry, at path: String, _ version: Version.ID, _ change: String, into result: inout [Change]
    ) throws {
        let child = path + "/" + RawName.encode(entry.name)
        guard case .tree(let hash) = entry.content else {
            result.append(Change(change: change, path: child, size: entry.size))
            return
        }
        result.append(Change(change: change, path: child + "/"))
        for inner in try reader.tree(hash, at: version).entries {
            try all(inner, at: child, version, change, into: &result)
        }
    }
}
