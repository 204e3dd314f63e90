import LLVSSupport
/// Resolves every conflict in favour of the more recent of the two merged versions (the first on a tie),
/// including a removal against an update: whatever that version did wins.
public struct MostRecentBranchFavoringArbiter: MergeArbiter {
    /// The arbiter.
    public init() {}

    public func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change] {
        let favored: Value.Fork.Side = merge.firstVersion.timestamp >= merge.secondVersion.timestamp ? .first : .second
        return try merge.forksByValueIdentifier.compactMap { valueId, fork in
            fork.isConflicting ? try merge.keep(valueId, from: favored, in: store) : nil
        }
    }
}
