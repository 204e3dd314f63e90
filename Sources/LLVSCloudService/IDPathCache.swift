import Foundation
import LLVS
import Synchronization

/// An item of a service that names things by ID (Drive, OneDrive, Box, pCloud).
public protocol IdentifiedItem: Sendable {
    var id: String { get }
    var name: String { get }
    var isFolder: Bool { get }
}

/// What a connector supplies so that `IDPathCache` can turn paths into IDs: "find the children of this name in
/// folder ID" and "create a folder in folder ID". Everything else (caching, single-flight creation, looking again
/// after creating, choosing among duplicates, forgetting on 404) is the cache's.
public protocol IDDirectory: Sendable {
    associatedtype Item: IdentifiedItem
    /// The ID of the file system's root folder.
    var rootID: String { get }
    /// The items named `name` in folder `folderID` (several only where the service allows duplicate names).
    func items(named name: String, in folderID: String, path: String) async throws -> [Item]
    /// Creates folder `name` in `folderID` and returns it; nil when the answer does not say which item it made
    /// (the cache then looks it up).
    func createFolder(named name: String, in folderID: String, path: String) async throws -> Item?
    /// The one of several same-named items every reader picks, so a path never resolves differently from one call
    /// to the next. By default the lowest ID.
    func preferred(_ items: [Item]) -> Item?
    /// Whether one folder can hold several items of one name (Drive). The cache then looks again after creating
    /// a folder and takes the preferred one, so two clients racing to create it converge on one.
    var allowsDuplicateNames: Bool { get }
    /// Every item of a folder, where a name can only be found by listing its whole folder (Box, pCloud): the cache
    /// then remembers the folder from one listing, so looking up N files of one folder costs one listing, not N
    /// (a full pull of 10,000 versions went from quadratic to linear). Nil, the default, where finding one name is
    /// cheap (Drive's query by name).
    func allItems(in folderID: String, path: String) async throws -> [Item]?
}

extension IDDirectory {
    public func preferred(_ items: [Item]) -> Item? { items.min { $0.id < $1.id } }
    public var allowsDuplicateNames: Bool { false }
    public func allItems(in folderID: String, path: String) async throws -> [Item]? { nil }
}

/// Paths to IDs, as rclone's dircache: resolved one component at a time, folder IDs cached and reused for
/// everything below them, file IDs remembered from listings so a later download is one request, each missing
/// folder created once however many uploads want it at the same moment, and an ID the service no longer knows
/// forgotten so the path is resolved again. With `caseInsensitive`, `A/b` and `a/B` share one entry, as they name
/// one item on the service.
public final class IDPathCache<Directory: IDDirectory>: Sendable {
    /// How the service finds and makes items in a folder by ID.
    public let directory: Directory
    private let keys: PathKeys
    /// Whether paths are compared without regard to case.
    public var caseInsensitive: Bool { keys.caseInsensitive }

    /// What the cache knows of a path: its ID, and whether it is a folder.
    public struct Entry: Sendable, Equatable {
        public var id: String
        public var isFolder: Bool
    }

    private let entries = Mutex<[String: Entry]>([:])
    /// Folder creations in flight by key.
    private let creations = SingleFlight<String>()
    /// Whole-folder listings in flight by folder ID, so concurrent lookups in one folder share one listing.
    private let listings = SingleFlight<[Directory.Item]?>()

    /// A cache that starts empty (the root's ID comes from the directory).
    public init(_ directory: Directory, caseInsensitive: Bool = false) {
        self.directory = directory
        keys = PathKeys(caseInsensitive: caseInsensitive)
    }

    /// The cache key of a path.
    public func key(_ components: some Collection<String>) -> String { keys.key(components) }

    /// What the cache holds for a path, without a request; nil when it does not know it.
    public func cached(_ components: some Collection<String>) -> Entry? {
        let key = key(components)
        return entries.withLock { $0[key] }
    }

    /// Records an item found or made at a path, so the next lookup costs no request.
    public func remember(_ components: some Collection<String>, _ item: Directory.Item) {
        let key = key(components)
        entries.withLock { $0[key] = Entry(id: item.id, isFolder: item.isFolder) }
    }

    /// Remembers a folder's ID learned elsewhere (a change feed's cursor), so paths below it resolve without lookups.
    public func rememberFolder(_ components: some Collection<String>, id: String) {
        let key = key(components)
        entries.withLock { $0[key] = Entry(id: id, isFolder: true) }
    }

    /// Drops what is known about a path and everything below it.
    public func forget(_ components: some Collection<String>) {
        let key = key(components)
        entries.withLock { entries in
            for name in entries.keys where keys.key(name, isAtOrBelow: key) { entries[name] = nil }
        }
    }

    /// The preferred item named `name` in a folder, remembered under `components`. Where the service can only
    /// list, the whole folder is listed once (shared by concurrent lookups) and every item in it remembered.
    private func lookUp(_ name: String, in folderID: String, at components: [String]) async throws -> Directory.Item? {
        let path = components.joined(separator: "/")
        let directory = directory
        let parentPath = components.dropLast().joined(separator: "/")
        if let all = try await listings.run(folderID, { try await directory.allItems(in: folderID, path: parentPath) })
        {
            let parent = components.dropLast()
            for item in all { remember(parent + [item.name], item) }
            let wanted = key(components)
            return directory.preferred(all.filter { key(parent + [$0.name]) == wanted })
        }
        let found = try await directory.items(named: name, in: folderID, path: path)
        guard let item = directory.preferred(found) else { return nil }
        remember(components, item)
        return item
    }

    /// The ID of the folder at `components`, creating missing folders when asked; nil when it is missing. A file
    /// where the last component should be a folder is `wrongKind`; a file on the way is a missing path.
    public func folderID(_ components: [String], creating: Bool) async throws -> String? {
        // From the deepest folder known: a folder remembered without its parents (from a feed's cursor) is enough.
        var id = directory.rootID
        var start = components.startIndex
        for depth in components.indices.reversed() {
            if let entry = cached(components[...depth]), entry.isFolder {
                id = entry.id
                start = depth + 1
                break
            }
        }
        for depth in start..<components.endIndex {
            let prefix = components[...depth]
            if let entry = cached(prefix), entry.isFolder { id = entry.id; continue }
            if creating {
                id = try await ensureFolder(Array(prefix), parentID: id)
                continue
            }
            let path = prefix.joined(separator: "/")
            let found = try await directory.items(named: components[depth], in: id, path: path)
            guard let folder = directory.preferred(found.filter(\.isFolder)) else {
                if !found.isEmpty, depth == components.count - 1 {
                    throw CloudFileSystemError.wrongKind(path: path, expectedFolder: true)
                }
                return nil
            }
            remember(prefix, folder)
            id = folder.id
        }
        return id
    }

    /// One creation per folder at a time: concurrent callers wait for the same task.
    private func ensureFolder(_ components: [String], parentID: String) async throws -> String {
        try await creations.run(key(components)) { try await self.createFolder(components, parentID: parentID) }
    }

    /// A folder, created only when none of that name is there.
    private func createFolder(_ components: [String], parentID: String) async throws -> String {
        if let entry = cached(components), entry.isFolder { return entry.id }
        let name = components[components.count - 1], path = components.joined(separator: "/")
        let existing = try await directory.items(named: name, in: parentID, path: path)
        if let folder = directory.preferred(existing.filter(\.isFolder)) {
            remember(components, folder)
            return folder.id
        }
        guard existing.isEmpty else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: true) }
        let created = try await directory.createFolder(named: name, in: parentID, path: path)
        if let created, !directory.allowsDuplicateNames {
            remember(components, created)
            return created.id
        }
        // Another client may have made the same folder at the same moment: every client takes the preferred one.
        guard
            let folder = directory.preferred(
                try await directory.items(named: name, in: parentID, path: path).filter(\.isFolder))
        else {
            throw CloudFileSystemError.transient("the service did not create the folder \(path); try again")
        }
        remember(components, folder)
        return folder.id
    }

    /// Runs `body` with the ID of the folder that is to hold `path` (`parent`, made when missing). When `body` finds
    /// that folder gone (`notFound` or `parentMissing`: removed since it was cached), it is forgotten, found or made
    /// again, and `body` runs once more; a second miss is `parentMissing`.
    public func intoFolder<T>(
        _ parent: [String], for path: String, _ body: (String) async throws -> T
    ) async throws -> T {
        for attempt in 1...2 {
            guard let folderID = try await folderID(parent, creating: true) else {
                throw CloudFileSystemError.parentMissing(path: path)
            }
            do {
                return try await body(folderID)
            } catch let error as CloudFileSystemError where attempt == 1 && error.isMissingFolder {
                forget(parent)
            }
        }
        throw CloudFileSystemError.parentMissing(path: path)
    }

    /// Every item of the folder at `components`, each remembered by path so a later download or upload skips a
    /// lookup; `notFound` when the folder is missing (a cached ID that went is forgotten). For directories that
    /// list whole folders (`allItems`); `path` names the folder in errors.
    public func children(of components: [String], path: String) async throws -> [Directory.Item] {
        guard let id = try await folderID(components, creating: false) else {
            throw CloudFileSystemError.notFound(path: path)
        }
        let items: [Directory.Item]?
        do {
            items = try await directory.allItems(in: id, path: path)
        } catch CloudFileSystemError.notFound {
            forget(components)  // removed since it was cached
            throw CloudFileSystemError.notFound(path: path)
        }
        guard let items else {
            throw CloudFileSystemError.server(
                status: 0, message: "this service lists a folder by query, not as a whole")
        }
        for item in items { remember(components + [item.name], item) }
        return items
    }

    /// The item at a path (the preferred one among duplicates), or nil; the root has no item.
    public func find(_ components: [String]) async throws -> Directory.Item? {
        guard let name = components.last else { return nil }
        let parent: String?
        do {
            parent = try await folderID(Array(components.dropLast()), creating: false)
        } catch CloudFileSystemError.wrongKind {
            return nil
        }
        guard let parent else { return nil }
        return try await lookUp(name, in: parent, at: components)
    }

    /// Runs `body` with the ID of the file at `components`: the cached one first, resolved again when the service
    /// no longer knows it (`notFound` from `body`).
    public func withFileID<T>(_ components: [String], _ body: (String) async throws -> T) async throws -> T {
        let path = components.joined(separator: "/")
        if let entry = cached(components), !entry.isFolder {
            do { return try await body(entry.id) } catch CloudFileSystemError.notFound { forget(components) }
        }
        guard let item = try await find(components) else { throw CloudFileSystemError.notFound(path: path) }
        guard !item.isFolder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        return try await body(item.id)
    }
}
