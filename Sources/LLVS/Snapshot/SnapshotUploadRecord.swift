import Foundation
import LLVSSupport

/// A snapshot upload under way, recorded in the store (`snapshot-uploads/<ID>.json`) from before its first chunk
/// until its manifest is up. From the remote, a folder of chunks that no manifest names looks the same whether its
/// upload died or another device is still sending it, so such folders wait an hour (`orphanAge`); a folder whose
/// record says a process of this machine sent it, and that process has ended, is abandoned for certain and goes with
/// the next exchange with that remote.
struct SnapshotUploadRecord: Codable {
    var snapshotId: String
    /// The folder on the remote, as the exchange names it.
    var folder: String
    /// The remote's identity (the exchange's cursor file's), so another remote's uploads are left alone.
    var remote: String
    /// `<pid>@<machine>` of the process sending it.
    var writer: String

    static func folder(of store: Store) -> String { store.rootURL.path + "/snapshot-uploads" }

    func path(in store: Store) -> String { Self.folder(of: store) + "/" + snapshotId + ".json" }

    func save(in store: Store) throws {
        try POSIX.makeDirectories(Self.folder(of: store))
        try POSIX.writeAtomically(try JSONEncoder().encode(self), to: path(in: store))
    }

    func remove(from store: Store) { POSIX.remove(path(in: store)) }

    /// Every record in the store; unreadable ones are skipped (and left for a person to look at).
    static func all(in store: Store) -> [SnapshotUploadRecord] {
        guard let names = try? POSIX.listNames(folder(of: store)) else { return [] }
        return names.filter { $0.hasSuffix(".json") }.compactMap { name in
            (try? POSIX.readFile(folder(of: store) + "/" + name)).flatMap {
                try? JSONDecoder().decode(Self.self, from: $0)
            }
        }
    }

    /// Whether the process that sent it was on this machine and has ended.
    var isAbandoned: Bool { TemporaryWriter(writer[...])?.isGoneFromThisMachine ?? false }
}
