import Foundation
import LLVSSupport

/// Where a store keeps the format of a remote it has settled (`RemoteFormatRecord`): `<store>/remote-formats/<hash of
/// the remote's identity>`, holding the format's name. A remote's format never changes, so a store that has read the
/// record once does not read it again: a sync that follows a change feed costs what it did before the record.
public struct RemoteFormatFile: Sendable {
    public static let folderName = "remote-formats"
    public let path: String

    /// The file of the remote `identity` (its URL and base path, say) in `store`.
    public init(store: Store, identity: String) {
        let name = String(SHA256.hex(Data(identity.utf8)).prefix(32))
        path = store.rootURL.path + "/" + Self.folderName + "/" + name
    }

    /// The codec of the kept format; nil when none is kept (or the file names a format this build does not know,
    /// which a fresh look at the remote then settles).
    public func load() -> (any RemoteCodec)? {
        guard POSIX.fileExists(path), let data = try? POSIX.readFile(path) else { return nil }
        return RemoteFormatRecord.codec(named: String(decoding: data, as: UTF8.self))
    }

    public func save(_ codec: any RemoteCodec) throws {
        try POSIX.makeDirectories((path as NSString).deletingLastPathComponent)
        try POSIX.writeAtomically(Data(codec.name.utf8), to: path)
    }
}
