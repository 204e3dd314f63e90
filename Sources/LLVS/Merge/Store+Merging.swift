import Foundation
import LLVSSupport

/// Which heads a merge of heads takes in.
public enum HeadSelection: Sendable, Equatable {
    case all
    /// Heads saved on no named branch: what the coordinator merges by default, as LLVS's does, leaving a branch
    /// someone is working on (`draft`) alone until it is merged on purpose.
    case unbranched
    /// Every head except those saved on the named branches.
    case allExcept(branches: [Branch])
    /// Only heads saved on the named branches (plus the version merged into).
    case branches([Branch])

    func includes(_ version: Version) -> Bool {
        switch self {
        case .all: true
        case .unbranched: version.branch == nil
        case .allExcept(let excluded): version.branch.map { !excluded.contains($0) } ?? true
        case .branches(let included): version.branch.map(included.contains) ?? false
        }
    }
}

extension Store {
    /// How each value forked between `first` and `second` since `ancestor` (nil: the empty store, a two-way merge).
    public func forks(
        between first: Version.ID, and second: Version.ID, commonAncestor ancestor: Version.ID?
    ) throws -> [Value.ID: Value.Fork] {
        let ancestorRoot = try ancestor.map { try storedVersion($0).mapRoot } ?? nil
        let firstRoot = try storedVersion(first).mapRoot
        let secondRoot = try storedVersion(second).mapRoot
        var firstChanges: [Value.ID: MapDifference] = [:]
        for difference in try map.differences(from: ancestorRoot, to: firstRoot) {
            firstChanges[difference.valueId] = difference
        }
        var forks: [Value.ID: Value.Fork] = [:]
        for b in try map.differences(from: ancestorRoot, to: secondRoot) {
            guard let a = firstChanges.removeValue(forKey: b.valueId) else {
                forks[b.valueId] = Self.fork(b, on: .second)
                continue
            }
            switch (a.new, b.new) {
            case (nil, nil): forks[b.valueId] = .twiceRemoved
            case let (x?, y?) where x.storedVersionId == y.storedVersionId: continue
            case (_?, _?): forks[b.valueId] = a.old == nil ? .twiceInserted : .twiceUpdated
            case (nil, _?): forks[b.valueId] = .removedAndUpdated(removedOn: .first)
            case (_?, nil): forks[b.valueId] = .removedAndUpdated(removedOn: .second)
            }
        }
        for (valueId, a) in firstChanges { forks[valueId] = Self.fork(a, on: .first) }
        return forks
    }

    private static func fork(_ difference: MapDifference, on side: Value.Fork.Side) -> Value.Fork {
        switch (difference.old, difference.new) {
        case (nil, _): .inserted(side)
        case (_, nil): .removed(side)
        default: .updated(side)
        }
    }

    /// Merges two versions. When one is an ancestor of the other, the descendant is returned and nothing is
    /// saved (fast-forward); otherwise a merge version is saved with `first` and `second` as predecessors, three-way
    /// from their common ancestor (a virtual one merged from several after a criss-cross, so the result does not
    /// depend on which of them wins a tie), or two-way when they share no history.
    @discardableResult
    public func merge(
        version first: Version.ID, with second: Version.ID,
        resolvingWith arbiter: any MergeArbiter = MostRecentChangeFavoringArbiter(),
        metadata: Version.Metadata = [:]
    ) throws -> Version {
        guard let firstVersion = version(identifiedBy: first) else { throw StoreError.versionNotFound(first) }
        guard let secondVersion = version(identifiedBy: second) else { throw StoreError.versionNotFound(second) }
        if isAncestor(second, of: first) { return firstVersion }
        if isAncestor(first, of: second) { return secondVersion }

        // One best common ancestor: the plain three-way merge. Several (a criss-cross): a virtual base merged from them.
        let base = try mergeBase(first, second)
        let forks =
            base.overlay.isEmpty
            ? try forks(between: first, and: second, commonAncestor: base.version)
            : try forks(MergeBase(version: first), MergeBase(version: second), over: base)
        let merge = Merge(
            firstVersion: firstVersion, secondVersion: secondVersion,
            commonAncestor: base.version.flatMap(version(identifiedBy:)), forksByValueIdentifier: forks)
        var changes: [Value.ID: Value.Change] = [:]
        for change in try arbiter.changes(toResolve: merge, in: self) { changes[change.valueId] = change }

        let unresolved = merge.conflictingValueIds.filter { changes[$0] == nil }
        guard unresolved.isEmpty else { throw StoreError.unresolvedConflicts(valueIds: unresolved) }

        for (valueId, fork) in forks where changes[valueId] == nil {
            switch fork {
            case .inserted(.second), .updated(.second):
                guard let value = try value(id: valueId, at: second), let reference = value.reference else { continue }
                changes[valueId] = .preserve(reference)
            case .removed(.second):
                changes[valueId] = .remove(valueId)
            default:
                continue  // The first version's values are the base already.
            }
        }
        let ordered = changes.values.sorted { $0.valueId < $1.valueId }
        return try makeVersion(
            basedOn: Version.Predecessors(idOfFirst: first, idOfSecond: second), storing: ordered, metadata: metadata)
    }

    /// Merges the selected heads into `version`, one at a time in timestamp-then-ID order, so the result depends
    /// only on the versions involved. Returns the final version (unchanged when there was nothing to merge).
    @discardableResult
    public func mergeHeads(
        into version: Version.ID, selection: HeadSelection = .all,
        resolvingWith arbiter: any MergeArbiter = MostRecentChangeFavoringArbiter()
    ) throws -> Version {
        guard var result = self.version(identifiedBy: version) else { throw StoreError.versionNotFound(version) }
        let others = heads.compactMap(self.version(identifiedBy:))
            .filter { $0.id != version && selection.includes($0) }
            .sorted(by: History.isOrderedBefore)
        for head in others where !isAncestor(head.id, of: result.id) {
            result = try merge(version: result.id, with: head.id, resolvingWith: arbiter)
        }
        return result
    }
}
