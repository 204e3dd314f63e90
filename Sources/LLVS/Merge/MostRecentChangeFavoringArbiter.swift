import LLVSSupport
/// The default arbiter: a conflict goes to the value stored most recently (by the timestamp of the version that
/// stored it; on a tie, the first version's). A removal against an update keeps the update.
public struct MostRecentChangeFavoringArbiter: MergeArbiter {
    public init() {}

    public func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change] {
        var changes: [Value.Change] = []
        for (valueId, fork) in merge.forksByValueIdentifier {
            switch fork {
            case .twiceInserted, .twiceUpdated:
                let first = try storedTimestamp(of: valueId, at: merge.firstVersion.id, in: store)
                let second = try storedTimestamp(of: valueId, at: merge.secondVersion.id, in: store)
                changes.append(try keep(valueId, from: first >= second ? .first : .second, of: merge, in: store))
            case .removedAndUpdated(let removedOn):
                changes.append(try keep(valueId, from: removedOn.opposite, of: merge, in: store))
            case .inserted, .updated, .removed, .twiceRemoved:
                break
            }
        }
        return changes
    }

    private func storedTimestamp(of valueId: Value.ID, at version: Version.ID, in store: Store) throws -> Double {
        guard let stored = try store.value(id: valueId, at: version)?.storedVersionId,
              let storingVersion = store.version(identifiedBy: stored) else { return -.infinity }
        return storingVersion.timestamp
    }
}
