import Foundation
import LLVS
import LLVSSupport

/// The value IDs of a backup. Chunks and folder listings are named by the hash of their bytes (so they are stored
/// once, whichever backup, source or store wrote them); a source's record by the hash of its name. Together they
/// live under `.llvs-backup/`, apart from any other values the store holds.
public enum BackupObjectID {
    public static let prefix = ".llvs-backup/"

    public static func chunk(_ hash: ContentHash) -> Value.ID { Value.ID(prefix + "chunk/" + hash.hex) }
    public static func tree(_ hash: ContentHash) -> Value.ID { Value.ID(prefix + "tree/" + hash.hex) }
    /// The hash a chunk's value ID names; nil for any other value.
    public static func chunkHash(in id: Value.ID) -> ContentHash? { hash(in: id, after: chunkPrefix) }
    /// The hash a listing's value ID names; nil for any other value.
    public static func listingHash(in id: Value.ID) -> ContentHash? { hash(in: id, after: treePrefix) }

    private static let chunkPrefix = prefix + "chunk/", treePrefix = prefix + "tree/"
    private static let chunkPrefixBytes = Array(chunkPrefix.utf8), treePrefixBytes = Array(treePrefix.utf8)

    /// Whether `id` names a chunk or a listing: what `chunkHash` or `listingHash` finds, told without making a string
    /// or an array (a prune asks it of every entry of every version's map).
    public static func namesObject(_ id: Value.ID) -> Bool {
        var utf8 = id.rawValue
        return utf8.withUTF8 { bytes in
            let kind =
                bytes.starts(with: chunkPrefixBytes)
                ? chunkPrefixBytes.count
                : bytes.starts(with: treePrefixBytes) ? treePrefixBytes.count : nil
            guard let kind, bytes.count - kind == 64 else { return false }
            return bytes[kind...].allSatisfy { (48...57).contains($0) || (97...102).contains($0) }
        }
    }

    private static func hash(in id: Value.ID, after kind: String) -> ContentHash? {
        guard id.rawValue.hasPrefix(kind) else { return nil }
        return ContentHash(hex: String(id.rawValue.dropFirst(kind.count)))
    }

    /// The record of a source's last complete backup.
    public static func source(_ name: String) -> Value.ID {
        Value.ID(sourcePrefix + SHA256.hexString(SHA256.digest(name)))
    }
    /// What every source record's ID starts with: the records are found by a scan for it.
    public static let sourcePrefix = prefix + "source/"
    /// The record of a backup of the source still under way (its checkpoints): what a re-run resumes from.
    public static func checkpoint(_ name: String) -> Value.ID {
        Value.ID(checkpointPrefix + SHA256.hexString(SHA256.digest(name)))
    }
    /// What every checkpoint record's ID starts with: a prune finds the backups under way by a scan for it.
    public static let checkpointPrefix = prefix + "checkpoint/"
    /// The mark of a backup `llvs forget` removed, named by the SHA-256 of the ID of the version that completed it. One
    /// value per backup, so marks made on two devices merge without conflict, and a prune on any device sees them all.
    public static func forgotten(_ version: Version.ID) -> Value.ID {
        Value.ID(forgottenPrefix + SHA256.hexString(SHA256.digest(version.rawValue)))
    }
    public static let forgottenPrefix = prefix + "forgotten/"
    /// The names of the sources, as earlier builds read them; since a merge keeps one side's list, this build finds
    /// the sources by their records and keeps the list for those builds only.
    public static let sources = Value.ID(prefix + "sources")
}

/// Metadata that marks a backup's versions: a checkpoint (a backup under way, skipped by restore and history) or
/// the version that completed it.
public enum BackupMetadata {
    public static let checkpoint = Version.MetadataKey("llvs.backup.checkpoint")
    public static let completed = Version.MetadataKey("llvs.backup.completed")
    /// The version a prune's first step commits (`llvs prune`): it removes what no kept backup needs from the current
    /// version, and waits for a backup of each source made on top of it before releasing their records.
    public static let pruneCollection = Version.MetadataKey("llvs.retention.collected")
}
