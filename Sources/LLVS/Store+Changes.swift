import Foundation
import LLVSSupport

extension Store {
    /// The changes a version made, in the form exchanges send (see docs/remote-format.md):
    /// a root lists every value as `insert`; a version with one predecessor lists its differences from it;
    /// a merge lists, for each value that differs between its predecessors, what it kept (`preserve`,
    /// `preserveRemoval`, or `insert`/`update` with data an arbiter wrote). Applying the changes to the first
    /// predecessor's values gives the version's values.
    public func valueChanges(madeInVersionIdentifiedBy id: Version.ID) throws -> [Value.Change] {
        try plannedChanges(madeInVersionIdentifiedBy: id).map(change(for:))
    }

    /// The changes a version made, with new values as map entries (where their data is) rather than loaded, so a
    /// sender can stream large values instead of holding them.
    func plannedChanges(madeInVersionIdentifiedBy id: Version.ID) throws -> [PlannedChange] {
        guard let version = version(identifiedBy: id) else { throw StoreError.versionNotFound(id) }
        guard let predecessors = version.predecessors else {
            return try plannedChanges(madeBetween: nil, and: id)
        }
        guard let second = predecessors.idOfSecond else {
            return try plannedChanges(madeBetween: predecessors.idOfFirst, and: id)
        }
        let merged = try storedVersion(id)
        let firstRoot = try storedVersion(predecessors.idOfFirst).mapRoot
        let secondRoot = try storedVersion(second).mapRoot
        // Values that differ between the predecessors, plus any the merge changed beyond them
        // (an arbiter may write values no fork named), so the receiver always rebuilds the same map.
        var firstEntries: [Value.ID: MapEntry?] = [:]
        for difference in try map.differences(from: firstRoot, to: secondRoot) { firstEntries[difference.valueId] = difference.old }
        for difference in try map.differences(from: firstRoot, to: merged.mapRoot) { firstEntries[difference.valueId] = difference.old }

        var changes: [PlannedChange] = []
        for (valueId, firstEntry) in firstEntries.sorted(by: { $0.key < $1.key }) {
            guard let entry = try map.entry(for: valueId, root: merged.mapRoot) else {
                changes.append(.preserveRemoval(valueId))
                continue
            }
            if entry.storedVersionId == id {
                changes.append(firstEntry == nil ? .insert(entry) : .update(entry))
            } else {
                changes.append(.preserve(entry.reference))
            }
        }
        return changes
    }

    /// The changes that turn the values of `from` (none when nil) into those of `to`, sorted by value ID.
    public func valueChanges(madeBetween from: Version.ID?, and to: Version.ID) throws -> [Value.Change] {
        try plannedChanges(madeBetween: from, and: to).map(change(for:))
    }

    /// The same changes, each with its data read only when it is visited, so a walk over many changed values (a
    /// projection catching up) holds one value's data at a time.
    public func forEachValueChange(madeBetween from: Version.ID?, and to: Version.ID,
                                   _ body: (Value.Change) throws -> Void) throws {
        for planned in try plannedChanges(madeBetween: from, and: to) { try body(try change(for: planned)) }
    }

    func plannedChanges(madeBetween from: Version.ID?, and to: Version.ID) throws -> [PlannedChange] {
        let fromRoot = try from.map { try storedVersion($0).mapRoot } ?? nil
        let toRoot = try storedVersion(to).mapRoot
        return try map.differences(from: fromRoot, to: toRoot).sorted { $0.valueId < $1.valueId }.map { difference in
            guard let new = difference.new else { return .remove(difference.valueId) }
            return difference.old == nil ? .insert(new) : .update(new)
        }
    }

    /// A planned change with its value's data loaded.
    func change(for planned: PlannedChange) throws -> Value.Change {
        switch planned {
        case .insert(let entry): .insert(try value(for: entry))
        case .update(let entry): .update(try value(for: entry))
        case .remove(let id): .remove(id)
        case .preserve(let reference): .preserve(reference)
        case .preserveRemoval(let id): .preserveRemoval(id)
        }
    }
}

/// A change a version made, its new data not yet read.
enum PlannedChange {
    case insert(MapEntry)
    case update(MapEntry)
    case remove(Value.ID)
    case preserve(Value.Reference)
    case preserveRemoval(Value.ID)

    /// The entry of an inserted or updated value.
    var entry: MapEntry? {
        switch self {
        case .insert(let entry), .update(let entry): entry
        default: nil
        }
    }
}
