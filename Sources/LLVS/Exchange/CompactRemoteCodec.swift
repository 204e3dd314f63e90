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

    /// A changes file is read by what it holds: an upstream one (JSON, an array) is read as upstream. Two devices
    /// that settled one empty remote at the same moment with different formats may each have written some
    /// (`RemoteFormatRecord.settle`); every file is still read right.
    public func decodeChanges(
        _ encoded: EncodedChanges, path: String, temporaryDirectory: URL
    ) throws -> ReceivedChanges {
        if try RemoteFormat.holdsJSONArray(encoded) {
            return try ChangesReader.read(encoded, path: path, temporaryDirectory: temporaryDirectory)
        }
        return try CompactChangesReader.read(encoded, path: path, temporaryDirectory: temporaryDirectory)
    }
}
