import Foundation

/// Why a backup or restore could not go on, for a caller to switch on.
public enum BackupError: Error, Equatable, CustomStringConvertible {
    /// A folder could not be listed, or a file opened.
    case unreadable(path: String, reason: String)
    /// A read from an open file failed.
    case readFailed(errno: Int32)
    /// A stored folder listing (or source record) is not what this build writes: the store is damaged, or was
    /// written by a later build.
    case damagedObject(id: String, reason: String)
    /// A listing names a chunk or folder that the version does not hold.
    case missingObject(id: String)
    /// The version holds no backup of that source.
    case unknownSource(String, known: [String])
    /// Several sources are backed up and none was named.
    case sourceNeeded(known: [String])
    /// A restore's destination cannot be opened or written.
    case unwritable(path: String, reason: String)

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
        case .readFailed(let code): "a read failed: \(String(cString: strerror(code)))"
        case .damagedObject(let id, let reason): "the backup object \(id) is damaged: \(reason)"
        case .missingObject(let id): "the backup object \(id) is missing from the store"
        case .unknownSource(let name, let known):
            "no backup of \(name) in this version"
                + (known.isEmpty ? "" : " (it backs up: \(known.joined(separator: ", ")))")
        case .sourceNeeded(let known):
            "this store backs up several sources; name one with --source: \(known.joined(separator: ", "))"
        case .unwritable(let path, let reason): "cannot write into \(path): \(reason)"
        }
    }
}
