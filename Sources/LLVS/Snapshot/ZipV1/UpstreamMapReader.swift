import Foundation

/// Turns upstream map nodes into the changes each version made, with small caches of root and sub-nodes so a
/// linear history reads each node about once.
struct UpstreamMapReader {
    let importer: ZipV1Importer
    private var roots: [Version.ID: [String: Version.ID]] = [:]
    private var buckets: [UpstreamNodeReference: [Value.ID: Version.ID]] = [:]
    private static let cacheLimit = 4096

    init(importer: ZipV1Importer) { self.importer = importer }

    /// The sub-node references of a version's root: bucket key to the version holding that bucket's copy.
    mutating func root(_ version: Version.ID) throws -> [String: Version.ID] {
        if let cached = roots[version] { return cached }
        let node = try importer.node(UpstreamLayout.rootNodeKey, version: version)
        guard case .nodes(let references) = node.children else { throw importer.corrupt("the root node of version \(version) lists values, not nodes") }
        let result = Dictionary(references.map { ($0.key, $0.version) }, uniquingKeysWith: { _, last in last })
        if roots.count >= Self.cacheLimit { roots.removeAll(keepingCapacity: true) }
        roots[version] = result
        return result
    }

    /// The value references of one sub-node: value ID to the version that stored the value.
    mutating func bucket(_ reference: UpstreamNodeReference) throws -> [Value.ID: Version.ID] {
        if let cached = buckets[reference] { return cached }
        let node = try importer.node(reference.key, version: reference.version)
        guard case .values(let entries) = node.children else { throw importer.corrupt("the map node \(reference.key) of version \(reference.version) lists nodes, not values") }
        let result = Dictionary(entries.map { ($0.valueReference.valueId, $0.valueReference.storedVersionId) }, uniquingKeysWith: { _, last in last })
        if buckets.count >= Self.cacheLimit { buckets.removeAll(keepingCapacity: true) }
        buckets[reference] = result
        return result
    }

    /// What `version` changed relative to its first predecessor, in the form `Store.addVersion` takes: values it
    /// stored as inserts and updates (large ones in files from `temporaryFile`), values it kept from elsewhere as
    /// `preserve`, and removals.
    mutating func changes(of version: Version, temporaryFile: () -> URL) throws -> ReceivedChanges {
        let first = version.predecessors?.idOfFirst
        let isMerge = version.predecessors?.idOfSecond != nil
        let new = try root(version.id)
        let old = try first.map { try root($0) } ?? [:]
        var received = ReceivedChanges(changes: [])
        do {
            for key in changedBuckets(new, old) {
                let after = try new[key].map { try bucket(UpstreamNodeReference(key: key, version: $0)) } ?? [:]
                let before = try old[key].map { try bucket(UpstreamNodeReference(key: key, version: $0)) } ?? [:]
                for (id, stored) in after.sorted(by: { $0.key < $1.key }) where before[id] != stored {
                    if stored == version.id {
                        try addStoredValue(id, version: version.id, isUpdate: before[id] != nil, to: &received, temporaryFile: temporaryFile)
                    } else {
                        guard first != nil else { throw importer.corrupt("root version \(version.id) refers to value \(id) stored in \(stored)") }
                        received.changes.append(.preserve(Value.Reference(valueId: id, storedVersionId: stored)))
                    }
                }
                for id in before.keys.sorted() where after[id] == nil {
                    received.changes.append(isMerge ? .preserveRemoval(id) : .remove(id))
                }
            }
        } catch {
            received.discard()
            throw error
        }
        return received
    }

    /// The bucket keys whose sub-node differs between two roots, sorted; only roots that lost a bucket are walked twice.
    private func changedBuckets(_ new: [String: Version.ID], _ old: [String: Version.ID]) -> [String] {
        var changed: [String] = []
        var added = 0
        for (key, version) in new where old[key] != version {
            changed.append(key)
            if old[key] == nil { added += 1 }
        }
        if old.count > new.count - added {
            for key in old.keys where new[key] == nil { changed.append(key) }
        }
        return changed.sorted()
    }

    /// A value stored by this version: in memory when small, else streamed from the archive into a file.
    private func addStoredValue(_ id: Value.ID, version: Version.ID, isUpdate: Bool, to received: inout ReceivedChanges,
                                temporaryFile: () -> URL) throws {
        let path = UpstreamLayout.valuePath(id, storedIn: version)
        guard let entry = importer.files[path] else { throw importer.corrupt("the value file \(path) is missing") }
        if entry.size > Store.inlineValueLimit {
            let url = temporaryFile()
            let writer = try AtomicFileWriter(destination: url.path)
            var head = Data()
            do {
                try importer.archive.read(entry) { piece in
                    if head.count < 4 { head.append(piece.prefix(4 - head.count)) }
                    try writer.write(piece)
                }
                try writer.commit(durable: false)
            } catch {
                writer.discard()
                throw error
            }
            received.files.append((id: id, url: url, isUpdate: isUpdate))
            // A compressed large value (rare: apps compress in memory) is decoded whole, within the limit.
            if head.elementsEqual(UpstreamLayout.compressionMagic) {
                let decoded = try UpstreamLayout.decompressIfNeeded(try POSIX.readFile(url.path), limit: ZipV1Importer.decodeLimit)
                try POSIX.writeAtomically(decoded, to: url.path)
            }
            return
        }
        guard let data = try importer.file(path) else { throw importer.corrupt("the value file \(path) is missing") }
        let value = Value(id: id, data: data)
        received.changes.append(isUpdate ? .update(value) : .insert(value))
    }
}
