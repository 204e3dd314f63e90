import Foundation

/// The compact layout, for remotes no LLVS app reads (docs/remote-format.md, "Compact"): version files as upstream
/// writes them (small JSON, so any tool can list what a remote holds), changes files in binary with each value's
/// record as the store keeps it (`CompactChanges`): no base64, no JSON, compressed once when the value was saved.
public struct CompactRemoteCodec: RemoteCodec {
    public init() {}

    public var name: String { RemoteFormatRecord.compact }

    public func encodeVersion(_ version: Version) throws -> Data {
        try RemoteFormat.encodeVersion(version)
    }

    public func decodeVersion(_ data: Data, path: String) throws -> Version {
        try RemoteFormat.decodeVersion(data, path: path)
    }

    public func encodeChanges(
        madeInVersionIdentifiedBy id: Version.ID, in store: Store, stager: FileStager?
    ) throws -> EncodedChanges {
        try store.compactChanges(madeInVersionIdentifiedBy: id, stager: stager)
    }

    public func decodeChanges(
        _ encoded: EncodedChanges, path: String, temporaryDirectory: URL
    ) throws -> ReceivedChanges {
        try CompactChangesReader.read(encoded, path: path, temporaryDirectory: temporaryDirectory)
    }
}
