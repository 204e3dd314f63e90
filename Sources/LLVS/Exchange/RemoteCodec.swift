import Foundation

/// How a remote's version and changes files are written and read. An exchange decides what moves (which versions,
/// in which order, many at once); the codec alone decides the bytes, so the upstream layout that LLVS apps read and
/// a compact one for remotes no app reads are two implementations of this, and the exchange's logic is the same
/// over either.
///
/// ```swift
/// let exchange = CloudFileSystemExchange(store: store, fileSystem: remote, codec: UpstreamRemoteCodec())
/// ```
public protocol RemoteCodec: Sendable {
    /// The format's name, as a remote records it and `llvs remote add --format` takes it.
    var name: String { get }
    /// A version file's bytes.
    func encodeVersion(_ version: Version) throws -> Data
    /// A version from a version file's bytes.
    /// - Throws: `ExchangeError.malformedFile(path:reason:)` naming `path` when they are not a version.
    func decodeVersion(_ data: Data, path: String) throws -> Version
    /// The changes a version made, encoded for sending: in memory when small, else in a file written through
    /// `stager` (the file system's, so an encrypted remote's file is sealed as it is written) or a plain one.
    func encodeChanges(
        madeInVersionIdentifiedBy id: Version.ID, in store: Store, stager: FileStager?
    ) throws -> EncodedChanges
    /// A received changes file, read as a stream: large values go to files in `temporaryDirectory`, so receiving a
    /// version costs bounded memory whatever it holds.
    /// - Throws: `ExchangeError.malformedFile(path:reason:)` naming `path` when the bytes are not changes.
    func decodeChanges(_ encoded: EncodedChanges, path: String, temporaryDirectory: URL) throws -> ReceivedChanges
}

/// The upstream LLVS layout (docs/remote-format.md): `{"version": Version}` and `[Value.Change]` as JSON, value
/// data in base64. What every LLVS app reads and writes.
public struct UpstreamRemoteCodec: RemoteCodec {
    public init() {}

    public var name: String { "upstream" }

    public func encodeVersion(_ version: Version) throws -> Data {
        try RemoteFormat.encodeVersion(version)
    }

    public func decodeVersion(_ data: Data, path: String) throws -> Version {
        try RemoteFormat.decodeVersion(data, path: path)
    }

    public func encodeChanges(
        madeInVersionIdentifiedBy id: Version.ID, in store: Store, stager: FileStager?
    ) throws -> EncodedChanges {
        try store.encodedChanges(madeInVersionIdentifiedBy: id, stager: stager)
    }

    /// A compact changes file (its magic first) is read as compact, as `CompactRemoteCodec` reads an upstream one.
    public func decodeChanges(
        _ encoded: EncodedChanges, path: String, temporaryDirectory: URL
    ) throws -> ReceivedChanges {
        if try encoded.prefix(CompactChanges.magic.count) == CompactChanges.magic {
            return try CompactChangesReader.read(encoded, path: path, temporaryDirectory: temporaryDirectory)
        }
        return try ChangesReader.read(encoded, path: path, temporaryDirectory: temporaryDirectory)
    }
}
