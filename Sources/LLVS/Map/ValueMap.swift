import Dispatch
import Foundation
import LLVSSupport
import Synchronization

/// A change to make to a map: set `entry` for the key, or remove the key when `entry` is nil.
struct MapEdit: Sendable {
    var key: MapKey
    var entry: MapEntry?

    /// Sets or removes `valueId`, kept under its canonical spelling; for an ID an earlier build may have placed by
    /// another spelling, also removes what is there (`CanonicalSpelling.swift`).
    static func edits(_ valueId: Value.ID, entry: MapEntry?) -> [MapEdit] {
        let key = MapKey(valueId)
        var canonicalEntry = entry
        canonicalEntry?.valueId = key.valueId
        var edits = [MapEdit(key: key, entry: canonicalEntry)]
        for spelling in valueId.legacySpellings(besides: key.valueId.rawValue) {
            let legacy = MapKey.legacy(key.valueId, spelling: spelling)
            if legacy.digest != key.digest { edits.append(MapEdit(key: legacy, entry: nil)) }
        }
        return edits
    }
}

/// A value that differs between two maps.
struct MapDifference: Sendable {
    var valueId: Value.ID
    var old: MapEntry?
    var new: MapEntry?
}

/// Reads, edits and compares the value maps of versions. Every version's map is a persistent trie whose
/// unchanged subtrees are shared with its predecessor's, so edits and comparisons only visit what changed.
struct ValueMap: Sendable {
    let storage: any Storage
    let cache: MapNodeCache

    /// `caching`: whether a node read from storage joins the cache. A comparison visits each node once, and one of
    /// old versions (a remote's changes files written again after a prune) would otherwise push out the nodes of the
    /// versions in use and hold a few hundred megabytes of nodes no one reads again.
    func node(at location: RecordLocation, caching: Bool = true) throws -> MapNode {
        if let node = cache[location] { return node }
        let data = try storage.readRecord(at: location, zone: .map)
        let node: MapNode
        do {
            node = try MapNode(decoding: data)
        } catch let failure as ByteReader.Failure {
            throw StoreError.corruptFile(
                path: "map record of version \(location.versionId) at offset \(location.offset)",
                reason: failure.description)
        }
        if caching { cache.insert(node, at: location) }
        return node
    }

    // MARK: Reading

    func entry(for valueId: Value.ID, root: RecordLocation?) throws -> MapEntry? {
        let key = MapKey(valueId)
        if let found = try entry(for: key, root: root) { return found }
        for spelling in valueId.legacySpellings(besides: key.valueId.rawValue) {
            let legacy = MapKey.legacy(key.valueId, spelling: spelling)
            if legacy.digest != key.digest, let found = try entry(for: legacy, root: root) { return found }
        }
        return nil
    }

    /// The entry `key` means, following its slots; one spelled canonically first among equal ones.
    private func entry(for key: MapKey, root: RecordLocation?) throws -> MapEntry? {
        guard var location = root else { return nil }
        var depth = 0
        while true {
            switch try node(at: location) {
            case .leaf(let entries):
                return key.index(in: entries).map { entries[$0] }
            case .branch(let children):
                guard let child = children[key.slot(atDepth: depth)] else { return nil }
                location = child
                depth += 1
            }
        }
    }

    func entries(root: RecordLocation?) throws -> [MapEntry] {
        var result: [MapEntry] = []
        try forEachEntry(root: root) { result.append($0) }
        return result
    }

    /// Gives every entry of the map to `body`, a leaf at a time: memory is that of the path being walked, not of the map.
    func forEachEntry(root: RecordLocation?, _ body: (MapEntry) throws -> Void) throws {
        var stack: [RecordLocation] = root.map { [$0] } ?? []
        while let location = stack.popLast() {
            switch try node(at: location) {
            case .leaf(let entries): for entry in entries { try body(entry) }
            case .branch(let children): stack.append(contentsOf: children.compactMap { $0 })
            }
        }
    }

    // MARK: Editing

    /// Applies edits to the map at `root`, writing new nodes through `writer`; returns the new root and
    /// how the number of values changed. Nodes off the edited paths are shared, not copied.
    ///
    /// The new nodes are planned first and written after: their leaves are encoded and compressed on every processor
    /// at once (a backup's checkpoint rewrites thousands of leaves, and one thread doing it left the others idle),
    /// then appended in the order a depth-first walk meets them, each branch after its children.
    func apply(
        _ edits: [MapEdit], to root: RecordLocation?, writer: any VersionWriter
    ) throws -> (root: RecordLocation?, countChange: Int) {
        let sorted = edits.sorted { $0.key.digest.lexicographicallyPrecedes($1.key.digest) }
        var countChange = 0
        let planned = try plan(sorted[...], to: root, depth: 0, countChange: &countChange)
        return (try write(planned, writer: writer), countChange)
    }

    /// A node of the edited map before it is written: one already stored (or none), or a new leaf or branch.
    private indirect enum PlannedNode {
        case kept(RecordLocation?)
        case leaf([MapEntry])
        case branch([PlannedNode])
    }

    private func plan(
        _ edits: ArraySlice<MapEdit>, to location: RecordLocation?, depth: Int, countChange: inout Int
    ) throws -> PlannedNode {
        guard !edits.isEmpty else { return .kept(location) }
        switch try location.map { try node(at: $0) } ?? .leaf([]) {
        case .leaf(let entries) where edits.count > Self.inPlaceEditLimit:
            // Many edits (a first backup puts thousands of values into an empty map) go through a dictionary: a scan
            // and an insert for each, as below, would be quadratic (20,000 values took 7.9 s instead of 1.2 s).
            var byId: [Value.ID: MapEntry] = [:]
            var changed = false
            for entry in entries {
                // Two spellings of one ID, left by an earlier build: one value now, the canonical spelling kept.
                if let kept = byId[entry.valueId] {
                    countChange -= 1
                    changed = true
                    if kept.valueId.isSpelled(as: kept.valueId.canonical.rawValue) { continue }
                }
                byId[entry.valueId] = entry
            }
            for edit in edits {
                if let entry = edit.entry {
                    let old = byId.updateValue(entry, forKey: entry.valueId)
                    if old == nil { countChange += 1 }
                    if old != entry { changed = true }
                } else if let old = byId[edit.key.valueId], edit.key.matches(old) {
                    byId[edit.key.valueId] = nil
                    countChange -= 1
                    changed = true
                }
            }
            guard changed else { return .kept(location) }
            return build(Array(byId.values), depth: depth)
        case .leaf(var entries):
            // A few edits (the usual save) are made in place: a leaf is short (at most `leafCapacity`) and kept sorted,
            // so a scan finds an entry and a binary search places a new one, with no dictionary built and no re-sort.
            var changed = false
            for edit in edits {
                let index = edit.key.index(in: entries)
                if let entry = edit.entry {
                    if let index {
                        if entries[index] != entry { entries[index] = entry; changed = true }
                    } else {
                        entries.insert(entry, at: Self.sortedPosition(of: entry.valueId, in: entries))
                        countChange += 1
                        changed = true
                    }
                } else if let index {
                    entries.remove(at: index)
                    countChange -= 1
                    changed = true
                }
            }
            guard changed else { return .kept(location) }
            guard !entries.isEmpty else { return .kept(nil) }
            if entries.count <= MapNode.leafCapacity || depth >= MapNode.maximumDepth { return .leaf(entries) }
            return build(entries, depth: depth)
        case .branch(let stored):
            var children = stored.map(PlannedNode.kept)
            var start = edits.startIndex
            while start < edits.endIndex {
                let slot = edits[start].key.slot(atDepth: depth)
                var end = start + 1
                while end < edits.endIndex, edits[end].key.slot(atDepth: depth) == slot { end += 1 }
                children[slot] = try plan(
                    edits[start..<end], to: stored[slot], depth: depth + 1, countChange: &countChange)
                start = end
            }
            return try finishBranch(children)
        }
    }

    /// The most edits made to a leaf in place; more go through a dictionary.
    static let inPlaceEditLimit = MapNode.leafCapacity / 4

    /// Where `valueId` goes in `entries` sorted by value ID.
    private static func sortedPosition(of valueId: Value.ID, in entries: [MapEntry]) -> Int {
        var low = 0, high = entries.count
        while low < high {
            let middle = (low + high) / 2
            if entries[middle].valueId < valueId { low = middle + 1 } else { high = middle }
        }
        return low
    }

    /// `entries` as a leaf, or as a branch of smaller nodes when they exceed a leaf's capacity.
    private func build(_ entries: [MapEntry], depth: Int) -> PlannedNode {
        guard !entries.isEmpty else { return .kept(nil) }
        if entries.count <= MapNode.leafCapacity || depth >= MapNode.maximumDepth {
            return .leaf(entries.sorted { $0.valueId < $1.valueId })
        }
        var groups = [[MapEntry]](repeating: [], count: MapNode.fanOut)
        for entry in entries { groups[MapKey(entry.valueId).slot(atDepth: depth)].append(entry) }
        return .branch(groups.map { build($0, depth: depth + 1) })
    }

    /// A branch left empty disappears; one left with a single leaf is replaced by that leaf, keeping paths short.
    private func finishBranch(_ children: [PlannedNode]) throws -> PlannedNode {
        let present = children.filter {
            if case .kept(nil) = $0 { return false }
            return true
        }
        if present.isEmpty { return .kept(nil) }
        if present.count == 1 {
            switch present[0] {
            case .leaf: return present[0]
            case .kept(let location?): if case .leaf = try node(at: location) { return present[0] }
            default: break
            }
        }
        return .branch(children)
    }

    /// Leaves fewer than this are compressed on the caller's thread.
    private static let parallelLeafCount = 32

    /// Writes the planned nodes: the new leaves' records made at once (in parallel when there are many), then every
    /// new node appended depth first, each branch after its children. Returns the root's location.
    private func write(_ planned: PlannedNode, writer: any VersionWriter) throws -> RecordLocation? {
        var leaves: [[MapEntry]] = []
        func collect(_ node: PlannedNode) {
            switch node {
            case .kept: break
            case .leaf(let entries): leaves.append(entries)
            case .branch(let children): children.forEach(collect)
            }
        }
        collect(planned)
        let records = Self.leafRecords(leaves)
        var next = 0
        func place(_ node: PlannedNode) throws -> RecordLocation? {
            switch node {
            case .kept(let location):
                return location
            case .leaf(let entries):
                let location = try writer.append(records[next], zone: .map)
                next += 1
                cache.insert(.leaf(entries), at: location)
                return location
            case .branch(let children):
                let branch = MapNode.branch(try children.map(place))
                let location = try writer.append(StoredRecord.compressedIfSmaller(branch.encoded()), zone: .map)
                cache.insert(branch, at: location)
                return location
            }
        }
        return try place(planned)
    }

    /// The stored records of leaves, in their order: each encoded and compressed, spread over every processor when
    /// there are enough of them to be worth it.
    private static func leafRecords(_ leaves: [[MapEntry]]) -> [StoredRecord] {
        @Sendable func record(_ entries: [MapEntry]) -> StoredRecord {
            StoredRecord.compressedIfSmaller(MapNode.leaf(entries).encoded())
        }
        guard leaves.count >= parallelLeafCount else { return leaves.map(record) }
        let batch = parallelLeafCount / 2
        let batches = (leaves.count + batch - 1) / batch
        let made = Mutex([[StoredRecord]](repeating: [], count: batches))
        DispatchQueue.concurrentPerform(iterations: batches) { index in
            let range = index * batch..<min(leaves.count, (index + 1) * batch)
            let records = leaves[range].map(record)
            made.withLock { $0[index] = records }
        }
        return made.withLock { $0 }.flatMap { $0 }
    }

    // MARK: Comparing

    /// The values that differ between the maps at `from` and `to`. Shared subtrees are skipped, so the cost
    /// follows the number of differences, not the size of the maps. The nodes it reads are not cached
    /// (`node(at:caching:)`).
    func differences(from: RecordLocation?, to: RecordLocation?) throws -> [MapDifference] {
        var result: [MapDifference] = []
        try compare(Side(from), Side(to), depth: 0, into: &result)
        return result
    }

    private enum Side {
        case stored(RecordLocation)
        case entries([MapEntry])

        init(_ location: RecordLocation?) { self = location.map(Side.stored) ?? .entries([]) }
    }

    private enum Expanded {
        case entries([MapEntry])
        case children([Side])
    }

    private func expand(_ side: Side) throws -> Expanded {
        switch side {
        case .entries(let entries): return .entries(entries)
        case .stored(let location):
            switch try node(at: location, caching: false) {
            case .leaf(let entries): return .entries(entries)
            case .branch(let children): return .children(children.map(Side.init))
            }
        }
    }

    private func split(_ expanded: Expanded, depth: Int) -> [Side] {
        switch expanded {
        case .children(let children): return children
        case .entries(let entries):
            var groups = [[MapEntry]](repeating: [], count: MapNode.fanOut)
            for entry in entries { groups[MapKey(entry.valueId).slot(atDepth: depth)].append(entry) }
            return groups.map(Side.entries)
        }
    }

    private func compare(_ a: Side, _ b: Side, depth: Int, into result: inout [MapDifference]) throws {
        switch (a, b) {
        case let (.stored(x), .stored(y)) where x == y: return
        case let (.entries(x), .entries(y)) where x.isEmpty && y.isEmpty: return
        default: break
        }
        let ea = try expand(a), eb = try expand(b)
        if case .entries(let x) = ea, case .entries(let y) = eb {
            var old = Dictionary(x.map { ($0.valueId, $0) }, uniquingKeysWith: { first, _ in first })
            for entry in y {
                let previous = old.removeValue(forKey: entry.valueId)
                if previous != entry { result.append(MapDifference(valueId: entry.valueId, old: previous, new: entry)) }
            }
            for (id, entry) in old { result.append(MapDifference(valueId: id, old: entry, new: nil)) }
            return
        }
        let left = split(ea, depth: depth), right = split(eb, depth: depth)
        for slot in 0..<MapNode.fanOut {
            try compare(left[slot], right[slot], depth: depth + 1, into: &result)
        }
    }
}
