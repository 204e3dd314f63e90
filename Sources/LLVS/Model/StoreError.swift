import LLVSSupport
/// Everything that can go wrong in the store, as cases a caller can switch on.
/// Each names what was wrong and where, so a message can say what to do next. A failed system call, or a file
/// shorter than its reader was promised, is a `FileError` (LLVSSupport), whoever made the call.
public enum StoreError: Error, Equatable, Sendable, CustomStringConvertible {
    /// No store at this path (run `llvs init`).
    case notAStore(path: String)
    /// A store exists at this path already.
    case alreadyAStore(path: String)
    /// The store's descriptor names a storage kind this build cannot open.
    case unsupportedStorage(kind: String, path: String)
    /// A file of the store could not be decoded; `path` names it.
    case corruptFile(path: String, reason: String)
    /// The database at `path` answered with an error (SQLite result `code`).
    case database(path: String, code: Int32, message: String)
    case versionNotFound(Version.ID)
    case versionAlreadyExists(Version.ID)
    /// A version names a predecessor the store does not have.
    case missingPredecessor(Version.ID, of: Version.ID)
    /// Changes received for a version do not fit it (wrong size, a reference to nothing, an update of an absent value).
    case invalidChanges(Version.ID, reason: String)
    /// An arbiter left conflicts unresolved.
    case unresolvedConflicts(valueIds: [Value.ID])
    /// A snapshot can only be restored into a store without versions.
    case storeNotEmpty(path: String)
    /// This storage kind cannot make or restore snapshots.
    case snapshotsUnsupported(storage: String)
    /// A zip-v1 snapshot (what LLVS apps restore) holds every value's bytes, and a prune released some of these
    /// versions' (`count` records, one in `version`): only llvs-bundles can say so.
    case snapshotNeedsReleasedRecords(version: Version.ID, count: Int)
    /// A local file being stored changed while it was read (its size, times or checksum moved): nothing was saved,
    /// so no version holds a record that is not the file's bytes.
    case sourceChanged(path: String)
    /// A value larger than this storage keeps in one record (SQLite's limit on a blob); nothing was saved.
    case valueTooLarge(bytes: Int64, limit: Int64, storage: String)
    /// A prune released the value's bytes (no version kept needed them); the value keeps its place in the maps.
    case valueReleased(Value.ID, storedIn: Version.ID)
    /// The storage cannot give back the space of single records (an import's staging archive).
    case releaseUnsupported(storage: String)

    public var description: String {
        switch self {
        case .notAStore(let path): "There is no LLVS store at \(path); create one with `llvs init`."
        case .alreadyAStore(let path): "There is already an LLVS store at \(path)."
        case .unsupportedStorage(let kind, let path):
            "The store at \(path) uses \(kind) storage, which this build cannot open."
        case .corruptFile(let path, let reason): "The file \(path) is corrupt: \(reason)."
        case .database(let path, let code, let message):
            "The database \(path) failed (SQLite code \(code)): \(message)."
        case .versionNotFound(let id): "The store has no version \(id)."
        case .versionAlreadyExists(let id): "The store already has a version \(id)."
        case .missingPredecessor(let predecessor, let version):
            "Version \(version) needs predecessor \(predecessor), which the store does not have."
        case .invalidChanges(let id, let reason): "The changes of version \(id) are invalid: \(reason)."
        case .unresolvedConflicts(let ids):
            "The merge arbiter left conflicts unresolved for: \(ids.map(\.rawValue).sorted().joined(separator: ", "))."
        case .storeNotEmpty(let path):
            "The store at \(path) already has versions; a snapshot can only start an empty store."
        case .snapshotsUnsupported(let kind): "The \(kind) storage cannot make or restore snapshots."
        case .snapshotNeedsReleasedRecords(let version, let count):
            "A prune released the bytes of \(count) values of these versions (one stored in version \(version)), and a zip-v1 snapshot must hold every value's bytes: write llvs-bundles-v1 (--format llvs-bundles-v1), which says which were released."
        case .sourceChanged(let path): "The file \(path) changed while it was being stored; nothing was saved."
        case .valueReleased(let id, let version):
            "The bytes of value \(id) (stored in version \(version)) were released by a prune: no version kept needed them."
        case .releaseUnsupported(let storage): "The \(storage) storage cannot release records."
        case .valueTooLarge(let bytes, let limit, let storage):
            "A value of \(bytes) bytes is more than \(storage) storage keeps in one record (at most \(limit) bytes); nothing was saved. "
                + "File storage (`llvs init --storage file`) keeps values of any size."
        }
    }
}
