import LLVSSupport
/// Decides merges. Given the forks of a merge, an arbiter returns changes to apply on top of the first
/// version's values; it must return a change for every conflicting value. Forks that are not conflicts and
/// that the arbiter leaves alone take the side that changed (`inserted(.second)` keeps the second's value,
/// `removed(.second)` removes it, and so on).
public protocol MergeArbiter: Sendable {
    func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change]
}

extension Merge {
    /// The change that keeps a value as it is on `side` (its reference, or its absence).
    public func keep(_ valueId: Value.ID, from side: Value.Fork.Side, in store: Store) throws -> Value.Change {
        guard let value = try store.value(id: valueId, at: version(on: side).id), let reference = value.reference else {
            return .remove(valueId)
        }
        return .preserve(reference)
    }
}
