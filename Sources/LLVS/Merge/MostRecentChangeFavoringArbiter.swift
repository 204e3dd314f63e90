import LLVSSupport
/// The default arbiter: a conflict goes to the value stored most recently (by the timestamp of the version that
/// stored it; on a tie, the first version's). A removal against an update keeps the update.
public struct MostRecentChangeFavoringArbiter: MergeArbiter {
    /// The arbiter.
    public init() {}

    public func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change] {
        var changes: [Value.Change] = []
        for (valueId, fork) in merge.forksByValueIdentifier {
            switch fork {
            case .twiceInserted, .twiceUpdated:
                changes.append(
                    try merge.keep(
                        valueId, from: try Self.favoredSide(for: valueId, in: merge, store: store), in: store))
            case .removedAndUpdated(let removedOn):
                changes.append(try merge.keep(valueId, from: removedOn.opposite, in: store))
            case .inserted, .updated, .removed, .twiceRemoved:
                break
            }
        }
        return changes
    }

    /// The side whose value was stored more recently (the first on a tie): the side this arbiter keeps, and the
    /// side a finer arbiter can favour where it too must pick one.
    public static func favoredSide(for valueId: Value.ID, in merge: Merge, store: Store) throws -> Value.Fork.Side {
        let first = try storedTimestamp(of: valueId, at: merge.firstVersion.id, in: store)
        let second = try storedTimestamp(of: valueId, at: merge.secondVersion.id, in: store)
        return first >= second ? .first : .second
    }

    private static func storedTimestamp(of valueId: Value.ID, at version: Version.ID, in store: Store) throws -> Double
    {
        guard let stored = try store.value(id: valueId, at: version)?.storedVersionId,
            let storingVersion = store.version(identifiedBy: stored)
        else { return -.infinity }
        return storingVersion.timestamp
    }
}
