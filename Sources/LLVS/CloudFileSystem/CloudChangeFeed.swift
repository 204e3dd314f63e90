import Foundation
import LLVSSupport

/// A file system that can say what changed in some folders since a point in its history, from the service's own
/// change feed (Drive changes, Graph delta, Box events, pCloud diff). An exchange that keeps the cursor then learns
/// what is new on the remote with one request when nothing is, instead of listing folders that grow forever.
///
/// The cursor is the connector's own text: besides the service's token it may carry whatever the connector needs
/// to answer later without looking anything up again (the watched folders' IDs). Callers store it and hand it back
/// unread.
public protocol CloudChangeFeed: CloudFileSystem {
    /// A cursor for "now": changes after this moment are reported by `changes(in:since:)`. Taken before a full
    /// listing, so nothing written while the listing runs is missed.
    func changeCursor(watching folders: [String]) async throws -> String
    /// The names added (created or rewritten) and removed directly inside each watched folder since `cursor`, and
    /// the cursor to ask with next time. `CloudFileSystemError.cursorExpired` when the service no longer accepts the
    /// cursor, or when a watched folder itself was removed or replaced: the caller then lists in full.
    func changes(in folders: [String], since cursor: String) async throws -> CloudChangeSet
    /// Waits until something may have changed after `cursor`, at most `timeout`; true when something may have.
    /// A service with a long poll a client can hold open (pCloud's `diff?block=1`) waits there; the others ask the
    /// feed once and return, and the caller paces the looks.
    func waitForChanges(in folders: [String], since cursor: String, timeout: Duration) async throws -> Bool
}

/// What a change feed reported for the watched folders, by folder path as the caller named it.
public struct CloudChangeSet: Sendable, Equatable {
    /// Names added (or changed) since the cursor, by watched folder.
    public var added: [String: Set<String>]
    /// Names removed since the cursor, by watched folder.
    public var removed: [String: Set<String>]
    /// The cursor to ask with next time.
    public var cursor: String

    /// A change set ending at `cursor`.
    public init(added: [String: Set<String>] = [:], removed: [String: Set<String>] = [:], cursor: String) {
        self.added = added
        self.removed = removed
        self.cursor = cursor
    }

    /// Records what one feed entry says about a name, later entries overriding earlier ones.
    public mutating func note(_ name: String, in folder: String, present: Bool) {
        if present {
            added[folder, default: []].insert(name)
            removed[folder]?.remove(name)
        } else {
            removed[folder, default: []].insert(name)
            added[folder]?.remove(name)
        }
    }
}

extension CloudChangeFeed {
    /// Services without a long poll: one look at the feed.
    public func waitForChanges(in folders: [String], since cursor: String, timeout: Duration) async throws -> Bool {
        let changes = try await self.changes(in: folders, since: cursor)
        return changes.added.values.contains { !$0.isEmpty } || changes.removed.values.contains { !$0.isEmpty }
    }
}
