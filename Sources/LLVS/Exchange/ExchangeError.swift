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
    /// The remote's format record (`RemoteFormatRecord`) names a format, or a version of one, this build does not
    /// know: a newer llvs wrote it. Nothing was read or written.
    case unsupportedRemoteFormat(path: String, format: String, version: Int)
    /// The remote holds one format and another was asked for.
    case remoteFormatMismatch(path: String, holds: String, asked: String)
    /// A version's changes hold a value whose bytes a prune released, and the remote's format (upstream, as LLVS apps
    /// read it) has no way to say so.
    case releasedValue(version: Version.ID, value: Value.ID)

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
        case .unsupportedRemoteFormat(let path, let format, let version):
            "The remote is in the \(format) format, version \(version) (\(path)), which this build of llvs does not read: a newer llvs wrote it. Upgrade llvs to use this remote; nothing was read or written."
        case .releasedValue(let version, let value):
            "Version \(version) holds value \(value), whose bytes a prune released; a remote in the upstream format cannot carry it (a compact remote can)."
        case .remoteFormatMismatch(let path, let holds, let asked):
            "The remote already holds the \(holds) format (\(path)); it cannot be used as \(asked). Leave out the format, or use another folder."
        }
    }
}
