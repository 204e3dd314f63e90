import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

extension Store {
    /// Saves a new version made from `predecessors` (none for a root) with the given changes, in one step:
    /// the version and its data become visible together, or not at all.
    @discardableResult
    public func makeVersion(
        basedOn predecessors: Version.Predecessors?, storing changes: [Value.Change],
        metadata: Version.Metadata = [:],
        timestamp: TimeInterval = Date().timeIntervalSinceReferenceDate
    ) throws -> Version {
        let version = Version(
            id: .random(), predecessors: predecessors, timestamp: timestamp,
            valueDataSize: changes.valueDataSize, metadata: metadata)
        return try commit(version, changes: changes, files: [], received: false)
    }

    /// Saves a new version on top of one predecessor (or as a root), inserting, updating and removing values.
    @discardableResult
    public func makeVersion(
        basedOnPredecessor predecessor: Version.ID?, inserting: [Value] = [], updating: [Value] = [],
        removing: [Value.ID] = [], metadata: Version.Metadata = [:]
    ) throws -> Version {
        let changes =
            inserting.map(Value.Change.insert) + updating.map(Value.Change.update) + removing.map(Value.Change.remove)
        return try makeVersion(
            basedOn: predecessor.map { Version.Predecessors(idOfFirst: $0) }, storing: changes, metadata: metadata)
    }

    /// Saves a new version whose new values include local files, read once in pieces as they are stored (so a file of
    /// any size costs bounded memory). `files` maps value IDs to files; each is an insert, or an update where
    /// `updating` says so. `changes` may not name the same values. A file that changes while it is read (size,
    /// modification or change time), or whose SHA-256 differs from `expectedSHA256[id]`, fails the save with
    /// `sourceChanged` and nothing is stored: a version never holds bytes other than those the caller hashed.
    @discardableResult
    public func makeVersion(
        basedOn predecessors: Version.Predecessors?, storing changes: [Value.Change],
        files: [(id: Value.ID, url: URL, isUpdate: Bool)], expectedSHA256: [Value.ID: String] = [:],
        metadata: Version.Metadata = [:]
    ) throws -> Version {
        // The size of the value data is the files' as `commit` finds them, the same look that tells whether they changed.
        let version = Version(
            id: .random(), predecessors: predecessors, timestamp: Date().timeIntervalSinceReferenceDate,
            valueDataSize: nil, metadata: metadata)
        return try commit(version, changes: changes, files: files, expectedSHA256: expectedSHA256, received: false)
    }

    /// Adds a version made elsewhere (received through an exchange) with the changes it was sent with.
    /// The changes are checked against the version before anything is stored.
    public func addVersion(_ version: Version, storing changes: [Value.Change]) throws {
        try commit(version, changes: changes, files: [], received: true)
    }

    /// Adds a received version whose large values arrived in files (read into storage in pieces).
    public func addVersion(_ version: Version, receiving received: ReceivedChanges) throws {
        try commit(
            version, changes: received.changes, files: received.files, stored: received.stored, received: true)
    }

    /// Adds a received version whose new values stay where they are: each `placed` value's map entry points at its
    /// location, which this store's storage reads (a storage over a remote's changes files, `llvs mount --from`).
    /// Nothing is written for them; `changes` are the version's changes without data (remove, preserve,
    /// preserveRemoval). A placed value whose location has `versionId` other than the version's is refused.
    public func addVersion(_ version: Version, placing placed: [PlacedValue], changes: [Value.Change]) throws {
        if let value = placed.first(where: { $0.location.versionId != version.id }) {
            throw StoreError.invalidChanges(
                version.id, reason: "value \(value.id) is placed in version \(value.location.versionId)")
        }
        try commit(version, changes: changes, files: [], placed: placed, received: true)
    }

    @discardableResult
    private func commit(
        _ proposed: Version, changes: [Value.Change], files: [(id: Value.ID, url: URL, isUpdate: Bool)],
        stored: [ReceivedValue] = [], placed: [PlacedValue] = [], expectedSHA256: [Value.ID: String] = [:],
        received: Bool
    ) throws -> Version {
        var version = proposed
        let id = version.id
        func invalid(_ reason: String) -> StoreError { .invalidChanges(id, reason: reason) }

        if version.id.rawValue.isEmpty { throw invalid("the version has an empty identifier") }
        let (base, baseCount) = try state.withLock { state -> (RecordLocation?, Int) in
            if state.stored[id] != nil { throw StoreError.versionAlreadyExists(id) }
            for predecessor in version.predecessors?.ids ?? [] where state.stored[predecessor] == nil {
                throw StoreError.missingPredecessor(predecessor, of: id)
            }
            let first = version.predecessors.flatMap { state.stored[$0.idOfFirst] }
            return (first?.mapRoot, first?.valueCount ?? 0)
        }

        var seen = Set<Value.ID>()
        for valueId in changes.map(\.valueId) + files.map(\.id) + stored.map(\.id) + placed.map(\.id)
        where !seen.insert(valueId).inserted {
            throw invalid("value \(valueId) appears in more than one change")
        }
        // Each file looked at once: its size counts in the version, and it must look the same after it is read.
        // stat, not lstat: a source may be given as a link to it (/proc/self/fd/N for a name that is not UTF-8).
        let sources = try files.map { file in
            guard let state = SourceFileState(file.url.path) else {
                throw FileError.io(path: file.url.path, operation: "read", errno: ENOENT)
            }
            return state
        }
        let size =
            changes.valueDataSize + sources.reduce(0) { $0 + $1.size } + stored.reduce(0) { $0 + $1.size }
            + placed.reduce(0) { $0 + $1.size }
        if received, let declared = version.valueDataSize, declared != size {
            throw invalid("the version declares \(declared) bytes of value data but its changes carry \(size)")
        }
        version.valueDataSize = size
        if received {
            if version.predecessors == nil,
                let change = changes.first(where: { if case .insert = $0 { false } else { true } })
            {
                throw invalid(
                    "a root version may only insert, but it has a change for \(change.valueId) of another kind")
            }
            if version.predecessors == nil, let file = files.first(where: \.isUpdate) {
                throw invalid("a root version may only insert, but it updates \(file.id)")
            }
            if version.predecessors == nil, let value = stored.first(where: \.isUpdate) {
                throw invalid("a root version may only insert, but it updates \(value.id)")
            }
            if version.predecessors == nil, let value = placed.first(where: \.isUpdate) {
                throw invalid("a root version may only insert, but it updates \(value.id)")
            }
        }

        let writer = try storage.makeVersionWriter(for: id)
        var edits: [MapEdit] = []
        do {
            edits.reserveCapacity(changes.count)
            for change in changes {
                switch change {
                case .insert(let value), .update(let value):
                    let location = try writer.appendValue(value.data)
                    edits += MapEdit.edits(
                        value.id, entry: MapEntry(valueId: value.id, data: location, size: Int64(value.data.count)))
                case .remove, .preserveRemoval:
                    edits += MapEdit.edits(change.valueId, entry: nil)
                case .preserve(let reference):
                    guard let entry = try entry(referencedBy: reference) else {
                        throw invalid(
                            "it preserves value \(reference.valueId) stored in version \(reference.storedVersionId), which the store does not have"
                        )
                    }
                    edits += MapEdit.edits(change.valueId, entry: entry)
                }
            }
            for (file, before) in zip(files, sources) {
                let digest = expectedSHA256[file.id].map { _ in DigestStream(.sha256) }
                let (location, size) = try writer.appendValue(contentsOf: file.url, digest: digest)
                guard before == SourceFileState(file.url.path), before.size == size,
                    digest.map({ $0.finalizeHex() == expectedSHA256[file.id] }) ?? true
                else {
                    throw StoreError.sourceChanged(path: file.url.path)
                }
                edits += MapEdit.edits(
                    file.id, entry: MapEntry(valueId: file.id, data: location, size: size))
            }
            var released: [RecordLocation] = []
            for value in stored {
                let location = try value.store(with: writer, in: id)
                if case .released = value.bytes { released.append(location) }
                edits += MapEdit.edits(value.id, entry: MapEntry(valueId: value.id, data: location, size: value.size))
            }
            for value in placed {
                if value.isReleased { released.append(value.location) }
                edits += MapEdit.edits(
                    value.id, entry: MapEntry(valueId: value.id, data: value.location, size: value.size))
            }
            // Listed before the version is visible, so no reader takes a released value for a damaged one.
            try listReleased(released)
        } catch {
            writer.discard()
            throw error
        }
        try commitWritten(version, edits: edits, base: base, baseCount: baseCount, writer: writer)
        return version
    }

    /// The map entry of a value as stored in the version that stored it.
    func entry(referencedBy reference: Value.Reference) throws -> MapEntry? {
        guard let stored = state.withLock({ $0.stored[reference.storedVersionId] }) else { return nil }
        guard let entry = try map.entry(for: reference.valueId, root: stored.mapRoot),
            entry.storedVersionId == reference.storedVersionId
        else { return nil }
        return entry
    }
}

/// What tells a local file changed while it was read: its size, modification and change times (the change time
/// moves with every write, even one that restores the modification time).
struct SourceFileState: Equatable {
    var size: Int64
    var modified: timespec
    var changed: timespec

    init?(_ path: String) {
        var info = stat()
        guard stat(path, &info) == 0 else { return nil }
        size = Int64(info.st_size)
        modified = info.st_mtim
        changed = info.st_ctim
    }

    static func == (a: SourceFileState, b: SourceFileState) -> Bool {
        a.size == b.size && a.modified.tv_sec == b.modified.tv_sec && a.modified.tv_nsec == b.modified.tv_nsec
            && a.changed.tv_sec == b.changed.tv_sec && a.changed.tv_nsec == b.changed.tv_nsec
    }
}

/// A received value kept where it already is (`Store.addVersion(_:placing:changes:)`): its location in the version's
/// own records, which the store's storage knows how to read, and its size.
public struct PlacedValue: Sendable, Equatable {
    public var id: Value.ID
    public var isUpdate: Bool
    /// How many bytes the value holds (decoded).
    public var size: Int64
    /// Where its stored bytes are; `versionId` is the version being added.
    public var location: RecordLocation
    /// The sender's prune released the bytes: the value keeps its place and size, and reads as released.
    public var isReleased: Bool

    public init(id: Value.ID, isUpdate: Bool, size: Int64, location: RecordLocation, isReleased: Bool = false) {
        self.id = id
        self.isUpdate = isUpdate
        self.size = size
        self.location = location
        self.isReleased = isReleased
    }
}
