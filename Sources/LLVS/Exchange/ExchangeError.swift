import LLVSSupport
/// What can go wrong moving versions, beyond the store's own errors.
public enum ExchangeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A remote file could not be decoded; `path` names it.
    case malformedFile(path: String, reason: String)
    /// A version file holds a different version than its name says.
    case mismatchedVersion(file: Version.ID, contains: Version.ID)
    /// A version was not added because its predecessor failed in the same retrieve.
    case predecessorFailed(Version.ID)
    /// An identifier that cannot be used as a remote file name (empty, hidden, or holding `/`).
    case unsafeIdentifier(String)
    /// The remote has no such version.
    case missingOnRemote(Version.ID)
    /// Some versions could not be moved; what did move is kept, and running the exchange again completes it.
    case incomplete(failures: Int, first: String)
    /// Changes a file system staged for its own upload (`EncodedChanges.staged`, perhaps sealed) were given to
    /// something that reads them or sends them elsewhere.
    case stagedChangesNotReadable(path: String)

    public var description: String {
        switch self {
        case .malformedFile(let path, let reason): "The remote file \(path) is malformed: \(reason)."
        case .mismatchedVersion(let file, let contains):
            "The remote file for version \(file) holds version \(contains)."
        case .predecessorFailed(let id): "Its predecessor \(id) could not be retrieved."
        case .unsafeIdentifier(let id): "The identifier \"\(id)\" cannot be used as a remote file name."
        case .missingOnRemote(let id): "The remote has no version \(id)."
        case .incomplete(let failures, let first):
            "\(failures) version(s) could not be moved (the first: \(first)); run the exchange again once the cause is fixed."
        case .stagedChangesNotReadable(let path):
            "The changes staged at \(path) are for one remote's upload only and cannot be read here."
        }
    }
}
