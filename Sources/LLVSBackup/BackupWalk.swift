import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// Backs up one folder into a store as a tree of content-addressed objects, one folder at a time.
///
/// Each folder is listed, compared with the same folder of the previous backup (and of an interrupted one, when
/// resuming), and written as one listing; a file whose size, times and mode match its previous entry is not read.
/// Memory holds the folders on the current path and their entries, never the whole tree or the whole change.
/// New data goes to storage as it is read (`VersionBuilder`), and every `checkpointBytes` of it (or
/// `checkpointValues` values) is committed as a checkpoint version that records the partial tree, so a killed
/// backup's re-run reads again only what the last checkpoint did not hold, and sends only the versions after it.
public final class BackupWalk {
    public struct Options: Sendable {
        /// New data per checkpoint: what a killed backup may have to read and send again. Nil (the default): a
        /// 256th of the new data so far, from 32 MiB up to 256 MiB. An exchange sends several versions at once, so
        /// a kill loses the part-sent ones: keeping each a small share of the whole keeps that loss a small share,
        /// while a large backup does not make tens of thousands of versions. The floor is what a checkpoint costs:
        /// it rewrites the map paths of every value it adds and holds the walk while compression drains, so at
        /// 8 MiB a first backup spent a sixth of its time (and a few percent of the store) on checkpoints.
        public var checkpointBytes: Int64?
        /// New values per checkpoint: bounds the map edits held in memory.
        public var checkpointValues = 50_000
        /// What to leave out; nil: what the source's last backup left out (its record remembers it).
        public var exclusions: BackupExclusions?
        /// Walk and compare with the last backup, but read no file and store nothing: what a backup would read, keep
        /// and leave out (`filesRead` and `bytesRead` count what it would read).
        public var dryRun = false
        /// Called with a file's name once it is open and before it is read (tests change the file there).
        var afterOpening: (@Sendable ([UInt8]) -> Void)?
        public init() {}
    }

    /// What has been done so far, for a progress line.
    public struct Progress: Sendable {
        public var files = 0
        public var folders = 0
        /// Bytes read from files (changed or new ones; unchanged files are not read).
        public var bytesRead: Int64 = 0
        /// Bytes of data not in the store before.
        public var bytesStored: Int64 = 0
        public var checkpoints = 0
    }

    public struct Summary: Sendable {
        public var record: BackupSourceRecord
        /// The version that completed the backup; nil when nothing changed since the last one.
        public var version: Version?
        public var progress: Progress
        /// Files read (new or changed), and files taken from the previous backup unread.
        public var filesRead = 0
        public var filesUnchanged = 0
        /// Entries of the previous backup that are gone.
        public var removed = 0
        /// Entries left out by the exclusions.
        public var excluded = 0
        /// What was left out, one line each.
        public var warnings: [String] = []
    }

    /// Files at most this long are kept inside their folder's listing: a value of their own would cost more than
    /// their bytes (a map entry, a record, a line in the exchange), and most small files change with their folder.
    public static let embeddedLimit = 256
    /// Reads of one file before it counts as changing too fast to back up.
    public static let maximumReads = 3

    let builder: VersionBuilder
    let name: String
    let directory: LocalPath
    let options: Options
    let onCommit: (Version) async throws -> Void
    let onProgress: (Progress) -> Void
    let chunker = ContentDefinedChunker()
    private var progress = Progress()
    private var summary: Summary
    private var stack: [Frame] = []
    private var exclusions = BackupExclusions()
    private var rootDevice: dev_t?
    private var files = 0, folders = 0, links = 0
    private var totalBytes: Int64 = 0
    /// The first path met of each inode with several names (`hardLinkGroup`).
    private var hardLinks: [HardLinkKey: [UInt8]] = [:]
    private struct HardLinkKey: Hashable { var device: UInt64, inode: UInt64 }

    /// A folder being listed: its own entry (but its content) and the entries done so far, with the segments of them
    /// checkpoints have stored (`SegmentedListing`).
    private struct Frame {
        var entry: BackupTreeEntry?
        var entries: [BackupTreeEntry] = []
        var storedSegments: [ContentHash] = []
    }

    /// `onCommit` is given each committed version (checkpoints and the last) to make it current before the walk goes on.
    public init(
        builder: VersionBuilder, name: String, directory: LocalPath, options: Options = Options(),
        onCommit: @escaping (Version) async throws -> Void, onProgress: @escaping (Progress) -> Void = { _ in }
    ) {
        self.builder = builder
        self.name = name
        self.directory = directory
        self.options = options
        self.onCommit = onCommit
        self.onProgress = onProgress
        summary = Summary(
            record: BackupSourceRecord(
                name: name, path: RawName.encode(directory.bytes), root: ContentHash(of: Data()),
                files: 0, folders: 0, links: 0, bytes: 0, date: Date()),
            version: nil, progress: Progress())
    }

    /// Reads a listing stored in the base version: a whole one, or a checkpoint's segmented one joined.
    func tree(_ hash: ContentHash) throws -> BackupTree {
        let id = BackupObjectID.tree(hash)
        guard
            let data = try builder.baseValue(id: id)?.data
                ?? BackupObjectLookup(store: builder.store).elsewhere(id, hash: hash)
        else { throw BackupError.missingObject(id: id.rawValue) }
        if let segmented = try SegmentedListing(decoding: data, id: id.rawValue) {
            return try segmented.joined(id: id.rawValue) { segment in
                let segmentId = BackupObjectID.tree(segment)
                guard let part = try builder.baseValue(id: segmentId) else {
                    throw BackupError.missingObject(id: segmentId.rawValue)
                }
                return try BackupTree(decoding: part.data, id: segmentId.rawValue)
            }
        }
        return try BackupTree(decoding: data, id: id.rawValue)
    }

    /// Whether a prune waits for a backup of this source made on top of its first step: one that the base version
    /// descends from and the source's last backup does not. An unchanged backup then records itself anyway (a small
    /// version), since that is what lets the prune release.
    func prunesAwaitThisSource() throws -> Bool {
        let store = builder.store
        guard let base = builder.base,
            let last = try builder.baseValue(id: BackupObjectID.source(name))?.storedVersionId
        else { return false }
        return store.history.versions.values.contains { version in
            version.metadata[BackupMetadata.pruneCollection] != nil
                && (version.id == base || store.isAncestor(version.id, of: base))
                && version.id != last && !store.isAncestor(version.id, of: last)
        }
    }

    func record(_ id: Value.ID) throws -> BackupSourceRecord? {
        try builder.baseValue(id: id).map { try BackupSourceRecord(decoding: $0.data, id: id) }
    }

    public func run() async throws -> Summary {
        let previous = try record(BackupObjectID.source(name))
        exclusions = options.exclusions ?? previous?.exclusions ?? BackupExclusions()
        rootDevice = directory.lstat()?.st_dev
        let interrupted = try record(BackupObjectID.checkpoint(name))
        let previousRoot = try previous?.rootHash.map(tree)
        let interruptedRoot = try interrupted?.rootHash.map(tree)
        stack.append(Frame())
        let root = try await folder(
            directory, opened: { try OpenDirectory.open(directory) }, previous: previousRoot,
            interrupted: interruptedRoot)
        stack.removeAll()
        let record = BackupSourceRecord(
            name: name, path: RawName.encode(directory.bytes), root: root, files: files,
            folders: folders, links: links, bytes: totalBytes, date: Date(),
            exclusions: exclusions.isEmpty ? nil : exclusions)
        summary.record = record
        if options.dryRun {
            summary.progress = progress
            return summary
        }
        if previous?.root == record.root && previous?.exclusions == record.exclusions && interrupted == nil
            && builder.pendingCount == 0,
            try !prunesAwaitThisSource()
        {
            summary.progress = progress
            return summary
        }
        try put(BackupObjectID.source(name), try record.encoded())
        try builder.remove(BackupObjectID.checkpoint(name))
        var names = BackupSourceList.decode(try builder.baseValue(id: BackupObjectID.sources)?.data)
        if !names.contains(name) {
            names.append(name)
            try put(BackupObjectID.sources, BackupSourceList.encode(names))
        }
        if let version = try builder.commit(metadata: [BackupMetadata.completed: try Version.MetadataValue(name)]) {
            try await onCommit(version)
            summary.version = version
        }
        summary.progress = progress
        return summary
    }

    // MARK: Folders

    /// Backs up the folder's entries; returns the hash of its listing.
    private func folder(
        _ local: LocalPath, opened: () throws -> OpenDirectory, previous: BackupTree?, interrupted: BackupTree?
    ) async throws -> ContentHash {
        folders += 1
        progress.folders += 1
        let directory: OpenDirectory
        let names: [[UInt8]]
        do {
            directory = try opened()
            do { names = try directory.names() } catch { directory.close(); throw error }
        } catch {
            // The directory backed up itself must be readable: an empty backup of it would look like everything removed.
            if stack.count == 1 { throw error }
            summary.warnings.append(
                "\(local.display): cannot list it (\(error)); "
                    + (previous != nil ? "its last backup is kept" : "it is left empty"))
            return try store(previous ?? BackupTree(entries: []))
        }
        defer { directory.close() }
        var matched = 0
        let looks = FolderLook.take(
            names, in: directory, previous: previous, interrupted: interrupted, afterOpening: options.afterOpening)
        for (index, raw) in names.enumerated() {
            let before = previous?.entry(named: raw)
            if before != nil { matched += 1 }
            let resumed = interrupted?.entry(named: raw)
            guard let info = looks[index].status else { continue }  // gone since the listing
            if isExcluded(raw, at: local, info: info, in: directory) {
                if before != nil { matched -= 1 }
                summary.excluded += 1
                continue
            }
            var entry = BackupTreeEntry(
                name: raw, kind: .file, mode: UInt32(info.st_mode & 0o7777), size: 0,
                modified: Int64(info.st_mtim.tv_sec), modifiedNanoseconds: info.st_mtim.tv_nsec,
                content: .embedded(Data()))
            switch info.st_mode & S_IFMT {
            case S_IFDIR:
                // A store inside the tree (the one backed up into, say) keeps its own history: backed up, it would
                // grow by itself on every run.
                if directory.holdsStore(raw) {
                    summary.warnings.append(
                        "\(local.appending(raw).display): an LLVS store (stores keep their own history; never backed up)"
                    )
                    continue
                }
                entry.kind = .directory
                stack.append(Frame(entry: entry))
                func subtree(_ e: BackupTreeEntry?) throws -> BackupTree? {
                    guard let e, e.kind == .directory, case .tree(let hash) = e.content else { return nil }
                    return try tree(hash)
                }
                let hash = try await folder(
                    local.appending(raw), opened: { try directory.openFolder(raw) },
                    previous: try subtree(before), interrupted: try subtree(resumed))
                stack.removeLast()
                entry.content = .tree(hash)
            case S_IFLNK:
                guard let target = directory.linkTarget(raw) else {
                    summary.warnings.append("\(local.appending(raw).display): cannot read the link")
                    continue
                }
                entry.kind = .symlink
                entry.content = .link(target: target)
                links += 1
            case S_IFREG:
                entry.size = Int64(info.st_size)
                guard
                    let stored = try await file(
                        raw, in: directory, listed: info, entry: entry,
                        candidates: [resumed, before].compactMap { $0 },
                        read: looks[index].read)
                else { continue }
                entry = stored
                // Recomputed on every backup, even for an unchanged file: the first name met may be gone since.
                entry.hardLinkGroup = info.st_nlink > 1 ? hardLinkGroup(of: info, at: local.appending(raw)) : nil
                files += 1
                totalBytes += entry.size
                progress.files += 1
                onProgress(progress)
            case S_IFIFO, S_IFCHR, S_IFBLK:
                entry.kind =
                    switch info.st_mode & S_IFMT {
                    case S_IFIFO: .fifo
                    case S_IFCHR: .characterDevice
                    default: .blockDevice
                    }
                entry.content = .device(info.st_mode & S_IFMT == S_IFIFO ? 0 : UInt64(info.st_rdev))
                files += 1
            default:
                // A socket is an endpoint only the program serving it can make; tar and restic leave them out too.
                summary.warnings.append(
                    "\(local.appending(raw).display): a socket, which only the program serving it can make again; not backed up"
                )
                continue
            }
            entry.ownership = BackupTreeEntry.Ownership(user: info.st_uid, group: info.st_gid)
            // Read for every entry, unchanged ones too: setting an attribute or an ACL does not change a file's time.
            switch ExtendedAttributes.read(raw, in: directory.fd) {
            case .success(let attributes): entry.extendedAttributes = attributes
            case .failure(let failure):
                entry.extendedAttributes = []
                summary.warnings.append(
                    "\(local.appending(raw).display): cannot read its extended attributes (\(failure)); backed up without them"
                )
            }
            stack[stack.count - 1].entries.append(entry)
            if builder.pendingBytes >= checkpointThreshold || builder.pendingCount >= options.checkpointValues {
                try await checkpoint()
            }
        }
        summary.removed += (previous?.entries.count ?? 0) - matched
        return try store(BackupTree(entries: stack[stack.count - 1].entries))
    }

    /// The hard-link group of a file with several names: the path (from the source's root) of the first name of its
    /// inode this walk met. Only files with more than one name are remembered, so memory follows their number.
    private func hardLinkGroup(of info: stat, at path: LocalPath) -> [UInt8] {
        let key = HardLinkKey(device: UInt64(info.st_dev), inode: UInt64(info.st_ino))
        if let first = hardLinks[key] { return first }
        let relative = Array(path.bytes.dropFirst(directory.bytes.count + 1))
        hardLinks[key] = relative
        return relative
    }

    /// Whether an entry is left out (`BackupExclusions`): by its name or path, as a folder for what it holds or the
    /// file system it is on, as a file for its size.
    private func isExcluded(_ name: [UInt8], at folder: LocalPath, info: stat, in directory: OpenDirectory) -> Bool {
        guard !exclusions.isEmpty else { return false }
        let isFolder = info.st_mode & S_IFMT == S_IFDIR
        let relative = Array(folder.appending(name).bytes.dropFirst(self.directory.bytes.count))
        if exclusions.excludes(name: name, path: relative, isFolder: isFolder) { return true }
        if isFolder {
            if exclusions.oneFileSystem, let rootDevice, info.st_dev != rootDevice { return true }
            return exclusions.excludesFolder(name, in: directory)
        }
        if info.st_mode & S_IFMT == S_IFREG, let limit = exclusions.largerThan { return Int64(info.st_size) > limit }
        return false
    }

    /// New data after which the next checkpoint is due.
    private var checkpointThreshold: Int64 {
        options.checkpointBytes ?? min(max(progress.bytesStored / 256, 32 << 20), 256 << 20)
    }

    private func put(_ id: Value.ID, _ data: Data) throws {
        guard !options.dryRun else { return }
        try builder.put(id, data)
        progress.bytesStored += Int64(data.count)
    }

    /// Writes a listing unless the store has it; returns its hash.
    private func store(_ tree: BackupTree) throws -> ContentHash {
        let data = tree.encoded()
        let hash = ContentHash(of: data)
        let id = BackupObjectID.tree(hash)
        if try !builder.contains(id) { try put(id, data) }
        return hash
    }

    /// Commits what is written so far as a checkpoint: each folder on the current path gets a partial listing of
    /// the entries done, and the record of the interrupted backup points at the partial root.
    private func checkpoint() async throws {
        var child: BackupTreeEntry?
        for index in stack.indices.reversed() {
            let hash = try storePartial(frameAt: index, child: child)
            let frame = stack[index]
            guard var entry = frame.entry else {
                let record = BackupSourceRecord(
                    name: name, path: RawName.encode(directory.bytes), root: hash, files: files,
                    folders: folders, links: links, bytes: totalBytes, date: Date())
                try put(BackupObjectID.checkpoint(name), try record.encoded())
                break
            }
            entry.content = .tree(hash)
            child = entry
        }
        if let version = try builder.commit(metadata: [BackupMetadata.checkpoint: try Version.MetadataValue(name)]) {
            try await onCommit(version)
            progress.checkpoints += 1
        }
    }

    /// Stores the partial listing of a folder being walked (its entries so far, then `child`, the partial entry of the
    /// sub-folder in progress). A large folder's is segmented: each full segment is stored by the first checkpoint
    /// that fills it and named again by the later ones, so checkpoints cost the folder's entries once.
    private func storePartial(frameAt index: Int, child: BackupTreeEntry?) throws -> ContentHash {
        let entries = stack[index].entries
        let size = SegmentedListing.segmentSize
        guard entries.count + (child == nil ? 0 : 1) > size else {
            return try store(BackupTree(entries: entries + (child.map { [$0] } ?? [])))
        }
        let full = entries.count / size
        while stack[index].storedSegments.count < full {
            let start = stack[index].storedSegments.count * size
            stack[index].storedSegments.append(try store(BackupTree(entries: Array(entries[start..<start + size]))))
        }
        let rest = Array(entries[(full * size)...]) + (child.map { [$0] } ?? [])
        let segments = stack[index].storedSegments + (rest.isEmpty ? [] : [try store(BackupTree(entries: rest))])
        let data = SegmentedListing(segments: segments).encoded()
        let hash = ContentHash(of: data)
        let id = BackupObjectID.tree(hash)
        if try !builder.contains(id) { try put(id, data) }
        return hash
    }

    // MARK: Files

    /// The entry of a regular file: taken from a candidate (the interrupted backup's, then the previous one's) when
    /// size, time and mode match, read otherwise. Nil when the file is left out (reported in the warnings).
    private func file(
        _ name: [UInt8], in directory: OpenDirectory, listed: stat, entry: BackupTreeEntry,
        candidates: [BackupTreeEntry], read prefetched: SmallRead?
    ) async throws -> BackupTreeEntry? {
        if let same = candidates.first(where: { Self.isUnchanged($0, entry) }) {
            summary.filesUnchanged += 1
            return same
        }
        if options.dryRun {
            summary.filesRead += 1
            progress.bytesRead += entry.size
            return entry
        }
        let last = candidates.last { $0.kind == .file }
        let path = directory.path.appending(name)
        func vanished() -> BackupTreeEntry? {
            summary.warnings.append("\(path.display): it vanished while it was backed up; it is not in this backup")
            return nil
        }
        var listed = listed
        for attempt in 1...Self.maximumReads {
            if attempt > 1 {
                guard let again = directory.status(name) else { return vanished() }
                listed = again
            }
            let outcome: ReadOutcome
            if attempt == 1, let prefetched {
                outcome = prefetched.outcome(entry: entry, listed: listed)
                if case .stored = outcome { progress.bytesRead += entry.size }
            } else {
                outcome = try await read(name, in: directory, listed: listed, entry: entry)
            }
            switch outcome {
            case .stored(let stored):
                summary.filesRead += 1
                return stored
            case .vanished:
                return vanished()
            case .unreadable(let reason):
                summary.warnings.append(
                    "\(path.display): cannot read it (\(reason)); "
                        + (last != nil ? "its last backup is kept" : "it is not in this backup"))
                return last
            case .changed:
                continue
            }
        }
        summary.warnings.append(
            "\(path.display): it kept changing while it was read (\(Self.maximumReads) tries); "
                + (last != nil ? "its last backup is kept" : "it is not in this backup"))
        return last
    }

    enum ReadOutcome {
        case stored(BackupTreeEntry)
        case vanished
        case unreadable(String)
        case changed

        func counted(_ add: (Int64) -> Void) -> ReadOutcome {
            if case .stored(let entry) = self { add(entry.size) }
            return self
        }
    }

    static func isUnchanged(_ candidate: BackupTreeEntry, _ entry: BackupTreeEntry) -> Bool {
        candidate.kind == .file && candidate.size == entry.size && candidate.modified == entry.modified
            && candidate.modifiedNanoseconds == entry.modifiedNanoseconds && candidate.mode == entry.mode
    }

    /// Reads a file once: embedded when small, else cut into chunks, each new one written to storage but named only
    /// if the file is the one listed and looked the same after the read (inode, size, modification and change
    /// times), so a version never holds bytes other than the file's at one moment.
    private func read(
        _ name: [UInt8], in directory: OpenDirectory, listed: stat, entry: BackupTreeEntry
    ) async throws -> ReadOutcome {
        let fd = directory.openFile(name)
        guard fd >= 0 else {
            let code = errno
            if code == ENOENT { return .vanished }
            if code == ELOOP || code == ENXIO { return .changed }  // replaced by a link or a FIFO since it was listed
            return .unreadable(String(cString: strerror(code)))
        }
        defer { close(fd) }
        options.afterOpening?(name)
        let before = listed
        var result = entry
        result.size = Int64(before.st_size)
        result.modified = Int64(before.st_mtim.tv_sec)
        result.modifiedNanoseconds = before.st_mtim.tv_nsec
        result.mode = UInt32(before.st_mode & 0o7777)
        var total: Int64 = 0
        var written: [(Value.ID, VersionBuilder.WrittenData)] = []
        var named = Set<ContentHash>()
        do {
            if before.st_size <= Self.embeddedLimit {
                return SmallRead.read(fd, listed: before).outcome(entry: result, listed: before).counted {
                    progress.bytesRead += $0
                }
            } else {
                var hashes: [ContentHash] = []
                let reader = FileChunkReader(fd: fd, chunker: chunker)
                while try reader.next({ chunk in
                    total += Int64(chunk.count)
                    let hash = ContentHash(of: chunk)
                    hashes.append(hash)
                    let id = BackupObjectID.chunk(hash)
                    guard named.insert(hash).inserted, try !builder.contains(id) else { return }
                    written.append((id, try builder.write(Data(chunk))))
                }) {
                    // A large file checkpoints as it goes: its chunks so far are named (a chunk is valid on its own,
                    // whatever becomes of the file) and committed, so a re-run reads the file again but stores and
                    // sends only the chunks after them.
                    let unnamed = written.reduce(0) { $0 + $1.1.count }
                    if builder.pendingBytes + unnamed >= checkpointThreshold {
                        for (id, data) in written { builder.set(id, to: data) }
                        progress.bytesStored += unnamed
                        written = []
                        try await checkpoint()
                    }
                }
                result.content = .chunks(hashes)
            }
        } catch BackupError.readFailed(let code) {
            return .unreadable(String(cString: strerror(code)))
        }
        progress.bytesRead += total
        var after = stat()
        guard fstat(fd, &after) == 0, after.st_mode & S_IFMT == S_IFREG, after.st_ino == before.st_ino,
            after.st_dev == before.st_dev,
            total == Int64(before.st_size), after.st_size == before.st_size,
            after.st_mtim.tv_sec == before.st_mtim.tv_sec, after.st_mtim.tv_nsec == before.st_mtim.tv_nsec,
            after.st_ctim.tv_sec == before.st_ctim.tv_sec, after.st_ctim.tv_nsec == before.st_ctim.tv_nsec
        else { return .changed }
        for (id, data) in written {
            builder.set(id, to: data)
            progress.bytesStored += data.count
        }
        return .stored(result)
    }
}
