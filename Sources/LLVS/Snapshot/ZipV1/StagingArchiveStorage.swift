import Foundation
import LLVSSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A storage that writes every committed version straight into one `llvs-bundles-v1` archive file, and reads
/// records back from it. Importing another layout (an LLVS app's zip-v1 snapshot) goes through a staging store
/// on it, so the store's own commit and map code builds each version, and the real store then restores the whole
/// archive at once: one pack file for FileStorage, one transaction for SQLite, instead of one synced file per version.
final class StagingArchiveStorage: Storage {
    let kind = "staging"
    let path: String
    private let fd: Int32
    private let state = Mutex(State())

    struct State {
        /// Where each version's bundle starts in the file.
        var bundleStarts: [Version.ID: Int64] = [:]
        var end: Int64 = 0
        var count = 0
        var fresh: [StoredVersion] = []
        /// Every committed version's header, in the archive's order, and where its bundle lies.
        var headers: [StoredVersion] = []
        var entries: [SnapshotArchiveReader.Entry] = []
        /// The writer of the version being built, whose buffered records a read must see.
        weak var writing: StagingVersionWriter?
    }

    /// Bytes written at the file's end and not yet passed to it: versions are committed one after another, each a
    /// few KiB, and a write call for each was the largest system cost of an import.
    private struct Tail {
        /// Where the buffered bytes belong in the file (the file holds everything before).
        var start: Int64 = 0
        var bytes: [UInt8] = []
    }
    private let tail = Mutex(Tail())
    private static let tailLimit = 1 << 20

    init(path: String) throws {
        self.path = path
        fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw POSIX.fail(path, "create") }
        try write(SnapshotArchive.header, at: 0)
        state.withLock { $0.end = Int64(SnapshotArchive.header.count) }
    }

    deinit { close(fd) }

    /// Writes `bytes` at `offset`: buffered when they continue what is buffered (the usual case, one version's bundle
    /// after another), else written through after the buffer.
    func write(_ bytes: [UInt8], at offset: Int64) throws {
        try write([bytes], at: offset)
    }

    /// Writes `pieces` one after another from `offset` (a bundle's length and its bytes, without joining them first).
    func write(_ pieces: [[UInt8]], at offset: Int64) throws {
        let count = pieces.reduce(0) { $0 + $1.count }
        try tail.withLock { tail in
            if offset == tail.start + Int64(tail.bytes.count), tail.bytes.count + count <= Self.tailLimit {
                for piece in pieces { tail.bytes += piece }
                return
            }
            let bytes = pieces.count == 1 ? pieces[0] : Array(pieces.joined())
            try flush(&tail)
            if offset == tail.start, bytes.count < Self.tailLimit {
                tail.bytes = bytes
            } else {
                try writeThrough(bytes, at: offset)
                tail.start = max(tail.start, offset + Int64(bytes.count))
            }
        }
    }

    /// Passes the buffered bytes to the file.
    private func flush(_ tail: inout Tail) throws {
        guard !tail.bytes.isEmpty else { return }
        try writeThrough(tail.bytes, at: tail.start)
        tail.start += Int64(tail.bytes.count)
        tail.bytes.removeAll(keepingCapacity: true)
    }

    private func writeThrough(_ bytes: [UInt8], at offset: Int64) throws {
        try bytes.withUnsafeBytes { try POSIX.write($0, at: offset, to: fd, path: path) }
    }

    func read(at offset: Int64, count: Int) throws -> Data {
        // Bytes still buffered are read from the buffer (wholly there) or after passing it to the file (partly).
        let buffered = try tail.withLock { tail -> Data? in
            let tailEnd = tail.start + Int64(tail.bytes.count)
            guard offset + Int64(count) > tail.start, offset < tailEnd else { return nil }
            if offset >= tail.start, offset + Int64(count) <= tailEnd {
                let from = Int(offset - tail.start)
                return Data(tail.bytes[from..<(from + count)])
            }
            try flush(&tail)
            return nil
        }
        if let buffered { return buffered }
        return try POSIX.read(count, at: offset, from: fd, path: path)
    }

    func newlyCommittedVersions() throws -> [StoredVersion] {
        state.withLock { state in
            defer { state.fresh = [] }
            return state.fresh
        }
    }

    func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter {
        try state.withLock { state in
            guard state.bundleStarts[id] == nil else { throw StoreError.versionAlreadyExists(id) }
            // The bundle's length goes in front of it, written when the bundle is done.
            let start = state.end + 8
            state.bundleStarts[id] = start
            let writer = StagingVersionWriter(storage: self, versionId: id, lengthOffset: state.end)
            state.writing = writer
            return writer
        }
    }

    func readStoredRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [StoredRecord] {
        try locations.map { try readStoredRecord(at: $0, zone: zone) }
    }

    func copyStoredRecord(
        at location: RecordLocation, zone: StorageZone, into write: (RecordEncoding, Data) throws -> Void
    ) throws {
        let record = try readStoredRecord(at: location, zone: zone)
        try write(record.encoding, record.bytes)
    }

    /// A staging archive lives for one import and is thrown away after it; nothing it holds is ever pruned, so a
    /// release here is a caller's mistake, said as such.
    func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64 {
        throw StoreError.releaseUnsupported(storage: kind)
    }

    private func readStoredRecord(at location: RecordLocation, zone: StorageZone) throws -> StoredRecord {
        let (start, writing) = state.withLock { ($0.bundleStarts[location.versionId], $0.writing) }
        guard let start else { throw StoreError.versionNotFound(location.versionId) }
        if let writing, writing.versionId == location.versionId { try writing.flush() }
        let framed = try read(at: start + location.offset, count: RecordFraming.recordHeaderSize + Int(location.length))
        return try RecordFraming.unframe(
            framed, expectedLength: location.length, zone: zone, path: path, offset: start + location.offset)
    }

    fileprivate func committed(_ header: StoredVersion, start: Int64, end: Int64) {
        state.withLock { state in
            state.end = end
            state.count += 1
            state.fresh.append(header)
            state.headers.append(header)
            state.entries.append(SnapshotArchiveReader.Entry(offset: start, length: end - start))
        }
    }

    fileprivate func abandoned(_ id: Version.ID) {
        state.withLock { _ = $0.bundleStarts.removeValue(forKey: id) }
    }

    /// Ends the archive (its end marker and count); returns the headers of its versions, in its order, which the
    /// store's own commit built and checked (so restoring it need not read them back), and where their bundles lie.
    func finish() throws -> (headers: [StoredVersion], entries: [SnapshotArchiveReader.Entry]) {
        let (end, count, headers, entries) = state.withLock { ($0.end, $0.count, $0.headers, $0.entries) }
        try write(SnapshotArchive.endMarker(count: count), at: end)
        try tail.withLock { try flush(&$0) }
        guard ftruncate(fd, off_t(end) + 16) == 0 else { throw POSIX.fail(path, "truncate") }
        return (headers, entries)
    }
}

/// Writes one version's bundle after the archive's end; nothing counts until `commit` writes its length in front.
/// Records are gathered in memory and written in large pieces: a version's map takes several small records, and an
/// import writes tens of thousands of versions, so a system call per record would cost more than the records.
final class StagingVersionWriter: VersionWriter {
    let storage: StagingArchiveStorage
    let versionId: Version.ID
    let lengthOffset: Int64
    /// The bundle's length so far, buffered bytes included.
    private var length: Int64 = 0
    private var pending: [UInt8] = []
    /// Whether any of the bundle reached the file before `commit` (else commit writes it whole, length first, at once).
    private var wroteAny = false
    private static let bufferLimit = 1 << 20

    init(storage: StagingArchiveStorage, versionId: Version.ID, lengthOffset: Int64) {
        self.storage = storage
        self.versionId = versionId
        self.lengthOffset = lengthOffset
    }

    /// Writes the buffered bytes to the file.
    func flush() throws {
        guard !pending.isEmpty else { return }
        try storage.write(pending, at: lengthOffset + 8 + length - Int64(pending.count))
        pending.removeAll(keepingCapacity: true)
        wroteAny = true
    }

    private func put(_ bytes: [UInt8]) throws {
        try flush()
        wroteAny = true
        try storage.write(bytes, at: lengthOffset + 8 + length)
        length += Int64(bytes.count)
    }

    func append(_ record: StoredRecord, zone: StorageZone) throws -> RecordLocation {
        let offset = length
        RecordFraming.appendFramed(record.bytes, zone: zone, encoding: record.encoding, to: &pending)
        length += Int64(RecordFraming.recordHeaderSize + record.bytes.count)
        if pending.count >= Self.bufferLimit { try flush() }
        return RecordLocation(versionId: versionId, offset: offset, length: Int64(record.bytes.count))
    }

    func append(
        contentsOf file: URL, zone: StorageZone, encoding: RecordEncoding, digest: DigestStream?
    ) throws -> RecordLocation {
        let input = try ReadableFile(path: file.path)
        guard input.size <= Int64(UInt32.max) else {
            throw StoreError.invalidChanges(
                versionId, reason: "\(file.path) is \(input.size) bytes; a value holds at most 4 GiB")
        }
        try flush()
        let start = length
        var crc = CRC32.Running()
        try put([UInt8](repeating: 0, count: RecordFraming.recordHeaderSize))
        var offset: Int64 = 0
        while offset < input.size {
            let piece = try input.read(at: offset, count: Int(min(Int64(1 << 20), input.size - offset)))
            crc.update(piece)
            digest?.update(piece)
            try put([UInt8](piece))
            offset += Int64(piece.count)
        }
        var frame = ByteWriter()
        frame.byte(RecordFraming.tag(zone, encoding))
        frame.uint32(UInt32(input.size))
        frame.uint32(crc.value)
        try storage.write(frame.bytes, at: lengthOffset + 8 + start)
        return RecordLocation(versionId: versionId, offset: start, length: input.size)
    }

    func commit(_ header: StoredVersion) throws {
        let encoded = header.encoded()
        let trailer = RecordFraming.trailer(
            headerLength: encoded.count, headerCRC: encoded.withUnsafeBytes { CRC32.checksum($0) })
        pending += encoded
        pending += trailer
        length += Int64(encoded.count + trailer.count)
        var prefix = ByteWriter()
        prefix.uint64(UInt64(length))
        if wroteAny {
            try flush()
            try storage.write(prefix.bytes, at: lengthOffset)
        } else {
            // The usual case: the whole bundle is still in memory, so one write puts it and its length in place.
            try storage.write([prefix.bytes, pending], at: lengthOffset)
            pending.removeAll(keepingCapacity: true)
        }
        storage.committed(header, start: lengthOffset + 8, end: lengthOffset + 8 + length)
    }

    func discard() { storage.abandoned(versionId) }
}
