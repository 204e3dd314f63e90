import Foundation
import LLVSSupport

/// Where a store keeps, for one remote, the change feed position of its last sync and the versions the remote held
/// then: `<store>/remote-cursors/<hash of the remote's identity>.json`. The file is written only after the sync
/// stored what it retrieved and sent what it could, so a crash before that makes the next sync ask the feed again
/// from the older position (and find the versions already there), never skip anything.
public struct RemoteCursorFile: Sendable {
    /// The folder in the store that holds one cursor file per remote.
    public static let folderName = "remote-cursors"

    /// Says which remote the file belongs to (its URL and folder): a remote re-pointed elsewhere under the same name
    /// never reuses another's position.
    public let identity: String
    /// This remote's cursor file.
    public let path: String

    struct Contents: Codable, Equatable {
        var remote: String
        var cursor: String
        var versions: [String]
        /// Absent in files of earlier builds.
        var misses: [String: Int]?
    }

    /// The state of a stored remote, as saved by the last completed sync.
    public struct State: Sendable, Equatable {
        /// The feed position, as the file system gave it.
        public var cursor: String
        /// The versions the remote held at that position.
        public var versionIds: Set<Version.ID>
        /// How many syncs in a row found a listed version's file missing; dropped from `versionIds` after a few.
        public var misses: [Version.ID: Int]

        public init(cursor: String, versionIds: Set<Version.ID>, misses: [Version.ID: Int] = [:]) {
            self.cursor = cursor
            self.versionIds = versionIds
            self.misses = misses
        }
    }

    /// The cursor file of the remote `identity` (its URL and base path, say) in `store`.
    public init(store: Store, identity: String) {
        self.identity = identity
        let name = String(SHA256.hex(Data(identity.utf8)).prefix(32))
        path = store.rootURL.path + "/" + Self.folderName + "/" + name + ".json"
    }

    /// The saved state; nil when there is none, or when the file is unreadable or names another remote (a full listing
    /// then rebuilds it, so a damaged file costs one listing, nothing more).
    public func load() -> State? {
        guard POSIX.fileExists(path), let data = try? POSIX.readFile(path),
            let contents = try? JSONDecoder().decode(Contents.self, from: data), contents.remote == identity
        else { return nil }
        let misses = Dictionary((contents.misses ?? [:]).map { (Version.ID($0.key), $0.value) }, uniquingKeysWith: max)
        return State(cursor: contents.cursor, versionIds: Set(contents.versions.map(Version.ID.init)), misses: misses)
    }

    /// Writes the state atomically, replacing the last.
    public func save(_ state: State) throws {
        try POSIX.makeDirectories((path as NSString).deletingLastPathComponent)
        let misses =
            state.misses.isEmpty
            ? nil : Dictionary(uniqueKeysWithValues: state.misses.map { ($0.key.rawValue, $0.value) })
        let contents = Contents(
            remote: identity, cursor: state.cursor, versions: state.versionIds.map(\.rawValue).sorted(), misses: misses)
        try POSIX.writeAtomically(try JSONEncoder().encode(contents), to: path)
    }

    /// Forgets the position: the next sync lists the remote in full.
    public func remove() {
        try? FileManager.default.removeItem(atPath: path)
    }
}
