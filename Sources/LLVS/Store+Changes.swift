import Foundation

extension Store {
    /// The changes a version made, in the form exchanges send (see llvs-format.md):
    /// a root lists every value as `insert`; a version with one predecessor lists its differences from it;
    /// a merge lists, for each value that differs between its predecessors, what it kept (`preserve`,
    /// `preserveRemoval`, or `insert`/`update` with data an arbiter wrote). Applying the changes to the first
    /// predecessor's values gives the version's values.
    public func valueChanges(madeInVersionIdentifiedBy id: Version.ID) throws -> [Value.Change] {
        guard let version = version(identifiedBy: id) else { throw StoreError.versionNotFound(id) }
        guard let predecessors = version.predecessors else {
            return try valueChanges(madeBetween: nil, and: id)
        }
        guard let second = predecessors.idOfSecond else {
            return try valueChanges(madeBetween: predecessors.idOfFirst, and: id)
        }
        let merged = try storedVersion(id)
        let firstRoot = try storedVersion(predecessors.idOfFirst).mapRoot
        let secondRoot = try storedVersion(second).mapRoot
        // Values that differ between the predecessors, plus any the merge changed beyond them
        // (an arbiter may write values no fork named), so the receiver always rebuilds the same map.
        var firstEntries: [Value.ID: MapEntry?] = [:]
        for difference in try map.differences(from: firstRoot, to: secondRoot) { firstEntries[difference.valueId] = difference.old }
        for difference in try map.differences(from: firstRoot, to: merged.mapRoot) { firstEntries[difference.valueId] = difference.old }

        var changes: [Value.Change] = []
        for (valueId, firstEntry) in firstEntries.sorted(by: { $0.key < $1.key }) {
            guard let entry = try map.entry(for: valueId, root: merged.mapRoot) else {
                changes.append(.preserveRemoval(valueId))
                continue
            }
            if entry.storedVersionId == id {
                let value = try value(for: entry)
                changes.append(firstEntry == nil ? .insert(value) : .update(value))
            } else {
                changes.append(.preserve(entry.reference))
            }
        }
        return changes
    }

    /// The changes that turn the values of `from` (none when nil) into those of `to`, sorted by value ID.
    public func valueChanges(madeBetween from: Version.ID?, and to: Version.ID) throws -> [Value.Change] {
        let fromRoot = try from.map { try storedVersion($0).mapRoot } ?? nil
        let toRoot = try storedVersion(to).mapRoot
        return try map.differences(from: fromRoot, to: toRoot).sorted { $0.valueId < $1.valueId }.map { difference in
            guard let new = difference.new else { return .remove(difference.valueId) }
            let value = try value(for: new)
            return difference.old == nil ? .insert(value) : .update(value)
        }
    }
}
