import Foundation
import LLVSCodecs
import LLVSSupport

/// Turns upstream map nodes into the changes each version made.
///
/// Upstream builds a version's map from its first predecessor's: it copies the root, writes a new sub-node under the
/// new version for every bucket a change touches (an emptied one too) and points the root at it, and never drops a
/// reference. So the buckets in which a version differs from its first predecessor are the ones it wrote a sub-node
/// for, which the archive's file names tell (`Source.writtenSubNodes`) without reading the roots: each root lists
/// every sub-node of its version (256 for UUID ids), so reading them all made an import O(versions × buckets).
/// The roots of the heads are then read and compared with what the file names gave (`checkHeads`); a store that
/// does not follow that rule is read again with `Source.rootNodes`, every root read and compared, the slow way.
struct UpstreamMapReader {
    enum Source { case writtenSubNodes, rootNodes }

    /// A head's root node lists other sub-nodes than the versions' written sub-nodes add up to.
    struct HeadMismatch: Error { var head: Version.ID }

    let importer: ZipV1Importer
    let source: Source
    /// Each version's root references (bucket key to the version holding that bucket's copy), kept while a
    /// successor still builds on it, and for heads; a linear history holds one at a time.
    private var roots: [Version.ID: [String: Version.ID]] = [:]
    private var remainingFirstSuccessors: [Version.ID: Int] = [:]
    private let heads: Set<Version.ID>
    /// Sub-nodes read, kept for the versions that compare against them, within `bucketCacheBudget` bytes.
    private var buckets: [UpstreamNodeReference: UpstreamBucket] = [:]
    private var bucketBytes = 0
    /// The copy of each bucket read last: in a chain of versions, the next version changing a bucket compares
    /// its copy with that one, so these are what the cache keeps when it fills.
    private var lastRead: [String: UpstreamNodeReference] = [:]
    /// Bytes, not entries: a bucket of a large store holds thousands of references (hundreds of KiB). 8 MiB holds
    /// every bucket's last copy of a 10,000-value store several times over; 64 MiB held all 40 MB of sub-nodes of
    /// the benchmark's snapshot and added 30–50 MiB to the clone's peak, which the page faults made slower, not faster.
    private let bucketCacheBudget: Int
    static let defaultBucketCacheBudget = 8 << 20

    init(
        importer: ZipV1Importer, versions: [Version], source: Source, bucketCacheBudget: Int = defaultBucketCacheBudget
    ) {
        self.importer = importer
        self.source = source
        self.bucketCacheBudget = bucketCacheBudget
        var hasSuccessor = Set<Version.ID>()
        for version in versions {
            for predecessor in version.predecessors?.ids ?? [] { hasSuccessor.insert(predecessor) }
            if let first = version.predecessors?.idOfFirst { remainingFirstSuccessors[first, default: 0] += 1 }
        }
        heads = Set(versions.map(\.id).filter { !hasSuccessor.contains($0) })
    }

    /// The references of a version's root node, read from the archive.
    private func readRoot(_ version: Version.ID) throws -> [String: Version.ID] {
        let node = try importer.node(UpstreamLayout.rootNodeKey, version: version)
        guard case .nodes(let references) = node.children else {
            throw importer.corrupt("the root node of version \(version) lists values, not nodes")
        }
        return Dictionary(references.map { ($0.key, $0.version) }, uniquingKeysWith: { _, last in last })
    }

    /// The root references of a processed version, taken over (not copied) by its last successor building on it.
    private mutating func takeRoot(_ version: Version.ID) throws -> [String: Version.ID] {
        let remaining = (remainingFirstSuccessors[version] ?? 1) - 1
        remainingFirstSuccessors[version] = remaining
        let root = remaining <= 0 && !heads.contains(version) ? roots.removeValue(forKey: version) : roots[version]
        guard let root else { throw importer.corrupt("the map of version \(version) is needed before it was read") }
        return root
    }

    /// The value references of one sub-node: value ID to the version that stored the value.
    mutating func bucket(_ reference: UpstreamNodeReference) throws -> UpstreamBucket {
        if let cached = buckets[reference] { return cached }
        let result = try importer.bucket(reference.key, version: reference.version)
        if bucketBytes + result.byteCount > bucketCacheBudget {
            // Clearing everything made every bucket's next comparison read its predecessor's copy again.
            let keep = Set(lastRead.values)
            buckets = buckets.filter { keep.contains($0.key) }
            bucketBytes = buckets.values.reduce(0) { $0 + $1.byteCount }
            if bucketBytes + result.byteCount > bucketCacheBudget / 2 {
                buckets.removeAll()
                bucketBytes = 0
            }
        }
        buckets[reference] = result
        bucketBytes += result.byteCount
        lastRead[reference.key] = reference
        return result
    }

    /// What a version changed: in the form `Store.addVersion` takes, but for the small values it stored, which are
    /// named (`unread`) for the committing thread to read: on two cores the reading thread was the slower one.
    struct VersionChanges: Sendable {
        var received = ReceivedChanges(changes: [])
        var unread: [UnreadValue] = []

        /// A small value the version stored, still in the archive.
        struct UnreadValue: Sendable {
            var id: Value.ID
            var entry: ZipArchiveReader.Entry
            var isUpdate: Bool
        }

        /// The changes with the unread values read from `importer`'s archive (undoing LLZF).
        func read(from importer: ZipV1Importer) throws -> ReceivedChanges {
            var complete = received
            for value in unread {
                let stored = Value(id: value.id, data: try importer.contents(value.entry))
                complete.changes.append(value.isUpdate ? .update(stored) : .insert(stored))
            }
            return complete
        }
    }

    /// What `version` changed relative to its first predecessor: values it stored as inserts and updates (large ones
    /// in files from `temporaryFile`, small ones named to be read), values it kept from elsewhere as `preserve`, and
    /// removals. Versions must come predecessors first.
    mutating func changes(of version: Version, temporaryFile: () -> URL) throws -> VersionChanges {
        let first = version.predecessors?.idOfFirst
        let isMerge = version.predecessors?.idOfSecond != nil
        var new: [String: Version.ID]
        let changed: [String]
        /// For each changed bucket, the version holding the first predecessor's copy.
        let previous: [Version.ID?]
        switch source {
        case .writtenSubNodes:
            guard importer.hasNode(UpstreamLayout.rootNodeKey, version: version.id) else {
                throw importer.corrupt(
                    "the map node \(UpstreamLayout.nodePath(UpstreamLayout.rootNodeKey, version: version.id)) is missing"
                )
            }
            changed = (importer.writtenSubNodes[version.id] ?? []).sorted()
            // Edited in place: the predecessor's references are usually taken over, not copied (256 for UUID ids).
            new = try first.map { try takeRoot($0) } ?? [:]
            previous = changed.map { new[$0] }
            for key in changed { new[key] = version.id }
        case .rootNodes:
            let old = try first.map { try takeRoot($0) } ?? [:]
            new = try readRoot(version.id)
            changed = Self.changedBuckets(new, old)
            previous = changed.map { old[$0] }
        }
        var result = VersionChanges()
        do {
            for (key, previousVersion) in zip(changed, previous) {
                let after = try new[key].map { try bucket(UpstreamNodeReference(key: key, version: $0)) } ?? .empty
                let before =
                    try previousVersion.map { try bucket(UpstreamNodeReference(key: key, version: $0)) } ?? .empty
                let (differing, removed) = after.differences(from: before)
                for (id, stored, existed) in differing {
                    if stored == version.id {
                        try addStoredValue(
                            id, version: version.id, isUpdate: existed, to: &result, temporaryFile: temporaryFile)
                    } else {
                        guard first != nil else {
                            throw importer.corrupt(
                                "root version \(version.id) refers to value \(id) stored in \(stored)")
                        }
                        result.received.changes.append(.preserve(Value.Reference(valueId: id, storedVersionId: stored)))
                    }
                }
                for id in removed {
                    result.received.changes.append(isMerge ? .preserveRemoval(id) : .remove(id))
                }
            }
        } catch {
            result.received.discard()
            throw error
        }
        if (remainingFirstSuccessors[version.id] ?? 0) > 0 || heads.contains(version.id) { roots[version.id] = new }
        return result
    }

    /// Compares each head's root node with the references its versions' written sub-nodes add up to; throws
    /// `HeadMismatch` for the first that differs. Only meaningful after every version went through `changes(of:)`.
    func checkHeads() throws {
        for head in heads.sorted() {
            guard let expected = roots[head] else { throw HeadMismatch(head: head) }
            guard try readRoot(head) == expected else { throw HeadMismatch(head: head) }
        }
    }

    /// The bucket keys whose sub-node differs between two roots, sorted.
    private static func changedBuckets(_ new: [String: Version.ID], _ old: [String: Version.ID]) -> [String] {
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

    /// A value stored by this version: named to be read when small, else streamed from the archive into a file.
    private func addStoredValue(
        _ id: Value.ID, version: Version.ID, isUpdate: Bool, to result: inout VersionChanges,
        temporaryFile: () -> URL
    ) throws {
        let path = UpstreamLayout.valuePath(id, storedIn: version)
        guard let entry = importer.files[path] else { throw importer.corrupt("the value file \(path) is missing") }
        guard entry.size > Store.inlineValueLimit else {
            result.unread.append(.init(id: id, entry: entry, isUpdate: isUpdate))
            return
        }
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
        result.received.files.append((id: id, url: url, isUpdate: isUpdate))
        // A compressed large value (rare: apps compress in memory) is decoded whole, within the limit.
        if head.elementsEqual(UpstreamLayout.compressionMagic), try !UpstreamLayout.unframeStoredBlock(at: url.path) {
            let decoded = try UpstreamLayout.decompressIfNeeded(
                try POSIX.readFile(url.path), limit: ZipV1Importer.decodeLimit)
            try POSIX.writeAtomically(decoded, to: url.path)
        }
    }
}
