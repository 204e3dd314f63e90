import Foundation
import LLVSSupport

/// What a three-way merge compares both sides against. Usually one version, the two sides' greatest common
/// ancestor. After a criss-cross (two stores each merged the same two heads) there are several best common
/// ancestors, all equally valid; taking one of them would make the result depend on which, and could bring back a
/// value one side removed. Then, as Git's recursive strategy does, the ancestors are first merged into a virtual
/// base: a real version plus the entries that differ from it. The virtual base is never stored; the merge version
/// recorded is an ordinary LLVS version.
struct MergeBase {
    /// The real version the overlay applies to; nil for the empty store.
    var version: Version.ID?
    /// Entries that differ from `version`'s map (nil: the value is absent from the base).
    var overlay: [Value.ID: MapEntry?] = [:]

    func entry(_ valueId: Value.ID, in store: Store) throws -> MapEntry? {
        if let entry = overlay[valueId] { return entry }
        guard let version else { return nil }
        return try store.map.entry(for: valueId, root: try store.storedVersion(version).mapRoot)
    }
}

extension History {
    /// The best common ancestors of `a` and `b`: common ancestors that are not ancestors of another common ancestor,
    /// oldest first (timestamp, then ID), so every store sees them in the same order.
    func mergeBases(_ a: Version.ID, _ b: Version.ID) -> [Version.ID] {
        let common = ancestors(of: a).intersection(ancestors(of: b))
        let best = common.filter { id in !successors(of: id).contains(where: common.contains) }
        return best.compactMap { versions[$0] }.sorted(by: Self.isOrderedBefore).map(\.id)
    }
}

extension Store {
    /// The base for merging `first` and `second`: their only best common ancestor, or a virtual base merged from all
    /// of them (recursively, when those have several of their own).
    func mergeBase(_ first: Version.ID, _ second: Version.ID, depth: Int = 0) throws -> MergeBase {
        let bases = state.withLock { $0.history.mergeBases(first, second) }
        guard bases.count > 1, depth < 32 else { return MergeBase(version: bases.last) }
        var virtual = MergeBase(version: bases[0])
        for next in bases.dropFirst() {
            let base = try mergeBase(bases[0], next, depth: depth + 1)
            virtual = try virtualMerge(virtual, MergeBase(version: next), over: base)
        }
        return virtual
    }

    /// `first` and `second` merged over `base`, kept as a base and never stored. Conflicts are settled as the default
    /// arbiter settles them (the more recently stored value; an update over a removal), which is enough for a base:
    /// what the real merge decides is still decided by its own arbiter.
    private func virtualMerge(_ first: MergeBase, _ second: MergeBase, over base: MergeBase) throws -> MergeBase {
        var result = first
        for (valueId, fork) in try forks(first, second, over: base) {
            let take: MapEntry?
            switch fork {
            case .inserted(.first), .updated(.first), .removed(.first):
                continue
            case .inserted(.second), .updated(.second), .removed(.second):
                take = try second.entry(valueId, in: self)
            case .twiceRemoved:
                take = nil
            case .twiceInserted, .twiceUpdated, .removedAndUpdated:
                let a = try first.entry(valueId, in: self), b = try second.entry(valueId, in: self)
                switch (a, b) {
                case let (a?, b?):
                    let ta = version(identifiedBy: a.storedVersionId)?.timestamp ?? -.infinity
                    let tb = version(identifiedBy: b.storedVersionId)?.timestamp ?? -.infinity
                    take = ta >= tb ? a : b
                case let (a?, nil): take = a
                case let (nil, b): take = b
                }
            }
            result.overlay[valueId] = .some(take)
        }
        return result
    }

    /// How each value forked between two sides since a base, any of which may be virtual. Only values that changed
    /// somewhere are looked at: those the real maps differ in, and those the overlays name.
    func forks(_ first: MergeBase, _ second: MergeBase, over base: MergeBase) throws -> [Value.ID: Value.Fork] {
        let baseRoot = try base.version.map { try storedVersion($0).mapRoot } ?? nil
        var candidates = Set(base.overlay.keys).union(first.overlay.keys).union(second.overlay.keys)
        for side in [first, second] {
            let root = try side.version.map { try storedVersion($0).mapRoot } ?? nil
            for difference in try map.differences(from: baseRoot, to: root) { candidates.insert(difference.valueId) }
        }
        var forks: [Value.ID: Value.Fork] = [:]
        for valueId in candidates {
            let old = try base.entry(valueId, in: self)
            let a = try first.entry(valueId, in: self), b = try second.entry(valueId, in: self)
            let changedA = a?.storedVersionId != old?.storedVersionId,
                changedB = b?.storedVersionId != old?.storedVersionId
            switch (changedA, changedB) {
            case (false, false):
                continue
            case (true, false):
                forks[valueId] = old == nil ? .inserted(.first) : a == nil ? .removed(.first) : .updated(.first)
            case (false, true):
                forks[valueId] = old == nil ? .inserted(.second) : b == nil ? .removed(.second) : .updated(.second)
            case (true, true):
                switch (a, b) {
                case (nil, nil): forks[valueId] = .twiceRemoved
                case let (x?, y?) where x.storedVersionId == y.storedVersionId: continue
                case (_?, _?): forks[valueId] = old == nil ? .twiceInserted : .twiceUpdated
                case (nil, _?): forks[valueId] = .removedAndUpdated(removedOn: .first)
                case (_?, nil): forks[valueId] = .removedAndUpdated(removedOn: .second)
                }
            }
        }
        return forks
    }
}
