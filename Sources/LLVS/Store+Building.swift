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
    private var edits: [Value.ID: Edit] = [:]
    /// Values being compressed (`write`), and where those that were appended since went.
    private let pipeline = CompressionPipeline()
    private var appended: [Int: RecordLocation] = [:]
    /// Bytes of value data given since the last commit.
    public private(set) var pendingBytes: Int64 = 0
    /// Values set or removed since the last commit.
    public var pendingCount: Int { edits.count }

    /// What a value becomes in the next commit: data written (perhaps still compressing), a value of an earlier
    /// version, or removed.
    private enum Edit {
        case written(WrittenData)
        case removed
    }

    /// Data given to storage and not yet given an ID (see `write` and `set`).
    public struct WrittenData: Sendable {
        fileprivate let ticket: Int
        /// How many bytes the data holds.
        public let count: Int64
    }

    init(store: Store, base: Version.ID?) throws {
        self.store = store
        self.base = base
        let stored = try base.map { try store.storedVersion($0) }
        baseRoot = stored?.mapRoot
        baseCount = stored?.valueCount ?? 0
        versionId = .random()
    }

    deinit {
        _ = pipeline.drain()
        writer?.discard()
    }

    private func openWriter() throws -> any VersionWriter {
        if let writer { return writer }
        let made = try store.storage.makeVersionWriter(for: versionId)
        writer = made
        return made
    }

    /// Whether the value is in the version being built (given since the last commit, or already in the base).
    public func contains(_ id: Value.ID) throws -> Bool {
        if let edit = edits[id] {
            if case .removed = edit { return false }
            return true
        }
        return try store.map.entry(for: id, root: baseRoot) != nil
    }

    /// A value of the base version (what was committed before this builder's pending edits).
    public func baseValue(id: Value.ID) throws -> Value? {
        guard let entry = try store.map.entry(for: id, root: baseRoot) else { return nil }
        return try store.value(for: entry)
    }

    /// Gives data to storage without naming it yet: a caller that may still decide against it (a file that changed
    /// while it was read) gives it an ID with `set` only once it is sure. Unnamed data is dropped at the commit.
    /// The data is compressed on another thread while the caller goes on, and appended by a later call.
    public func write(_ data: Data) throws -> WrittenData {
        let (ticket, finished) = pipeline.submit(data)
        try append(finished)
        return WrittenData(ticket: ticket, count: Int64(data.count))
    }

    private func append(_ finished: [(ticket: Int, record: StoredRecord)]) throws {
        guard !finished.isEmpty else { return }
        let writer = try openWriter()
        for (ticket, record) in finished { appended[ticket] = try writer.append(record, zone: .values) }
    }

    /// Names written data: the value `id` holds it in the next commit.
    public func set(_ id: Value.ID, to written: WrittenData) {
        if case .written(let previous) = edits[id] { pendingBytes -= previous.count }
        edits[id] = .written(written)
        pendingBytes += written.count
    }

    /// Writes a value (insert or update).
    public func put(_ id: Value.ID, _ data: Data) throws {
        set(id, to: try write(data))
    }

    /// Removes a value from the version being built (nothing when it has none).
    public func remove(_ id: Value.ID) throws {
        if case .written(let previous) = edits[id] { pendingBytes -= previous.count }
        if try store.map.entry(for: id, root: baseRoot) != nil { edits[id] = .removed } else { edits[id] = nil }
    }

    /// Makes everything given since the last commit one version on top of `base`, and starts the next on top of it.
    /// Nil (nothing written) when nothing was given.
    @discardableResult
    public func commit(metadata: Version.Metadata = [:]) throws -> Version? {
        guard !edits.isEmpty else { return nil }
        try append(pipeline.drain())
        let writer = try openWriter()
        self.writer = nil
        let version = Version(
            id: versionId, predecessors: base.map { Version.Predecessors(idOfFirst: $0) },
            timestamp: Date().timeIntervalSinceReferenceDate, valueDataSize: pendingBytes, metadata: metadata)
        var mapEdits: [MapEdit] = []
        for (id, edit) in edits {
            switch edit {
            case .removed: mapEdits += MapEdit.edits(id, entry: nil)
            case .written(let written):
                guard let location = appended[written.ticket] else {
                    writer.discard()
                    throw StoreError.invalidChanges(versionId, reason: "value \(id) names data of another version")
                }
                mapEdits += MapEdit.edits(id, entry: MapEntry(valueId: id, data: location, size: written.count))
            }
        }
        try store.commitWritten(version, edits: mapEdits, base: baseRoot, baseCount: baseCount, writer: writer)
        let stored = try store.storedVersion(version.id)
        base = version.id
        baseRoot = stored.mapRoot
        baseCount = stored.valueCount
        versionId = .random()
        edits = [:]
        appended = [:]
        pendingBytes = 0
        return version
    }

    /// Drops everything given since the last commit.
    public func discard() {
        _ = pipeline.drain()
        appended = [:]
        writer?.discard()
        writer = nil
        edits = [:]
        pendingBytes = 0
        versionId = .random()
    }
}
