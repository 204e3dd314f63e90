import Foundation

/// Writes a store as an LLVS app's zip-v1 snapshot: upstream's store folder (`UpstreamLayout`) zipped. For each
/// version, predecessors first: its version file, the values it stored (raw; LLZF is optional for readers), a
/// root node, and a sub-node for each bucket it changed (an emptied one too); other buckets point at the older
/// sub-node, as upstream shares them. Only the maps of versions whose successors are still to come are held, so a linear history
/// holds one map at a time, and the work per version follows its changes.
struct ZipV1Writer {
    let store: Store

    /// The buckets of one version's map: for each, the version whose copy of the sub-node to read, and its values.
    typealias Buckets = [String: (node: Version.ID, values: [Value.ID: Version.ID])]

    func write(versions: [Version], to zip: ZipArchiveWriter) throws {
        let encoder = JSONEncoder()
        var remainingSuccessors: [Version.ID: Int] = [:]
        let included = Set(versions.map(\.id))
        for version in versions {
            for predecessor in version.predecessors?.ids ?? [] where included.contains(predecessor) { remainingSuccessors[predecessor, default: 0] += 1 }
        }
        var maps: [Version.ID: Buckets] = [:]

        for version in versions {
            try zip.addFile(UpstreamLayout.versionPath(version.id), data: try encoder.encode(version))
            let first = version.predecessors?.idOfFirst
            // The predecessor's map, taken over (not copied) when this is its last successor.
            var buckets: Buckets = [:]
            if let first {
                remainingSuccessors[first, default: 1] -= 1
                buckets = (remainingSuccessors[first] ?? 0) <= 0 ? maps.removeValue(forKey: first) ?? [:] : maps[first] ?? [:]
            }
            let differences = try store.map.differences(from: try first.map { try store.storedVersion($0).mapRoot } ?? nil,
                                                        to: try store.storedVersion(version.id).mapRoot)
            var changed = Set<String>()
            for difference in differences.sorted(by: { $0.valueId < $1.valueId }) {
                let key = UpstreamLayout.bucket(of: difference.valueId)
                changed.insert(key)
                var bucket = buckets[key]?.values ?? [:]
                bucket[difference.valueId] = difference.new?.storedVersionId
                buckets[key] = (version.id, bucket)
                if let entry = difference.new, entry.storedVersionId == version.id {
                    try zip.addFile(UpstreamLayout.valuePath(entry.valueId, storedIn: version.id), size: entry.data.length) { write in
                        try store.storage.copyRecord(at: entry.data, zone: .values, into: write)
                    }
                }
            }
            for key in changed.sorted() {
                // An emptied bucket keeps an empty sub-node, as upstream writes it: readers take the sub-nodes a
                // version wrote as the buckets it changed.
                let values = buckets[key]?.values ?? [:]
                let node = UpstreamMapNode(reference: UpstreamNodeReference(key: key, version: version.id), children: .values(
                    values.sorted { $0.key < $1.key }.map { UpstreamMapNode.ValueEntry(key: .init(keyString: $0.key.rawValue),
                                                                                        valueReference: Value.Reference(valueId: $0.key, storedVersionId: $0.value)) }))
                try zip.addFile(UpstreamLayout.nodePath(key, version: version.id), data: node.encodedJSON())
            }
            let root = UpstreamMapNode(reference: UpstreamNodeReference(key: UpstreamLayout.rootNodeKey, version: version.id), children: .nodes(
                buckets.sorted { $0.key < $1.key }.map { UpstreamNodeReference(key: $0.key, version: $0.value.node) }))
            try zip.addFile(UpstreamLayout.nodePath(UpstreamLayout.rootNodeKey, version: version.id), data: root.encodedJSON())
            if (remainingSuccessors[version.id] ?? 0) > 0 { maps[version.id] = buckets }
        }
    }
}
