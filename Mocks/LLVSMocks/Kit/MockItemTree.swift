import Foundation

/// An item of a mock service that names things by ID: what the shared tree needs to index it. Each mock adds its
/// service's own fields (Drive's mimeType and md5, Box's etag and sha1, pCloud's hash).
public protocol MockTreeItem: Sendable {
    var id: String { get }
    var name: String { get set }
    /// Drive items may have several parents; the other services have one.
    var parents: [String] { get set }
    var isFolder: Bool { get }
    /// Moved to the trash itself (an item inside a trashed folder counts as trashed too).
    var trashed: Bool { get set }
    var content: MockContent? { get }
}

/// One entry of a mock's change log.
public struct MockChange: Sendable, Equatable {
    public var id: String
    public var removed: Bool
    public var time: Date
}

/// The item tree that the ID-based mocks (Drive, OneDrive, Box, pCloud) share: items by ID with their parents,
/// the children of each folder in creation order, a per-folder name index (case-insensitive where the service
/// is), trash, a strictly increasing clock and a change log. Lookups by folder and name are dictionary lookups,
/// as on the real services, so a mock holding 10,000 items answers as fast as one holding ten.
public struct MockItemTree<Item: MockTreeItem>: Sendable {
    public let rootID: String
    /// Whether names are indexed without regard to case (OneDrive, Box; Drive's `name =` also ignores case).
    public let caseInsensitiveNames: Bool
    /// Whether a composed and a decomposed spelling of a name are one name (OneDrive); otherwise names are indexed
    /// byte for byte.
    public let canonicallyEquivalentNamesCollide: Bool
    public private(set) var items: [String: Item] = [:]
    private var children: [String: [String]] = [:]
    private var childrenByName: [String: [MockNameKey: [String]]] = [:]
    /// Change number N (from 1) is `changes[N - 1]`.
    public private(set) var changes: [MockChange] = []
    /// The index in `changes` of each item's latest change.
    public private(set) var latestChange: [String: Int] = [:]
    /// What feed positions count from: a position is `feedBase` + a change index. Forgetting the feed moves the
    /// base far ahead, so every position handed out before is refused as a service refuses one it has let go (the
    /// test hook behind each mock's `expireChangeCursors`), while new ones work as before.
    public private(set) var feedBase = 0
    private var lastTime = Date.distantPast

    /// New files a listing of their folder leaves out, with how many more listings (`listing-lag`).
    public private(set) var lagging: [String: Int] = [:]

    /// Leaves a new file out of its folder's next `listings` listings.
    public mutating func lagInListings(_ id: String, listings: Int = MockNamedFault.lagListings) {
        lagging[id] = listings
    }

    /// A listing of `folderID` was served from its start: each lagging file in it is a listing closer to showing.
    public mutating func listingServed(of folderID: String) {
        guard !lagging.isEmpty else { return }
        for (id, left) in lagging where items[id]?.parents.contains(folderID) == true {
            lagging[id] = left > 1 ? left - 1 : nil
        }
    }

    /// Lets go of every position handed out so far.
    public mutating func forgetChanges() { feedBase += 1_000_000_000 }

    /// The feed position of the point before change `index` (`changes.count`: now).
    public func feedPosition(_ index: Int) -> Int { feedBase + index }

    /// The change index a feed position names; nil for one handed out before the feed was forgotten, or not yet.
    public func changeIndex(atFeedPosition position: Int) -> Int? {
        let index = position - feedBase
        return (0...changes.count).contains(index) ? index : nil
    }

    public init(root: Item, caseInsensitiveNames: Bool, canonicallyEquivalentNamesCollide: Bool = false) {
        rootID = root.id
        self.caseInsensitiveNames = caseInsensitiveNames
        self.canonicallyEquivalentNamesCollide = canonicallyEquivalentNamesCollide
        items[root.id] = root
        usage = root.content?.size ?? 0
    }

    func key(_ name: String) -> MockNameKey {
        let spelled = canonicallyEquivalentNamesCollide ? name.precomposedStringWithCanonicalMapping : name
        return MockNameKey(caseInsensitiveNames ? spelled.lowercased() : spelled)
    }

    /// A strictly increasing clock with millisecond steps, so creation order shows in the items' times.
    public mutating func tick() -> Date {
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        lastTime = now > lastTime ? now : lastTime.addingTimeInterval(0.001)
        return lastTime
    }

    public subscript(id: String) -> Item? { items[id] }

    /// A folder's children in creation order.
    public func children(of folderID: String) -> [Item] {
        (children[folderID] ?? []).compactMap { items[$0] }
    }

    /// A page of a folder's children not trashed themselves (in creation order, from the `start`th), and how many
    /// there are in all. Only the page's items are copied out: a listing of 10,000 files in pages copied (and, on
    /// OneDrive, walked up to the root) every child for every page, most of a mock's work during a clone.
    public func liveChildren(of folderID: String, from start: Int, limit: Int) -> (page: [Item], total: Int) {
        var page: [Item] = []
        var total = 0
        for id in children[folderID] ?? [] {
            guard let index = items.index(forKey: id), !items.values[index].trashed, lagging[id] == nil else {
                continue
            }
            if total >= start, page.count < limit { page.append(items.values[index]) }
            total += 1
        }
        return (page, total)
    }

    /// The children whose name matches `name` under the tree's case rule.
    public func children(of folderID: String, named name: String) -> [Item] {
        (childrenByName[folderID]?[key(name)] ?? []).compactMap { items[$0] }
    }

    /// The item, unless it is in the trash.
    public func live(_ id: String) -> Item? {
        guard let item = items[id], !isTrashed(id) else { return nil }
        return item
    }

    /// The first child of `folderID` named `name` that is not in the trash.
    public func liveChild(named name: String, of folderID: String) -> Item? {
        children(of: folderID, named: name).first { !isTrashed($0.id) }
    }

    /// Whether `folderID` is `id` or inside it: where a move or copy of `id` must not go.
    public func isSameOrInside(_ folderID: String, _ id: String) -> Bool {
        var current: String? = folderID
        var depth = 0
        while let next = current, depth < 256 {
            if next == id { return true }
            current = items[next]?.parents.first
            depth += 1
        }
        return false
    }

    /// Trashed itself or inside a trashed folder.
    public func isTrashed(_ id: String) -> Bool {
        var current = items[id]
        var depth = 0
        while let item = current, depth < 256 {
            if item.trashed { return true }
            current = item.parents.first.flatMap { items[$0] }
            depth += 1
        }
        return false
    }

    /// Bytes held by every item, kept as items change: every upload checks the quota, and a sum over all items
    /// there would make a mock's upload cost grow with the drive.
    public private(set) var usage: Int64 = 0

    /// The bytes in a folder and everything below it, trashed items left out: a folder's size as the services
    /// report it.
    public func liveSize(of folderID: String) -> Int64 {
        var total: Int64 = 0
        var pending = [folderID]
        while let next = pending.popLast() {
            for id in children[next] ?? [] {
                guard let item = items[id], !item.trashed else { continue }
                total += item.content?.size ?? 0
                if item.isFolder { pending.append(id) }
            }
        }
        return total
    }

    public mutating func record(_ id: String, removed: Bool = false) {
        latestChange[id] = changes.count
        changes.append(MockChange(id: id, removed: removed, time: lastTime))
    }

    private mutating func index(_ item: Item) {
        let name = key(item.name)
        for parent in item.parents {
            children[parent, default: []].append(item.id)
            childrenByName[parent, default: [:]][name, default: []].append(item.id)
        }
    }

    private mutating func unindex(_ item: Item) {
        let name = key(item.name)
        for parent in item.parents {
            children[parent]?.removeAll { $0 == item.id }
            childrenByName[parent]?[name]?.removeAll { $0 == item.id }
        }
    }

    /// Adds a new item to its parents' indexes and the change log.
    public mutating func insert(_ item: Item) {
        items[item.id] = item
        usage += item.content?.size ?? 0
        index(item)
        record(item.id)
    }

    /// Changes an item (name, parents, contents, trash) and keeps the indexes right; recorded as a change.
    @discardableResult
    public mutating func update(_ id: String, _ change: (inout Item) throws -> Void) rethrows -> Item? {
        guard var item = items[id] else { return nil }
        let before = item
        try change(&item)
        if before.name != item.name || before.parents != item.parents {
            unindex(before)
            index(item)
        }
        items[id] = item
        usage += (item.content?.size ?? 0) - (before.content?.size ?? 0)
        record(id)
        return item
    }

    /// Removes an item for good, and everything inside it when it is a folder; returns what was removed.
    public mutating func remove(_ id: String) -> [Item] {
        var removed: [Item] = []
        var pending = [id]
        while let next = pending.popLast() {
            guard let item = items.removeValue(forKey: next) else { continue }
            usage -= item.content?.size ?? 0
            unindex(item)
            removed.append(item)
            pending += children.removeValue(forKey: next) ?? []
            childrenByName[next] = nil
            record(next, removed: true)
        }
        return removed
    }

    /// Puts back an item read from a saved state, without a change.
    public mutating func restore(_ item: Item) {
        usage += (item.content?.size ?? 0) - (items[item.id]?.content?.size ?? 0)
        items[item.id] = item
        index(item)
    }

    /// The path of an item from the root, for tests.
    public func path(of id: String) -> String? {
        var names: [String] = []
        var current = items[id]
        var depth = 0
        while let item = current, item.id != rootID, depth < 256 {
            names.append(item.name)
            guard let parent = item.parents.first else { return nil }
            current = items[parent]
            depth += 1
        }
        return names.reversed().joined(separator: "/")
    }

    /// Every live (not trashed) item's path, for tests.
    public var livePaths: [String] {
        items.keys.filter { $0 != rootID && !isTrashed($0) }.compactMap { path(of: $0) }.sorted()
    }
}
