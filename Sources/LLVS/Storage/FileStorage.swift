import Foundation
import LLVSCodecs
import LLVSSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The default storage: one immutable file per version under `versions/`, written through a temporary name and
/// linked into place, so a version appears whole or not at all and any number of processes can share the folder.
/// A restored snapshot is kept as one pack file under `packs/` (the snapshot archive itself), and versions received
/// in bulk are appended to packs of a few hundred (`FileStorage+Grouping`), so starting a store from thousands of
/// versions writes a few files, not thousands.
///
/// Version files are named by the SHA-256 of the version ID (IDs from a remote may hold any character) and spread
/// over 256 sub-folders so no folder grows huge.
public final class FileStorage: Storage {
    public let kind = "file"
    public let versionsPath: String
    public let packsPath: String
    /// Version files and packs already returned by `newlyCommittedVersions`.
    let loadedNames = Mutex<Set<String>>([])
    /// Versions that live in packs: which pack, and where in it.
    let packed = Mutex<[Version.ID: PackedVersion]>([:])
    /// Headers of a pack this process restored, handed out by the next `newlyCommittedVersions`.
    let restoredHeaders = Mutex<[StoredVersion]>([])
    /// Open version files.
    private let openFiles = OpenFileCache<Version.ID>(limit: 256)
    static let packExtension = ".pack"
    /// Versions whose records a compaction moved into a compacted pack (`FileStorage+Compaction`): read from there
    /// before anywhere else.
    let compacted = Mutex<[Version.ID: CompactedVersion]>([:])
    /// Version files and packs whose versions a compacted pack holds, left by a compaction that ended before it
    /// removed them; the next compaction removes them.
    let stale = Mutex<Set<String>>([])
    let mapFrames = MapFrameCache(limit: 8 << 20)
    static let compactedPackExtension = ".cpack"
    /// How deep the nested groups of commits are, and the pack their versions go to (`FileStorage+Grouping`).
    let grouped = Mutex(GroupedCommits())
    let groupPack = Mutex<GroupPack?>(nil)

    /// Where a packed version's bundle lies: the pack's path (opened through `packFile`), and where in it.
    struct PackedVersion: Sendable {
        let pack: String
        let offset: Int64
        let length: Int64
    }
    /// Open packs: a store synced often holds a pack per sync that received versions, more than a process may keep open.
    private let openPacks = OpenFileCache<String>(limit: FileStorage.openPackLimit)
    private static let openPackLimit = 64

    public init(storeRoot: String) throws {
        versionsPath = storeRoot + "/versions"
        packsPath = storeRoot + "/packs"
        try POSIX.makeDirectories(versionsPath)
        try POSIX.makeDirectories(packsPath)
        for folder in try POSIX.listNames(versionsPath) where folder.count == 2 {
            try removeAbandonedTemporaryFiles(in: versionsPath + "/" + folder)
        }
        try removeAbandonedTemporaryFiles(in: packsPath)
    }

    func path(for id: Version.ID) -> String {
        let name = SHA256.hexString(SHA256.digest(id.rawValue))
        return versionsPath + "/" + name.prefix(2) + "/" + name
    }

    public func newlyCommittedVersions() throws -> [StoredVersion] {
        let known = loadedNames.withLock { $0 }
        var loaded = restoredHeaders.withLock { headers in
            defer { headers = [] }
            return headers
        }
        // Compacted packs first: a version file or pack a compaction left behind is then known to be stale.
        loaded += try loadCompactedPacks()
        var newNames: [String] = []
        for folder in try POSIX.listNames(versionsPath) where folder.count == 2 {
            for name in try POSIX.listNames(versionsPath + "/" + folder) where !known.contains(name) {
                let path = versionsPath + "/" + folder + "/" + name
                let file: ReadableFile
                do { file = try ReadableFile(path: path) } catch FileError.io(_, _, let code) where code == ENOENT {
                    continue  // compacted by another process since the listing
                }
                let header = try RecordFraming.readHeader(of: file)
                guard self.path(for: header.version.id) == path else {
                    throw StoreError.corruptFile(
                        path: path, reason: "it holds version \(header.version.id), whose file name differs")
                }
                newNames.append(name)
                if isCompacted(header.version.id) {
                    stale.withLock { _ = $0.insert(path) }
                    continue
                }
                loaded.append(header)
            }
        }
        for name in try POSIX.listNames(packsPath)
        where name.hasSuffix(Self.packExtension) && !name.hasSuffix(Self.compactedPackExtension)
            && !known.contains(name)
        {
            let path = packsPath + "/" + name
            let reader: SnapshotArchiveReader
            do { reader = try SnapshotArchiveReader(url: URL(fileURLWithPath: path)) } catch FileError.io(
                _, _, let code) where code == ENOENT
            {
                continue
            }
            let headers = try register(pack: reader)
            newNames.append(name)
            let fresh = headers.filter { !isCompacted($0.version.id) }
            if fresh.isEmpty, !headers.isEmpty { stale.withLock { _ = $0.insert(path) } }
            loaded.append(contentsOf: fresh)
        }
        loadedNames.withLock { $0.formUnion(newNames) }
        return loaded
    }

    /// Makes a version of a pack being written (a group's, `FileStorage+Grouping`) readable in this process.
    func registerPacked(_ id: Version.ID, inPackAt path: String, offset: Int64, length: Int64) {
        packed.withLock { $0[id] = PackedVersion(pack: path, offset: offset, length: length) }
    }

    /// Links a version's finished file into place, durably; a version whose file is there already is
    /// `versionAlreadyExists` (the link never replaces it).
    static func placeVersionFile(_ file: AtomicFileWriter, _ id: Version.ID) throws {
        do {
            try file.commit(replacing: false)
        } catch FileError.io(_, _, let code) where code == EEXIST {
            throw StoreError.versionAlreadyExists(id)
        }
    }

    /// How many packs are open now (never more than `openPackLimit`).
    var openPackCount: Int { openPacks.count }

    /// The open pack at `path`. Opened as a file that may still grow (a group's pack is read while it is written);
    /// reads stay within a bundle's recorded bounds, and a pack shorter than those fails with `endedEarly`.
    private func packFile(_ path: String) throws -> ReadableFile {
        try openPacks.file(path) { try ReadableFile(appendedFileAt: path) }
    }

    /// Whether a version is in a pack (placed, or of the group being written).
    func isPacked(_ id: Version.ID) -> Bool { packed.withLock { $0[id] != nil } }

    /// Points a placed group pack's versions at its final name (the temporary one is gone). The file open under the
    /// temporary name is the same file, kept under both names: a reader that looked its version up just before
    /// still finds it open.
    func adoptPlacedPack(named name: String, from temporaryPath: String, versions: [Version.ID]) {
        let path = packsPath + "/" + name
        openPacks.alias(path, to: temporaryPath)
        packed.withLock { packed in
            for id in versions {
                if let old = packed[id] {
                    packed[id] = PackedVersion(pack: path, offset: old.offset, length: old.length)
                }
            }
        }
    }

    /// Marks a pack as known, so `newlyCommittedVersions` does not hand out its versions again.
    func markLoaded(_ name: String) { loadedNames.withLock { _ = $0.insert(name) } }

    /// Makes a pack's versions readable; returns their headers.
    private func register(pack: SnapshotArchiveReader, headers known: [StoredVersion]? = nil) throws -> [StoredVersion]
    {
        let headers = try known ?? pack.entries.map(pack.header)
        packed.withLock { packed in
            for (entry, header) in zip(pack.entries, headers) {
                packed[header.version.id] = PackedVersion(
                    pack: pack.file.path, offset: entry.offset, length: entry.length)
            }
        }
        return headers
    }

    public func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter {
        let path = path(for: id)
        if POSIX.fileExists(path) || packed.withLock({ $0[id] != nil }) || isCompacted(id) {
            throw StoreError.versionAlreadyExists(id)
        }
        if grouped.withLock({ $0.depth > 0 }) {
            return FileVersionWriter(versionId: id, output: .grouped(SpillingBundle(destination: path)), storage: self)
        }
        try POSIX.makeDirectories(POSIX.folderAndName(path).folder)
        return try FileVersionWriter(versionId: id, output: .file(AtomicFileWriter(destination: path)), storage: self)
    }

    /// Records that lie close together in one file (a version's values, read in the order they were written) are
    /// read with one request per run of them, up to `spanLimit` bytes, instead of one each (`readNearby`); a record
    /// alone is a run of one.
    public func readStoredRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [StoredRecord] {
        var results: [StoredRecord] = []
        results.reserveCapacity(locations.count)
        var start = 0
        while start < locations.count {
            let id = locations[start].versionId
            var end = start + 1
            while end < locations.count, locations[end].versionId == id { end += 1 }
            let run = locations[start..<end]
            switch try locate(id) {
            case .compacted(let version, let file):
                results += try readCompacted(run, of: version, file: file, zone: zone)
            case .bundle(let file, let base, let limit):
                results += try readNearby(run, in: file, zone: zone) {
                    try Self.frameStart(of: $0, base: base, limit: limit, file: file)
                }
            }
            start = end
        }
        return results
    }

    /// Bytes of unwanted records a span may read through, and the longest span.
    static let spanGap: Int64 = 4096
    static let spanLimit: Int64 = 1 << 20

    /// The file that holds a version's bundle (its own file or a pack), where the bundle starts and ends in it;
    /// readers go through `locate`, which also finds compacted versions.
    func fileAndBase(of id: Version.ID) throws -> (file: ReadableFile, base: Int64, limit: Int64) {
        if let pack = packed.withLock({ $0[id] }) {
            return (try packFile(pack.pack), pack.offset, pack.offset + pack.length)
        }
        let file = try openFile(id)
        return (file, 0, file.size)
    }

    public func copyStoredRecord(
        at location: RecordLocation, zone: StorageZone, into write: (RecordEncoding, Data) throws -> Void
    ) throws {
        // Where the record's frame starts, in which file.
        let file: ReadableFile, start: Int64
        switch try locate(location.versionId) {
        case .compacted(let version, let pack):
            guard case .direct(let offset) = try version.record(at: location, zone: zone).placement else {
                let stored = try readCompacted([location], of: version, file: pack, zone: zone)[0]
                try write(stored.encoding, stored.bytes)
                return
            }
            (file, start) = (pack, offset)
        case .bundle(let bundleFile, let base, let limit):
            (file, start) = (bundleFile, try Self.frameStart(of: location, base: base, limit: limit, file: bundleFile))
        }
        let header = try file.read(at: start, count: RecordFraming.recordHeaderSize)
        var reader = ByteReader(header)
        let tag = try reader.byte(), length = Int64(try reader.uint32()), expectedCRC = try reader.uint32()
        guard let stored = RecordFraming.parse(tag: tag), stored.zone == zone, length == location.length else {
            throw StoreError.corruptFile(
                path: file.path,
                reason:
                    "record at offset \(start): tag \(tag), length \(length), expected zone \(zone.rawValue), length \(location.length)"
            )
        }
        var crc = CRC32.Running()
        var done: Int64 = 0
        while done < length {
            let piece = try file.read(
                at: start + Int64(RecordFraming.recordHeaderSize) + done, count: Int(min(Int64(1 << 20), length - done))
            )
            crc.update(piece)
            try write(stored.encoding, piece)
            done += Int64(piece.count)
        }
        guard crc.value == expectedCRC else {
            throw StoreError.corruptFile(path: file.path, reason: "record at offset \(start): checksum mismatch")
        }
    }

    private func openFile(_ id: Version.ID) throws -> ReadableFile {
        try openFiles.file(id) { try ReadableFile(path: path(for: id)) }
    }

    /// Forgets open version files and packs a compaction removed, so their space is freed now.
    func closeRemoved(versions: [Version.ID], packs: [String]) {
        for id in versions { openFiles.remove(id) }
        for path in packs {
            openPacks.remove(path)
            mapFrames.forget(pack: path)
        }
    }

    /// The open compacted pack at `path`.
    func compactedPackFile(_ path: String) throws -> ReadableFile {
        try openPacks.file(path) { try ReadableFile(path: path) }
    }
}

extension FileStorage: SnapshotCapable {
    /// Bundles are copied as they lie: a released record is already zeros in its place.
    public func writeBundles(
        of versions: [Version.ID], to archive: SnapshotArchiveWriter, released: Set<RecordLocation>
    ) throws {
        // Version files and packs never change once written, so copying a fixed list of versions is a consistent
        // copy while other saves go on.
        for id in versions {
            switch try locate(id) {
            case .compacted(let version, let file): try writeBundle(of: version, in: file, to: archive)
            case .bundle(let file, let base, let limit):
                try archive.append(bundleFrom: file, offset: base, length: limit - base)
            }
        }
    }

    /// Copies the archive in as one pack (synced once), after checking that its versions form a closed history.
    /// The archive becomes a pack as it is; released records stay zeros in their places, as here.
    public func restoreBundles(
        from archive: SnapshotArchiveReader, checkedHeaders known: [StoredVersion]?, takingOver: Bool,
        released: Set<RecordLocation>
    ) throws {
        let headers = try known ?? checkedHeaders(of: archive)
        let hasVersions = try POSIX.listNames(versionsPath).contains {
            try !POSIX.listNames(versionsPath + "/" + $0).isEmpty
        }
        guard !hasVersions, try POSIX.listNames(packsPath).isEmpty, packed.withLock({ $0.isEmpty }) else {
            throw StoreError.storeNotEmpty(path: (versionsPath as NSString).deletingLastPathComponent)
        }
        let name = UUID.drawn().uuidString + Self.packExtension
        // An archive this process built in the store's own folder becomes the pack as it is: no copy.
        let movedIn = try takingOver && POSIX.moveDurably(archive.file.path, to: packsPath + "/" + name)
        if !movedIn {
            let writer = try AtomicFileWriter(destination: packsPath + "/" + name)
            do {
                try archive.copyAll(to: writer)
                try writer.commit(replacing: false)
            } catch {
                writer.discard()
                throw error
            }
        }
        // The same bytes, moved or copied whole: the bundles are where the archive's reader found them.
        let pack = try archive.reopened(at: URL(fileURLWithPath: packsPath + "/" + name))
        let registered = try register(pack: pack, headers: headers)
        loadedNames.withLock { _ = $0.insert(name) }
        restoredHeaders.withLock { $0.append(contentsOf: registered) }
    }
}

/// Streams one version's records into its temporary file (or, in a group, a buffer); `commit` appends the header
/// and links the file into place (or appends the bundle to the group's pack).
final class FileVersionWriter: VersionWriter {
    let versionId: Version.ID
    private let file: VersionBundleOutput
    private let storage: FileStorage

    init(versionId: Version.ID, output: VersionBundleOutput, storage: FileStorage) {
        self.versionId = versionId
        self.file = output
        self.storage = storage
    }

    func append(_ record: StoredRecord, zone: StorageZone) throws -> RecordLocation {
        let offset = file.bytesWritten
        try file.write(RecordFraming.frame(record.bytes, zone: zone, encoding: record.encoding))
        try file.write(record.bytes)
        return RecordLocation(versionId: versionId, offset: offset, length: Int64(record.bytes.count))
    }

    /// One pass over the file in 1 MiB pieces: the frame goes first with the checksum left open, the bytes follow,
    /// and the checksum of exactly those bytes is written into the frame after them. A file that changes meanwhile
    /// can then never leave a record whose checksum is not its own (the store also checks the file did not change).
    func append(
        contentsOf source: URL, zone: StorageZone, encoding: RecordEncoding, digest: DigestStream?
    ) throws -> RecordLocation {
        let input = try ReadableFile(path: source.path)
        guard input.size <= Int64(UInt32.max) else {
            throw StoreError.invalidChanges(
                versionId, reason: "\(source.path) is \(input.size) bytes; a value holds at most 4 GiB")
        }
        let start = file.bytesWritten
        var frame = ByteWriter()
        frame.byte(RecordFraming.tag(zone, encoding))
        frame.uint32(UInt32(input.size))
        frame.uint32(0)
        try file.write(frame.bytes)
        var crc = CRC32.Running()
        var offset: Int64 = 0
        while offset < input.size {
            let piece: Data
            do {
                piece = try input.read(at: offset, count: Int(min(Int64(1 << 20), input.size - offset)))
            } catch FileError.endedEarly {
                throw StoreError.sourceChanged(path: source.path)
            }
            crc.update(piece)
            digest?.update(piece)
            try file.write(piece)
            offset += Int64(piece.count)
        }
        var checksum = ByteWriter()
        checksum.uint32(crc.value)
        try file.overwrite(checksum.bytes, at: start + 5)
        return RecordLocation(versionId: versionId, offset: start, length: input.size)
    }

    /// The first MiB decides: a file whose first MiB does not compress by 1/32 is stored as it is (in one pass, as
    /// above); else the whole file is compressed as it is read, into one zstd frame, and the frame's length and
    /// checksum written in front of it afterwards.
    func appendValue(contentsOf source: URL, digest: DigestStream?) throws -> (RecordLocation, size: Int64) {
        let input = try ReadableFile(path: source.path)
        guard input.size <= Int64(UInt32.max) else {
            throw StoreError.invalidChanges(
                versionId, reason: "\(source.path) is \(input.size) bytes; a value holds at most 4 GiB")
        }
        func piece(at offset: Int64) throws -> Data {
            do {
                return try input.read(at: offset, count: Int(min(Int64(1 << 20), input.size - offset)))
            } catch FileError.endedEarly {
                throw StoreError.sourceChanged(path: source.path)
            }
        }
        let first = try piece(at: 0)
        guard Zstd.compressedIfSmaller(first) != nil else {
            return (try append(contentsOf: source, zone: .values, encoding: .plain, digest: digest), input.size)
        }
        let start = file.bytesWritten
        var frame = ByteWriter()
        frame.byte(RecordFraming.tag(.values, .zstd))
        frame.uint32(0)
        frame.uint32(0)
        try file.write(frame.bytes)
        var crc = CRC32.Running()
        var length: Int64 = 0
        let encoder = try ZstdStreamEncoder(size: input.size)
        let out: (Data) throws -> Void = { bytes in
            crc.update(bytes)
            length += Int64(bytes.count)
            try self.file.write(bytes)
        }
        var offset: Int64 = 0
        var next = first
        while offset < input.size {
            digest?.update(next)
            do { try encoder.feed(next, to: out) } catch let error as ZstdError {
                throw StoreError.invalidChanges(versionId, reason: "\(source.path) could not be compressed: \(error)")
            }
            offset += Int64(next.count)
            if offset < input.size { next = try piece(at: offset) }
        }
        do { try encoder.finish(to: out) } catch is ZstdError { throw StoreError.sourceChanged(path: source.path) }
        var fields = ByteWriter()
        fields.uint32(UInt32(length))
        fields.uint32(crc.value)
        try file.overwrite(fields.bytes, at: start + 1)
        return (RecordLocation(versionId: versionId, offset: start, length: length), input.size)
    }

    func commit(_ header: StoredVersion) throws {
        let encoded = header.encoded()
        try file.write(encoded)
        try file.write(
            RecordFraming.trailer(
                headerLength: encoded.count, headerCRC: encoded.withUnsafeBytes { CRC32.checksum($0) }))
        switch file {
        case .grouped(let bundle):
            try storage.appendToGroupPack(versionId, bundle: bundle)
        case .file(let file):
            try FileStorage.placeVersionFile(file, versionId)
        }
    }

    func discard() { file.discard() }
}
