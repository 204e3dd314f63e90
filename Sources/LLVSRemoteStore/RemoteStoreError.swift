import Foundation

/// What can go wrong reading a store's values where they lie on a remote.
public enum RemoteStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The bytes of a value, read from a changes file, are not what its index describes.
    case damagedRange(path: String, offset: Int64, reason: String)
    /// The remote holds no versions.
    case emptyRemote(path: String)
    /// A storage holding a remote's values is read-only: a prune has nothing to release in it.
    case readOnly

    public var description: String {
        switch self {
        case .damagedRange(let path, let offset, let reason):
            "\(path) on the remote is damaged at offset \(offset): \(reason)"
        case .emptyRemote(let path):
            "the remote holds no versions (\(path) is empty or missing)"
        case .readOnly:
            "a store read from a remote is read-only"
        }
    }
}
