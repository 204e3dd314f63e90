import Foundation
import LLVSCodecs
import LLVSSupport

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
            for predecessor in version.predecessors?.ids ?? [] where included.contains(predecessor) {
                remainingSuccessors[predecessor, default: 0] += 1
            }
        }
        var maps: [Version.ID: Buckets] = [:]

        for version in versions {
            try zip.addFile(UpstreamLayout.versionPath(version.id), data: try encoder.encode(version))
            let first = version.predecessors?.idOfFirst
            // The predecessor's map, taken over (not copied) when this is its last successor.
            var buckets: Buckets = [:]
            if let first {
                remainingSuccessors[first, default: 1] -= 1
                buckets =
                    (remainingSuccessors[first] ?? 0) <= 0 ? maps.removeValue(forKey: first) ?? [:] : maps[first] ?? [:]
            }
            let differences = try store.map.differences(
                from: try first.map { try store.storedVersion($0).mapRoot } ?? nil,
                to: try store.storedVersion(version.id).mapRoot)
            var changed = Set<String>()
            for difference in differences.sorted(by: { $0.valueId < $1.valueId }) {
                let key = UpstreamLayout.bucket(of: difference.valueId)
                changed.insert(key)
                var bucket = buckets[key]?.values ?? [:]
                bucket[difference.valueId] = difference.new?.storedVersionId
                buckets[key] = (version.id, bucket)
                if let entry = difference.new, entry.storedVersionId == version.id {
                    try addValue(entry, storedIn: version.id, to: zip)
                }
            }
            for key in changed.sorted() {
                // An emptied bucket keeps an empty sub-node, as upstream writes it: readers take the sub-nodes a
                // version wrote as the buckets it changed.
                let values = buckets[key]?.values ?? [:]
                let node = UpstreamMapNode(
                    reference: UpstreamNodeReference(key: key, version: version.id),
                    children: .values(
                        values.sorted { $0.key < $1.key }.map {
                            UpstreamMapNode.ValueEntry(
                                key: .init(keyString: $0.key.rawValue),
                                valueReference: Value.Reference(valueId: $0.key, storedVersionId: $0.value))
                        }))
                try zip.addFile(UpstreamLayout.nodePath(key, version: version.id), data: node.encodedJSON())
            }
            let root = UpstreamMapNode(
                reference: UpstreamNodeReference(key: UpstreamLayout.rootNodeKey, version: version.id),
                children: .nodes(
                    buckets.sorted { $0.key < $1.key }.map {
                        UpstreamNodeReference(key: $0.key, version: $0.value.node)
                    }))
            try zip.addFile(
                UpstreamLayout.nodePath(UpstreamLayout.rootNodeKey, version: version.id), data: root.encodedJSON())
            if (remainingSuccessors[version.id] ?? 0) > 0 { maps[version.id] = buckets }
        }
    }

    /// Writes a value's file as stored, except one an upstream reader would take for compressed: a file longer than
    /// 4 bytes that starts with `LLZF` is decompressed by upstream (`decompressIfNeeded`), so such a value is framed
    /// as `LLZF` + an LZFSE stream of one stored block (`bvx-`, its length, the bytes, `bvx$`), which every reader
    /// decodes back to exactly those bytes. A value up to `inMemoryValueLimit` is read whole and compressed in one
    /// call (most values are small, and streaming each through zlib cost more than its bytes); a larger one is streamed.
    func addValue(_ entry: MapEntry, storedIn version: Version.ID, to zip: ZipArchiveWriter) throws {
        let path = UpstreamLayout.valuePath(entry.valueId, storedIn: version)
        let length = entry.size
        if length <= Self.inMemoryValueLimit {
            var data = Data(capacity: Int(length))
            try store.storage.copyRecord(at: entry.data, zone: .values) { data.append($0) }
            guard data.count > 4, data.starts(with: UpstreamLayout.compressionMagic) else {
                try zip.addFile(path, data: data)
                return
            }
            let frame = Self.storedFrame(length: length)
            try zip.addFile(path, data: Data(frame.head) + data + Data(frame.tail))
            return
        }
        guard try startsWithCompressionMagic(entry) else {
            try zip.addFile(path, size: length) { write in
                try store.storage.copyRecord(at: entry.data, zone: .values, into: write)
            }
            return
        }
        let frame = Self.storedFrame(length: length)
        try zip.addFile(path, size: Int64(frame.head.count) + length + Int64(frame.tail.count)) { write in
            try write(Data(frame.head))
            try store.storage.copyRecord(at: entry.data, zone: .values, into: write)
            try write(Data(frame.tail))
        }
    }

    /// The largest value read into memory to be compressed in one call.
    static let inMemoryValueLimit: Int64 = 1 << 20

    /// What goes before and after a value of `length` bytes to make it `LLZF` + one stored LZFSE block.
    static func storedFrame(length: Int64) -> (head: [UInt8], tail: [UInt8]) {
        var head = ByteWriter()
        head.append(UpstreamLayout.compressionMagic)
        head.uint32(LZFSE.stored)
        head.uint32(UInt32(length))
        var tail = ByteWriter()
        tail.uint32(LZFSE.endOfStream)
        return (head.bytes, tail.bytes)
    }

    /// Whether the value's first bytes are `LLZF`, from its first piece only.
    private func startsWithCompressionMagic(_ entry: MapEntry) throws -> Bool {
        struct Enough: Error {}
        var prefix: [UInt8] = []
        do {
            try store.storage.copyRecord(at: entry.data, zone: .values) { piece in
                prefix.append(contentsOf: piece.prefix(4 - prefix.count))
                if prefix.count == 4 { throw Enough() }
            }
        } catch is Enough {}
        return prefix == UpstreamLayout.compressionMagic
    }
}
