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
        for difference in try map.differences(from: firstRoot, to: secondRoot) {
            firstEntries[difference.valueId] = difference.old
        }
        for difference in try map.differences(from: firstRoot, to: merged.mapRoot) {
            firstEntries[difference.valueId] = difference.old
        }

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

    /// The same changes, each value's data read only when asked for (from any thread): a consumer of many changed
    /// values (a projection catching up) holds few at a time and may spread the reading over several threads.
    public func valueChangeList(madeBetween from: Version.ID?, and to: Version.ID) throws -> ValueChangeList {
        ValueChangeList(store: self, planned: try plannedChanges(madeBetween: from, and: to))
    }

    func plannedChanges(madeBetween from: Version.ID?, and to: Version.ID) throws -> [PlannedChange] {
        let fromRoot = try from.map { try storedVersion($0).mapRoot } ?? nil
        let toRoot = try storedVersion(to).mapRoot
        guard fromRoot != nil else {
            // From nothing, every value is an insert: a walk of the map, without comparing it against an empty one.
            return try map.entries(root: toRoot).sorted { $0.valueId < $1.valueId }.map(PlannedChange.insert)
        }
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

/// Changes between two versions, sorted by value ID (the order a table's primary key is cheapest to fill in), whose
/// data is read when a change is asked for.
public struct ValueChangeList: Sendable {
    let store: Store
    let planned: [PlannedChange]

    public var count: Int { planned.count }

    /// The ID of the value the change at `index` concerns, without reading its data.
    public func valueId(at index: Int) -> Value.ID {
        switch planned[index] {
        case .insert(let entry), .update(let entry): entry.valueId
        case .remove(let id), .preserveRemoval(let id): id
        case .preserve(let reference): reference.valueId
        }
    }

    /// The change at `index`, with its value's data read.
    public func change(at index: Int) throws -> Value.Change { try store.change(for: planned[index]) }

    /// The changes at `indices`, in that order, their data read together (neighbouring values in one request).
    public func changes(at indices: [Int]) throws -> [Value.Change] {
        let entries = indices.compactMap { planned[$0].entry }
        var data = try store.storage.readRecords(at: entries.map(\.data), zone: .values).makeIterator()
        return try indices.map { index in
            let change = planned[index]
            guard let entry = change.entry else { return try store.change(for: change) }
            guard let bytes = data.next() else {
                throw StoreError.corruptFile(path: store.rootURL.path, reason: "a record read went missing")
            }
            let value = Value(id: entry.valueId, data: bytes, storedVersionId: entry.storedVersionId)
            if case .insert = change { return .insert(value) }
            return .update(value)
        }
    }
}

/// A change a version made, its new data not yet read.
enum PlannedChange: Sendable {
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
