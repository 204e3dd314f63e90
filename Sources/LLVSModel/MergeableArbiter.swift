import Foundation
import LLVS
import Synchronization

/// Merges the values of registered model types property by property (`Mergeable`), and hands every other value to
/// a fallback arbiter (most recent change by default), as upstream LLVS's `MergeableArbiter`.
///
/// A conflicting model value is merged from the two sides and the common ancestor's value; properties both sides
/// changed go to the side whose value was stored more recently. A value that removal and update fought over keeps
/// the update. A value that does not decode as its registered type (written by a newer app) goes to the fallback,
/// so one unreadable value never blocks a sync.
public final class MergeableArbiter: MergeArbiter {
    public let fallbackArbiter: any MergeArbiter
    private let types = Mutex<[String: any Mergeable.Type]>([:])

    public init(fallbackArbiter: any MergeArbiter = MostRecentChangeFavoringArbiter()) {
        self.fallbackArbiter = fallbackArbiter
    }

    /// Merges values of `type` property by property from now on.
    public func register<M: StorableModel & Mergeable>(_ type: M.Type) {
        types.withLock { $0[M.modelTypeIdentifier] = type }
    }

    public func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change] {
        let registered = types.withLock { $0 }
        var changes: [Value.Change] = []
        var leftToFallback: [Value.ID: Value.Fork] = [:]
        for (valueId, fork) in merge.forksByValueIdentifier {
            guard fork.isConflicting, let typeId = ModelValueID.typeIdentifier(of: valueId),
                let type = registered[String(typeId)],
                let change = try resolve(valueId, fork: fork, as: type, merge: merge, store: store)
            else {
                leftToFallback[valueId] = fork
                continue
            }
            changes.append(change)
        }
        if !leftToFallback.isEmpty {
            var rest = merge
            rest.forksByValueIdentifier = leftToFallback
            changes += try fallbackArbiter.changes(toResolve: rest, in: store)
        }
        return changes
    }

    /// The change that settles one conflicting model value, or nil to leave it to the fallback.
    private func resolve<M: Mergeable>(
        _ valueId: Value.ID, fork: Value.Fork, as type: M.Type, merge: Merge,
        store: Store
    ) throws -> Value.Change? {
        switch fork {
        case .removedAndUpdated(let removedOn):
            return try merge.keep(valueId, from: removedOn.opposite, in: store)
        case .twiceInserted, .twiceUpdated:
            guard let first = try store.value(id: valueId, at: merge.firstVersion.id),
                let second = try store.value(id: valueId, at: merge.secondVersion.id),
                let firstModel = try? JSONDecoder().decode(M.self, from: first.data),
                let secondModel = try? JSONDecoder().decode(M.self, from: second.data)
            else { return nil }
            let ancestorData = try merge.commonAncestor.flatMap { try store.value(id: valueId, at: $0.id)?.data }
            // An ancestor this build cannot read makes the merge two-way rather than wrong.
            let ancestorModel = ancestorData.flatMap { try? JSONDecoder().decode(M.self, from: $0) }
            let favored = try MostRecentChangeFavoringArbiter.favoredSide(for: valueId, in: merge, store: store)
            let merged = try ModelCoding.encode(
                try M.merged(firstModel, secondModel, ancestor: ancestorModel, conflictsFavor: favored))
            // Compared as trees, not bytes: `JSONEncoder` writes an object's keys in no fixed order, so the same
            // model can encode to different bytes from one encoding to the next.
            let mergedTree = try JSONTree.parse(merged)
            if let reference = first.reference, try JSONTree.parse(first.data) == mergedTree {
                return .preserve(reference)
            }
            if let reference = second.reference, try JSONTree.parse(second.data) == mergedTree {
                return .preserve(reference)
            }
            return .update(Value(id: valueId, data: merged))
        case .inserted, .updated, .removed, .twiceRemoved:
            return nil
        }
    }
}
