import Foundation
import LLVSSupport

extension Store {
    /// The value `id` as it is at `version`, or nil when the version does not have it.
    public func value(id: Value.ID, at version: Version.ID) throws -> Value? {
        let stored = try storedVersion(version)
        guard let entry = try map.entry(for: id, root: stored.mapRoot) else { return nil }
        return try value(for: entry)
    }

    /// The value a reference names, read from the version that stored it.
    public func value(storedAt reference: Value.Reference) throws -> Value? {
        guard let entry = try entry(referencedBy: reference) else { return nil }
        return try value(for: entry)
    }

    /// References to every value of a version, sorted by value ID.
    public func valueReferences(at version: Version.ID) throws -> [Value.Reference] {
        try map.entries(root: try storedVersion(version).mapRoot).map(\.reference).sorted { $0.valueId < $1.valueId }
    }

    /// Gives the ID of every value of a version to `body`, in no particular order, without reading any data or holding
    /// the whole list: a scan for the IDs of one kind (all of a backup's source records, say) in bounded memory.
    public func forEachValueId(at version: Version.ID, _ body: (Value.ID) throws -> Void) throws {
        try map.forEachEntry(root: try storedVersion(version).mapRoot) { try body($0.valueId) }
    }

    /// Every value of a version with its data, sorted by value ID.
    public func values(at version: Version.ID) throws -> [Value] {
        try map.entries(root: try storedVersion(version).mapRoot).sorted { $0.valueId < $1.valueId }.map(value(for:))
    }

    /// How many values a version has, without reading them.
    public func valueCount(at version: Version.ID) throws -> Int {
        try storedVersion(version).valueCount
    }

    /// How many bytes value `id` holds at `version`, from its map entry, without reading it; nil when the version
    /// does not have the value.
    public func valueSize(id: Value.ID, at version: Version.ID) throws -> Int64? {
        let stored = try storedVersion(version)
        return try map.entry(for: id, root: stored.mapRoot)?.size
    }

    /// Writes the data of value `id` at `version` to a file, in pieces, without holding it in memory.
    /// Returns false (writing nothing) when the version does not have the value.
    @discardableResult
    public func writeValue(id: Value.ID, at version: Version.ID, to destination: URL) throws -> Bool {
        let stored = try storedVersion(version)
        guard let entry = try map.entry(for: id, root: stored.mapRoot) else { return false }
        try explainingRelease(entry) { try storage.copyRecord(at: entry.data, zone: .values, to: destination) }
        return true
    }

    /// Gives the data of value `id` at `version` to `write` in pieces, never whole in memory (a restore writes it
    /// into a file it holds open). Returns false (giving nothing) when the version does not have the value.
    @discardableResult
    public func writeValue(id: Value.ID, at version: Version.ID, into write: (Data) throws -> Void) throws -> Bool {
        let stored = try storedVersion(version)
        guard let entry = try map.entry(for: id, root: stored.mapRoot) else { return false }
        try explainingRelease(entry) { try storage.copyRecord(at: entry.data, zone: .values, into: write) }
        return true
    }

    /// Tells storage that these values of `version` will be read soon, so a storage that reads from far away starts
    /// reading them now (`Storage.prefetchRecords`). IDs the version lacks, and any lookup that fails, are skipped:
    /// it is only a hint.
    public func prefetchValues(_ ids: [Value.ID], at version: Version.ID) {
        guard !ids.isEmpty, let stored = try? storedVersion(version) else { return }
        let locations = ids.compactMap { try? map.entry(for: $0, root: stored.mapRoot)?.data }
        if !locations.isEmpty { storage.prefetchRecords(at: locations, zone: .values) }
    }

    func value(for entry: MapEntry) throws -> Value {
        let data = try explainingRelease(entry) { try storage.readRecord(at: entry.data, zone: .values) }
        guard Int64(data.count) == entry.size else {
            if try releasedRecords().contains(entry.data) {
                throw StoreError.valueReleased(entry.valueId, storedIn: entry.storedVersionId)
            }
            throw StoreError.corruptFile(
                path: "version \(entry.storedVersionId)",
                reason: "value \(entry.valueId) holds \(data.count) bytes where its map says \(entry.size)")
        }
        return Value(id: entry.valueId, data: data, storedVersionId: entry.storedVersionId)
    }

    /// Runs a read of `entry`'s record; a failure of a record a prune released is said as such, not as damage.
    func explainingRelease<T>(_ entry: MapEntry, _ read: () throws -> T) throws -> T {
        do { return try read() } catch {
            if (try? releasedRecords().contains(entry.data)) == true {
                throw StoreError.valueReleased(entry.valueId, storedIn: entry.storedVersionId)
            }
            throw error
        }
    }
}
