import Foundation
import LLVSSupport
import Synchronization

/// A versioned store of values. Every save makes a version; versions branch and merge; each value's data is
/// stored once, in the version that wrote it, and later versions refer to it.
///
/// A store is safe to use from many tasks and threads at once, and several processes may share its folder:
/// versions another process saved appear after `reloadHistory()`.
///
/// ```swift
/// let store = try Store(creatingAt: folder)
/// let first = try store.makeVersion(basedOnPredecessor: nil, inserting: [Value(id: "greeting", data: Data("hi".utf8))])
/// let second = try store.makeVersion(basedOnPredecessor: first.id, updating: [Value(id: "greeting", data: Data("hello".utf8))])
/// let value = try store.value(id: "greeting", at: second.id) // "hello"; at first.id it is still "hi"
/// ```
public final class Store: Sendable {
    /// The store's folder (`.llvs` in a working directory).
    public let rootURL: URL
    /// Where versions, map nodes and value data are kept: `FileStorage`, or SQLite (`LLVSSQLite`).
    public let storage: any Storage
    let map: ValueMap
    /// The released records as last read, and the list file's size then (`releasedRecords()`).
    let released = Mutex<(records: Set<RecordLocation>, size: Int64)>(([], -1))
    let state: Mutex<State>

    struct State: Sendable {
        var history = History()
        var stored: [Version.ID: StoredVersion] = [:]
        /// Versions read from storage before their predecessors were: another process wrote both between two
        /// folders of one listing (the later one's folder listed after it landed, the earlier one's before). They
        /// join the history with the next reload that brings their predecessors.
        var unplaced: [StoredVersion] = []
    }

    /// Makes the storage for a store, given its root folder and descriptor. The core knows `file`;
    /// other kinds (SQLite) are supplied by their modules.
    public typealias StorageMaker =
        @Sendable (_ root: String, _ descriptor: StoreDescriptor, _ creating: Bool) throws -> any Storage

    /// Makes `FileStorage`, the storage every store can open.
    public static let fileStorageMaker: StorageMaker = { root, descriptor, _ in
        guard descriptor.storage == "file" else {
            throw StoreError.unsupportedStorage(kind: descriptor.storage, path: root)
        }
        return try FileStorage(storeRoot: root)
    }

    /// Opens the store at `url`, creating it with FileStorage when the folder holds none.
    public convenience init(rootDirectoryURL url: URL) throws {
        if try StoreDescriptor.read(storeRoot: url.path) == nil {
            try self.init(
                creatingAt: url, descriptor: StoreDescriptor(storage: "file"), makeStorage: Self.fileStorageMaker)
        } else {
            try self.init(openingAt: url, makeStorage: Self.fileStorageMaker)
        }
    }

    /// Creates a new store; fails if `url` already holds one.
    public convenience init(
        creatingAt url: URL, descriptor: StoreDescriptor = StoreDescriptor(storage: "file"),
        makeStorage: StorageMaker = Store.fileStorageMaker
    ) throws {
        try self.init(
            creatingAt: url, descriptor: descriptor, mapNodeCacheLimit: MapNodeCache.defaultLimit,
            makeStorage: makeStorage)
    }

    /// `mapNodeCacheLimit`: how many decoded map nodes to keep; a store that only reads back what it just wrote
    /// (an import's staging store) keeps few, so it neither holds nor frees them all at the end.
    convenience init(
        creatingAt url: URL, descriptor: StoreDescriptor, mapNodeCacheLimit: Int, makeStorage: StorageMaker
    ) throws {
        let root = url.path
        if try StoreDescriptor.read(storeRoot: root) != nil { throw StoreError.alreadyAStore(path: root) }
        try POSIX.makeDirectories(root)
        let storage = try makeStorage(root, descriptor, true)
        try descriptor.write(storeRoot: root)
        try self.init(url: url, storage: storage, mapNodeCacheLimit: mapNodeCacheLimit)
    }

    /// Opens an existing store; fails with `notAStore` if `url` holds none.
    public convenience init(openingAt url: URL, makeStorage: StorageMaker = Store.fileStorageMaker) throws {
        guard var descriptor = try StoreDescriptor.read(storeRoot: url.path) else {
            throw StoreError.notAStore(path: url.path)
        }
        if descriptor.format < StoreDescriptor.currentFormat {
            descriptor.format = StoreDescriptor.currentFormat
            try descriptor.write(storeRoot: url.path)
        }
        try self.init(
            url: url, storage: makeStorage(url.path, descriptor, false), mapNodeCacheLimit: MapNodeCache.defaultLimit)
    }

    private init(url: URL, storage: any Storage, mapNodeCacheLimit: Int) throws {
        self.rootURL = url
        self.storage = storage
        self.map = ValueMap(storage: storage, cache: MapNodeCache(limit: mapNodeCacheLimit))
        self.state = Mutex(State())
        removeAbandonedTemporaries()
        // Opening, everything is on disk already: a version whose predecessor is missing then is a damaged store.
        _ = try reloadHistory(unplacedAreErrors: true)
    }

    /// Loads versions committed since the last load, including those other processes saved.
    /// Returns the IDs of the versions that appeared.
    @discardableResult
    public func reloadHistory() throws -> [Version.ID] {
        try reloadHistory(unplacedAreErrors: false)
    }

    /// Loads what storage has newly committed. A version whose predecessor was not among what was read is kept
    /// aside and the storage read again (another process may have written both while it was being listed); one
    /// still unplaced waits for a later reload, or, when `unplacedAreErrors` (opening), is `missingPredecessor`.
    func reloadHistory(unplacedAreErrors: Bool) throws -> [Version.ID] {
        var added: [Version.ID] = []
        // A writer still at work can strand a later version at each listing; a damaged store strands it every time.
        let attempts = unplacedAreErrors ? 5 : 2
        for attempt in 0..<attempts {
            let loaded = try storage.newlyCommittedVersions()
            let unplaced = try state.withLock { state -> Int in
                guard !loaded.isEmpty || !state.unplaced.isEmpty else { return 0 }
                var seen = Set<Version.ID>()
                let fresh = (state.unplaced + loaded).filter {
                    state.stored[$0.version.id] == nil && seen.insert($0.version.id).inserted
                }
                let stranded = Set(try state.history.add(unordered: fresh.map(\.version)).map(\.id))
                for header in fresh where !stranded.contains(header.version.id) {
                    state.stored[header.version.id] = header
                    added.append(header.version.id)
                }
                state.unplaced = fresh.filter { stranded.contains($0.version.id) }
                return state.unplaced.count
            }
            guard unplaced > 0 else { break }
            if attempt == attempts - 1, unplacedAreErrors {
                try state.withLock { state in
                    if let version = state.unplaced.first?.version,
                        let missing = version.predecessors?.ids.first(where: { !state.history.contains($0) })
                    {
                        throw StoreError.missingPredecessor(missing, of: version.id)
                    }
                }
            }
        }
        return added
    }

    /// Makes room for `count` versions (history and headers) in a store about to receive that many one by one.
    func reserveCapacity(forVersions count: Int) {
        state.withLock { state in
            state.history.reserveCapacity(count)
            state.stored.reserveCapacity(count)
        }
    }

    /// Takes over the history of versions just restored into this empty store (built by whoever staged them), with
    /// their headers, instead of rebuilding it from the headers. The two must name the same versions.
    func adoptRestoredHistory(_ history: History, headers: [StoredVersion]) throws {
        try state.withLock { state in
            guard state.history.isEmpty, state.stored.isEmpty else {
                throw StoreError.storeNotEmpty(path: rootURL.path)
            }
            var stored: [Version.ID: StoredVersion] = [:]
            stored.reserveCapacity(headers.count)
            for header in headers {
                guard history.contains(header.version.id), stored.updateValue(header, forKey: header.version.id) == nil
                else {
                    throw StoreError.corruptFile(
                        path: rootURL.path,
                        reason: "the restored version \(header.version.id) is not once in the history staged with it")
                }
            }
            guard stored.count == history.count else {
                throw StoreError.corruptFile(
                    path: rootURL.path,
                    reason: "the staged history holds \(history.count) versions, the restored headers \(stored.count)")
            }
            state.history = history
            state.stored = stored
        }
    }

    // MARK: History

    /// A copy of the history as it is now.
    public var history: History { state.withLock { $0.history } }

    /// The version with this ID, or nil when the store does not have it (yet).
    public func version(identifiedBy id: Version.ID) -> Version? {
        state.withLock { $0.history.version(id) }
    }

    /// The versions no other version follows: one after a merge, several while branches are apart.
    public var heads: Set<Version.ID> { state.withLock { $0.history.heads } }

    /// The head saved last, by its timestamp; nil for an empty store.
    public var mostRecentHead: Version? { state.withLock { $0.history.mostRecentHead } }

    /// Whether `descendant` was made, through any number of versions, on top of `ancestor`.
    public func isAncestor(_ ancestor: Version.ID, of descendant: Version.ID) -> Bool {
        state.withLock { $0.history.isAncestor(ancestor, of: descendant) }
    }

    /// The latest version both `a` and `b` descend from: the base of a three-way merge; nil when they share none.
    /// - Throws: `StoreError.versionNotFound` when the store lacks `a` or `b`.
    public func greatestCommonAncestor(_ a: Version.ID, _ b: Version.ID) throws -> Version.ID? {
        try state.withLock { state in
            for id in [a, b] where !state.history.contains(id) { throw StoreError.versionNotFound(id) }
            return state.history.greatestCommonAncestor(a, b)
        }
    }

    func storedVersion(_ id: Version.ID) throws -> StoredVersion {
        guard let stored = state.withLock({ $0.stored[id] }) else { throw StoreError.versionNotFound(id) }
        return stored
    }
}
