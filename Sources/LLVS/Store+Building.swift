import Foundation
import LLVSSupport

extension Store {
    /// Starts a version on top of `predecessor` (a root when nil) whose values are written as they are produced,
    /// for saves too large to hold in memory (a backup). See `VersionBuilder`.
    public func makeVersionBuilder(basedOn predecessor: Version.ID?) throws -> VersionBuilder {
        try VersionBuilder(store: self, base: predecessor)
    }

    /// Commits a version whose records `writer` already holds: applies the map edits to the base's map, writes the
    /// header and makes the version visible. On any failure the writer is discarded and nothing is visible.
    func commitWritten(
        _ version: Version, edits: [MapEdit], base: RecordLocation?, baseCount: Int,
        writer: any VersionWriter
    ) throws {
        do {
            let (root, countChange) = try map.apply(edits, to: base, writer: writer)
            let header = StoredVersion(version: version, mapRoot: root, valueCount: baseCount + countChange)
            try writer.commit(header)
            try state.withLock { state in
                try state.history.add(version)
                state.stored[version.id] = header
            }
        } catch {
            writer.discard()
            throw error
        }
    }
}

/// A version built value by value: each value's data goes to storage as soon as it is given (so memory holds only
/// the map edits, never the data), and `commit` makes everything given so far one version, then carries on with a
/// fresh version on top of it. A long save can so commit as it goes, and a process killed between commits leaves
/// every earlier commit whole and nothing of the rest.
///
/// One builder is used by one task at a time.
public final class VersionBuilder {
    public let store: Store
    /// The version the next commit is made on: the one given, then each commit's.
    public private(set) var base: Version.ID?
    private var baseRoot: RecordLocation?
    private var baseCount: Int
    private var versionId: Version.ID
    private var writer: (any VersionWriter)?
    private var edits: [Value.ID: MapEntry?] = [:]
    /// Bytes of value data given since the last commit.
    public private(set) var pendingBytes: Int64 = 0
    /// Values set or removed since the last commit.
    public var pendingCount: Int { edits.count }

    /// Data written to storage and not yet given an ID (see `write` and `set`).
    public struct WrittenData {
        fileprivate let location: RecordLocation
        /// How many bytes the data holds.
        public let count: Int64
        /// How many bytes storage keeps for it (fewer when it compressed).
        public var storedCount: Int64 { location.length }
    }

    init(store: Store, base: Version.ID?) throws {
        self.store = store
        self.base = base
        let stored = try base.map { try store.storedVersion($0) }
        baseRoot = stored?.mapRoot
        baseCount = stored?.valueCount ?? 0
        versionId = .random()
    }

    deinit { writer?.discard() }

    private func openWriter() throws -> any VersionWriter {
        if let writer { return writer }
        let made = try store.storage.makeVersionWriter(for: versionId)
        writer = made
        return made
    }

    /// Whether the value is in the version being built (given since the last commit, or already in the base).
    public func contains(_ id: Value.ID) throws -> Bool {
        if let edit = edits[id] { return edit != nil }
        return try store.map.entry(for: id, root: baseRoot) != nil
    }

    /// A value of the base version (what was committed before this builder's pending edits).
    public func baseValue(id: Value.ID) throws -> Value? {
        guard let entry = try store.map.entry(for: id, root: baseRoot) else { return nil }
        return try store.value(for: entry)
    }

    /// Writes data to storage without naming it yet: a caller that may still decide against it (a file that changed
    /// while it was read) gives it an ID with `set` only once it is sure. Unnamed data is dropped at the commit.
    public func write(_ data: Data) throws -> WrittenData {
        WrittenData(location: try openWriter().appendValue(data), count: Int64(data.count))
    }

    /// Names written data: the value `id` holds it in the next commit.
    public func set(_ id: Value.ID, to written: WrittenData) {
        if let previous = edits[id], let previous { pendingBytes -= previous.size }
        edits[id] = MapEntry(valueId: id, data: written.location, size: written.count)
        pendingBytes += written.count
    }

    /// Writes a value (insert or update).
    public func put(_ id: Value.ID, _ data: Data) throws {
        set(id, to: try write(data))
    }

    /// Removes a value from the version being built (nothing when it has none).
    public func remove(_ id: Value.ID) throws {
        if let edit = edits[id], let edit { pendingBytes -= edit.size }
        if try store.map.entry(for: id, root: baseRoot) != nil { edits[id] = .some(nil) } else { edits[id] = nil }
    }

    /// Makes everything given since the last commit one version on top of `base`, and starts the next on top of it.
    /// Nil (nothing written) when nothing was given.
    @discardableResult
    public func commit(metadata: Version.Metadata = [:]) throws -> Version? {
        guard !edits.isEmpty else { return nil }
        let writer = try openWriter()
        self.writer = nil
        let version = Version(
            id: versionId, predecessors: base.map { Version.Predecessors(idOfFirst: $0) },
            timestamp: Date().timeIntervalSinceReferenceDate, valueDataSize: pendingBytes, metadata: metadata)
        let mapEdits = edits.flatMap { MapEdit.edits($0.key, entry: $0.value) }
        try store.commitWritten(version, edits: mapEdits, base: baseRoot, baseCount: baseCount, writer: writer)
        let stored = try store.storedVersion(version.id)
        base = version.id
        baseRoot = stored.mapRoot
        baseCount = stored.valueCount
        versionId = .random()
        edits = [:]
        pendingBytes = 0
        return version
    }

    /// Drops everything given since the last commit.
    public func discard() {
        writer?.discard()
        writer = nil
        edits = [:]
        pendingBytes = 0
        versionId = .random()
    }
}
