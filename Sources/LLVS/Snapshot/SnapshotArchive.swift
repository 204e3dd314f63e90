import Foundation
import LLVSSupport

/// The bytes of a snapshot (format `llvs-bundles-v1`): a marker, then each version's bundle with its length,
/// predecessors before successors, then an end marker with the count.
///
///     "LLVSSNAP" version:u32=1  (length:u64 bundle)*  length:u64=0  count:u64
///
/// Both storages write and read it, so a snapshot from a FileStorage store can start an SQLite store and the reverse.
public enum SnapshotArchive {
    public static let format = "llvs-bundles-v1"
    /// The same archive, of a store some of whose value records a prune released: the list of those records goes
    /// beside it (`ReleasedRecordList.snapshotEncoding`), so the store restored from it knows them as released, not
    /// damaged. Builds before it skip such a snapshot (a format they do not read) and pull every version instead.
    public static let formatWithReleased = "llvs-bundles-v2"
    static let magic = Array("LLVSSNAP".utf8)
    static let formatVersion: UInt32 = 1

    /// The first 12 bytes: the marker and the format version.
    static var header: [UInt8] {
        var writer = ByteWriter()
        writer.uint32(formatVersion)
        return magic + writer.bytes
    }

    /// The last 16 bytes of an archive of `count` bundles: a zero length, then the count (little-endian).
    static func endMarker(count: Int) -> [UInt8] {
        var writer = ByteWriter()
        writer.uint64(0)
        writer.uint64(UInt64(count))
        return writer.bytes
    }

    /// Checks an archive's first 12 bytes: the marker, then a format version this build reads.
    static func checkHeader(of file: ReadableFile, corrupt: (String) -> StoreError) throws {
        guard file.size >= 12, Array(try file.read(at: 0, count: 8)) == magic else {
            throw corrupt("it is not an LLVS snapshot")
        }
        var reader = ByteReader(try file.read(at: 8, count: 4))
        let version = try reader.uint32()
        guard version == formatVersion else {
            throw corrupt("snapshot archive version \(version) is not readable by this build")
        }
    }
}

/// Writes an archive to a local file, hashing it on the way.
public final class SnapshotArchiveWriter {
    private let file: AtomicFileWriter
    private let hash = DigestStream(.sha256)
    public private(set) var bundleCount = 0

    init(destination: URL) throws {
        file = try AtomicFileWriter(destination: destination.path)
        try put(Data(SnapshotArchive.header))
    }

    private func put(_ data: Data) throws {
        hash.update(data)
        try file.write(data)
    }

    private func length(_ value: UInt64) -> Data {
        var writer = ByteWriter()
        writer.uint64(value)
        return Data(writer.bytes)
    }

    /// Adds one version's bundle held in memory.
    public func append(bundle: Data) throws {
        try put(length(UInt64(bundle.count)))
        try put(bundle)
        bundleCount += 1
    }

    /// Adds one version's bundle from part of a file, copied in pieces.
    func append(bundleFrom file: ReadableFile, offset start: Int64, length: Int64) throws {
        try put(self.length(UInt64(length)))
        var done: Int64 = 0
        while done < length {
            let count = Int(min(Int64(1 << 20), length - done))
            try put(try file.read(at: start + done, count: count))
            done += Int64(count)
        }
        bundleCount += 1
    }

    /// Adds one version's bundle of `length` bytes that `write` gives in pieces, each handed to `put`.
    func append(bundleOfLength length: Int64, _ write: ((Data) throws -> Void) throws -> Void) throws {
        try put(self.length(UInt64(length)))
        var written: Int64 = 0
        try write { piece in
            try put(piece)
            written += Int64(piece.count)
        }
        guard written == length else {
            throw StoreError.corruptFile(
                path: file.destination, reason: "a bundle of \(length) bytes came out as \(written)")
        }
        bundleCount += 1
    }

    /// Ends the archive and moves it into place; returns its size and SHA-256.
    func finish() throws -> (size: Int64, sha256: String) {
        try put(Data(SnapshotArchive.endMarker(count: bundleCount)))
        let size = file.bytesWritten
        try file.commit(durable: false)
        return (size, hash.finalizeHex())
    }

    func discard() { file.discard() }
}

/// Reads an archive from a local file: where each bundle lies, so storages can copy or decode them.
public struct SnapshotArchiveReader {
    public struct Entry {
        /// Where the bundle's bytes start in the archive, and how many there are.
        public var offset: Int64
        public var length: Int64
    }

    let file: ReadableFile
    public let entries: [Entry]

    /// Opens an archive whose bundles' places are already known (its writer in this process kept them): only the
    /// header and the end marker are read, not every bundle's length prefix (10,000 small reads for 10,000 versions).
    init(url: URL, entries: [Entry]) throws {
        let file = try ReadableFile(path: url.path)
        func corrupt(_ reason: String) -> StoreError { .corruptFile(path: url.path, reason: reason) }
        let end = (entries.last.map { $0.offset + $0.length } ?? 12) + 8
        try SnapshotArchive.checkHeader(of: file, corrupt: corrupt)
        guard file.size == end + 8,
            try file.read(at: end - 8, count: 16) == Data(SnapshotArchive.endMarker(count: entries.count))
        else {
            throw corrupt("the snapshot's end marker does not match its \(entries.count) versions")
        }
        self.file = file
        self.entries = entries
    }

    /// The same archive at another path (moved or copied there whole), its bundles where they were.
    func reopened(at url: URL) throws -> SnapshotArchiveReader {
        try SnapshotArchiveReader(url: url, entries: entries)
    }

    public init(url: URL) throws {
        let file = try ReadableFile(path: url.path)
        let path = url.path
        func corrupt(_ reason: String) -> StoreError { .corruptFile(path: path, reason: reason) }
        func number(at offset: Int64) throws -> UInt64 {
            let bytes = try file.read(at: offset, count: 8)
            return bytes.reversed().reduce(0) { $0 << 8 | UInt64($1) }
        }
        try SnapshotArchive.checkHeader(of: file, corrupt: corrupt)
        var found: [Entry] = []
        var offset: Int64 = 12
        while true {
            guard offset + 8 <= file.size else { throw corrupt("the snapshot ends without its end marker") }
            let length = try number(at: offset)
            offset += 8
            if length == 0 { break }
            guard length <= UInt64(file.size - offset) else {
                throw corrupt("a version of \(length) bytes runs past the end of the snapshot")
            }
            found.append(Entry(offset: offset, length: Int64(length)))
            offset += Int64(length)
        }
        guard offset + 8 == file.size, try number(at: offset) == UInt64(found.count) else {
            throw corrupt("the snapshot's end marker does not match its \(found.count) versions")
        }
        self.file = file
        self.entries = found
    }

    /// The bytes of one bundle.
    public func bundle(_ entry: Entry) throws -> Data {
        try file.read(at: entry.offset, count: Int(entry.length))
    }

    /// The header of one bundle, read from its end without reading its records.
    public func header(_ entry: Entry) throws -> StoredVersion {
        try VersionBundle.readHeader(size: entry.length, source: "\(file.path) at offset \(entry.offset)") {
            offset, count in
            try file.read(at: entry.offset + offset, count: count)
        }.0
    }

    /// Copies the whole archive into `writer`, in pieces.
    func copyAll(to writer: AtomicFileWriter) throws {
        var done: Int64 = 0
        while done < file.size {
            let count = Int(min(Int64(1 << 20), file.size - done))
            try writer.write(try file.read(at: done, count: count))
            done += Int64(count)
        }
    }
}

/// Storage that can copy out all its versions as a snapshot and fill itself from one.
public protocol SnapshotCapable: Storage {
    /// Writes the bundles of `versions`, in the order given (predecessors first), to `archive`. `released` are the
    /// value records of those versions a prune released (`ReleasedRecordList`): each keeps its place in its bundle,
    /// as zeros, as a file store's bundle keeps it.
    func writeBundles(
        of versions: [Version.ID], to archive: SnapshotArchiveWriter, released: Set<RecordLocation>)
        throws
    /// Fills this storage, which holds no versions, from `archive`: all of it, or nothing on failure.
    /// `checkedHeaders`, the archive's headers in its order, are given by whoever built the archive in this process
    /// and checked it (a zip-v1 import's staging); nil reads and checks them. With `takingOver` the storage may move
    /// the archive's file into itself instead of copying it (the caller no longer needs it). `released`: records the
    /// archive holds as zeros (its writer's prune released them), which are taken as released, not as damage.
    func restoreBundles(
        from archive: SnapshotArchiveReader, checkedHeaders: [StoredVersion]?, takingOver: Bool,
        released: Set<RecordLocation>
    ) throws
}

extension SnapshotCapable {
    /// Fills this storage, which holds no versions, from an archive received from elsewhere: every header checked.
    public func restoreBundles(from archive: SnapshotArchiveReader, released: Set<RecordLocation> = []) throws {
        try restoreBundles(from: archive, checkedHeaders: nil, takingOver: false, released: released)
    }

    /// Writes the bundles of versions none of whose records were released.
    public func writeBundles(of versions: [Version.ID], to archive: SnapshotArchiveWriter) throws {
        try writeBundles(of: versions, to: archive, released: [])
    }

    /// Checks that the archive's versions form a closed history (every predecessor included) before restoring.
    public func checkedHeaders(of archive: SnapshotArchiveReader) throws -> [StoredVersion] {
        let headers = try archive.entries.map(archive.header)
        var history = History()
        let stranded = try history.add(unordered: headers.map(\.version))
        if let version = stranded.first {
            throw StoreError.corruptFile(
                path: archive.file.path, reason: "version \(version.id) in the snapshot lacks a predecessor")
        }
        return headers
    }
}
