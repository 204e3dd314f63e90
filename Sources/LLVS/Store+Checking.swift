import Foundation
import LLVSSupport

/// A value's record as a version's map names it: the value, where its data is stored and how many bytes it holds.
public struct StoredValueEntry: Hashable, Sendable {
    public var valueId: Value.ID
    public var location: RecordLocation
    public var size: Int64
}

extension Store {
    /// Reads every map node of `versions` once (a node shared by many versions, as most are, is read once),
    /// verifying each record's checksum and decoding it. Each distinct value entry goes to `entry`, once per leaf
    /// that holds it; a node that cannot be read goes to `problem` with the first version found to need it, and the
    /// walk goes on with the rest. Memory is the set of node locations read, not the maps' entries.
    public func checkMaps(
        of versions: [Version.ID], problem: (Version.ID, any Error) -> Void, entry: (StoredValueEntry) throws -> Void
    ) throws {
        var visited = Set<RecordLocation>()
        for version in versions {
            let stored: StoredVersion
            do { stored = try storedVersion(version) } catch {
                problem(version, error)
                continue
            }
            var stack: [RecordLocation] = stored.mapRoot.map { [$0] } ?? []
            while let location = stack.popLast() {
                guard visited.insert(location).inserted else { continue }
                let node: MapNode
                do {
                    let data = try storage.readRecord(at: location, zone: .map)
                    node = try MapNode(decoding: data)
                } catch {
                    problem(version, error)
                    continue
                }
                switch node {
                case .leaf(let entries):
                    for found in entries {
                        try entry(StoredValueEntry(valueId: found.valueId, location: found.data, size: found.size))
                    }
                case .branch(let children): stack.append(contentsOf: children.compactMap { $0 })
                }
            }
        }
    }

    /// Every value entry the maps of `versions` name, each shared node read once (`checkMaps`), for work that must know
    /// them all: a map that cannot be read stops it with `corruptFile` naming the version, after the rest are walked.
    public func forEachEntry(inMapsOf versions: [Version.ID], _ body: (StoredValueEntry) throws -> Void) throws {
        var unreadable: (Version.ID, any Error)?
        try checkMaps(of: versions) { version, error in
            if unreadable == nil { unreadable = (version, error) }
        } entry: {
            try body($0)
        }
        if let (version, error) = unreadable {
            throw StoreError.corruptFile(
                path: rootURL.path, reason: "the map of version \(version) cannot be read (\(error)); run `llvs check`")
        }
    }

    /// Where value `id` is stored at `version`, without reading it; nil when the version does not have it.
    public func storedEntry(id: Value.ID, at version: Version.ID) throws -> StoredValueEntry? {
        try map.entry(for: id, root: try storedVersion(version).mapRoot).map {
            StoredValueEntry(valueId: $0.valueId, location: $0.data, size: $0.size)
        }
    }

    /// Gives the data of a stored value to `write` in pieces, decoded, and fails unless its checksum holds and it is
    /// as long as its map entry says.
    public func readStoredValue(_ entry: StoredValueEntry, into write: (Data) throws -> Void) throws {
        var total: Int64 = 0
        try storage.copyRecord(at: entry.location, zone: .values) { piece in
            total += Int64(piece.count)
            try write(piece)
        }
        guard total == entry.size else {
            throw StoreError.corruptFile(
                path: "version \(entry.location.versionId)",
                reason: "value \(entry.valueId) holds \(total) bytes where its map says \(entry.size)")
        }
    }
}
