import Foundation
import LLVS

/// The cursor every HTTP connector's change feed hands out: the service's own token plus the IDs of the watched
/// folders, so a later `changes(in:since:)` filters the feed by parent ID without looking the folders up again
/// (each `llvs sync` is a new process with an empty ID cache). Opaque JSON text to the caller.
public struct FeedCursor: Codable, Sendable, Equatable {
    /// The service's position: Drive's page token, Graph's delta link, Box's stream position, pCloud's diffid.
    public var token: String
    /// Watched folder path → the folder's ID, for the watched folders that existed when last asked.
    public var folders: [String: String]

    public init(token: String, folders: [String: String] = [:]) {
        self.token = token
        self.folders = folders
    }

    /// The cursor as the text callers store.
    public var text: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return String(decoding: (try? encoder.encode(self)) ?? Data(), as: UTF8.self)
    }

    /// Reads a stored cursor; one this connector cannot read (another connector's, a damaged file) is expired, so
    /// the caller lists in full.
    public init(text: String, service: String) throws {
        guard let cursor = try? JSONDecoder().decode(FeedCursor.self, from: Data(text.utf8)) else {
            throw CloudFileSystemError.cursorExpired("the saved position is not one \(service)'s connector wrote")
        }
        self = cursor
    }

    /// A new cursor at the service's `token`, with the IDs of the watched folders that exist, as the text to store.
    public static func start(
        at token: String, watching folders: [String], id: (String) async throws -> String?
    ) async throws -> String {
        var cursor = FeedCursor(token: token)
        try await cursor.resolve(folders, id: id)
        return cursor.text
    }

    /// A stored cursor read back, with the IDs of the watched folders made since it was taken looked up.
    public static func resume(
        _ text: String, service: String, watching folders: [String],
        id: (String) async throws -> String?
    ) async throws -> FeedCursor {
        var cursor = try FeedCursor(text: text, service: service)
        try await cursor.resolve(folders, id: id)
        return cursor
    }

    /// Looks up the watched folders whose IDs are not known yet (made since the cursor was taken, or missing then);
    /// `id` answers nil for a folder that is still missing.
    public mutating func resolve(_ watched: [String], id: (String) async throws -> String?) async throws {
        for path in watched where folders[path] == nil {
            if let found = try await id(path) { folders[path] = found }
        }
    }
}

extension FeedCursor {
    /// `start(at:watching:id:)` for a service whose folders are found by ID through `paths`: a watched folder's ID
    /// comes from the cache or is looked up, never made. `components` turns a watched path into the cache's
    /// components (encoded as the service stores names).
    public static func start<Directory>(
        at token: String, watching folders: [String], in paths: IDPathCache<Directory>,
        components: (String) throws -> [String] = CloudPath.components
    ) async throws -> String {
        try await start(at: token, watching: folders) { try await paths.folderID(try components($0), creating: false) }
    }

    /// `resume(_:service:watching:id:)` with the watched folders' IDs from `paths`.
    public static func resume<Directory>(
        _ text: String, service: String, watching folders: [String], in paths: IDPathCache<Directory>,
        components: (String) throws -> [String] = CloudPath.components
    ) async throws -> FeedCursor {
        try await resume(text, service: service, watching: folders) {
            try await paths.folderID(try components($0), creating: false)
        }
    }
}

/// One entry of a service's change feed, reduced to what filtering needs: which item, its name and parents now, and
/// whether it is there (false for trashed or deleted). `item` is the connector's own record, for its ID cache.
public struct FeedEntry<Item: Sendable>: Sendable {
    public var id: String
    public var name: String?
    public var parentIDs: [String]
    public var present: Bool
    public var item: Item?

    public init(id: String, name: String?, parentIDs: [String], present: Bool, item: Item? = nil) {
        self.id = id
        self.name = name
        self.parentIDs = parentIDs
        self.present = present
        self.item = item
    }
}

extension FeedCursor {
    /// The changes directly inside the watched folders, in feed order (a later entry for a name overrides an earlier
    /// one). A watched folder that was removed makes the cursor meaningless (its files went with it, and the feed
    /// may not list them one by one): `cursorExpired`, so the caller lists in full. `found` is told each entry
    /// inside a watched folder, with that folder's path, so the connector can remember or forget the item's ID.
    public func changes<Item>(
        _ entries: [FeedEntry<Item>], next: FeedCursor, service: String,
        found: (String, FeedEntry<Item>) -> Void = { _, _ in }
    ) throws -> CloudChangeSet {
        let pathByID = Dictionary(folders.map { ($0.value, $0.key) }, uniquingKeysWith: { first, _ in first })
        var set = CloudChangeSet(cursor: next.text)
        for entry in entries {
            if let folder = pathByID[entry.id], !entry.present {
                throw CloudFileSystemError.cursorExpired("the remote folder \(folder) was removed on \(service)")
            }
            guard let name = entry.name else { continue }
            for parent in entry.parentIDs {
                guard let folder = pathByID[parent] else { continue }
                set.note(name, in: folder, present: entry.present)
                found(folder, entry)
            }
        }
        return set
    }
}

extension IDPathCache {
    /// The changes a feed reported, for a connector on this cache: each item found in a watched folder is remembered
    /// (its next download needs no lookup) or forgotten when it went, and the watched folders themselves are
    /// remembered, as they existed at the cursor and are still there (their removal would have expired it), so
    /// paths below them resolve, and uploads into them go, without looking them up again. `components` turns a
    /// watched folder's path into the cache's components (a connector that encodes names encodes them here).
    public func changes(
        _ entries: [FeedEntry<Directory.Item>], cursor: FeedCursor, next: FeedCursor, service: String,
        components: (String) throws -> [String]
    ) throws -> CloudChangeSet {
        let changes = try cursor.changes(entries, next: next, service: service) { folder, entry in
            guard let item = entry.item, let path = try? components(folder) + [item.name] else { return }
            if entry.present { remember(path, item) } else { forget(path) }
        }
        for (path, id) in cursor.folders { rememberFolder(try components(path), id: id) }
        return changes
    }
}
