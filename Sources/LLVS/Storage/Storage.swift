import Foundation
import LLVSCodecs
import LLVSSupport

/// Where a record (value data or a map node) is kept: the version whose writer stored it, and its place there.
/// Records never move or change once their version is committed, so a location is a permanent address.
public struct RecordLocation: Hashable, Sendable {
    /// The version whose record holds the bytes.
    public var versionId: Version.ID
    /// Where they start in that record's zone.
    public var offset: Int64
    /// How many bytes.
    public var length: Int64

    public init(versionId: Version.ID, offset: Int64, length: Int64) {
        self.versionId = versionId
        self.offset = offset
        self.length = length
    }
}

/// What storage keeps about a committed version: the version itself, the root of its value map and its value count.
public struct StoredVersion: Sendable, Equatable {
    /// The version.
    public var version: Version
    /// The root node of its value map; nil for a version with no values.
    public var mapRoot: RecordLocation?
    /// How many values it has.
    public var valueCount: Int

    public init(version: Version, mapRoot: RecordLocation?, valueCount: Int) {
        self.version = version
        self.mapRoot = mapRoot
        self.valueCount = valueCount
    }
}

/// The place a store keeps its versions. A version is written as a set of records in two zones (value data and
/// map nodes) and becomes visible, all at once, when its writer commits; a crash before that leaves nothing.
/// Records are kept as they were given (`StoredRecord`: plain or compressed); the readers below decode them, and an
/// exchange that sends compressed records as they are reads them as stored.
///
/// Storage is shared by several processes: `newlyCommittedVersions()` also returns what others committed.
public protocol Storage: Sendable {
    /// A short name recorded in the store's descriptor (`file`, `sqlite`).
    var kind: String { get }
    /// Versions committed since the previous call, by this process or another; the first call returns all.
    func newlyCommittedVersions() throws -> [StoredVersion]
    /// Starts writing version `id`.
    func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter
    /// Many committed records as stored, in the order given, each checked against its zone and checksum: a storage
    /// may read neighbours in one request.
    func readStoredRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [StoredRecord]
    /// Until the matching `endGroupedCommits`, versions committed may be made durable together (a bulk receive)
    /// rather than one by one; each still appears whole or not at all. Calls nest.
    func beginGroupedCommits()
    /// Makes every version committed since `beginGroupedCommits` durable before returning.
    func endGroupedCommits() throws
    /// Gives a committed record, as stored, to `write` in pieces where the storage can (each with the record's
    /// encoding), so a large value never sits whole in memory; the checksum is verified after the last piece, and a
    /// mismatch throws.
    func copyStoredRecord(
        at location: RecordLocation, zone: StorageZone, into write: (RecordEncoding, Data) throws -> Void
    ) throws
    /// Gives back the space of value records nothing needs any more (a prune's), leaving every other record where it
    /// is: locations stay valid, and a released record reads as damaged. Returns the bytes released. Versions stay
    /// immutable in all but this: the released bytes are gone.
    func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64
    /// A hint that these committed records will be read soon (a mount reading a file in order): a storage that reads
    /// from far away (a remote's changes files) starts reading them now, so the reads overlap; a local one ignores it.
    func prefetchRecords(at locations: [RecordLocation], zone: StorageZone)
}

extension VersionWriter {
    /// Stores a local file's contents as they are, as one plain record.
    public func append(contentsOf file: URL, zone: StorageZone, digest: DigestStream?) throws -> RecordLocation {
        try append(contentsOf: file, zone: zone, encoding: .plain, digest: digest)
    }

    /// Stores a file's contents read whole into memory, for storages that keep each record in one piece.
    public func appendWhole(
        contentsOf file: URL, zone: StorageZone, encoding: RecordEncoding, digest: DigestStream?
    ) throws -> RecordLocation {
        let data: Data
        do { data = try POSIX.readFile(file.path) } catch FileError.endedEarly {
            throw StoreError.sourceChanged(path: file.path)
        }
        digest?.update(data)
        return try append(StoredRecord(bytes: data, encoding: encoding), zone: zone)
    }

    /// Stores `record` as it is (map nodes, and values that do not compress).
    public func append(_ record: Data, zone: StorageZone) throws -> RecordLocation {
        try append(StoredRecord(bytes: record, encoding: .plain), zone: zone)
    }

    /// Stores a local file's contents as a value, compressed when that saves enough; returns where, and the file's
    /// size. Read whole into memory here; a storage that streams records (FileStorage) compresses in pieces instead.
    public func appendValue(contentsOf file: URL, digest: DigestStream?) throws -> (RecordLocation, size: Int64) {
        try appendValueWhole(contentsOf: file, digest: digest)
    }

    /// The same, reading the file whole: what a storage that keeps each record in one piece does.
    public func appendValueWhole(contentsOf file: URL, digest: DigestStream?) throws -> (RecordLocation, size: Int64) {
        let data: Data
        do { data = try POSIX.readFile(file.path) } catch FileError.endedEarly {
            throw StoreError.sourceChanged(path: file.path)
        }
        digest?.update(data)
        return (try appendValue(data), Int64(data.count))
    }

    /// Stores value data compressed when that saves enough (`Zstd.compressedIfSmaller`), else as it is.
    public func appendValue(_ data: Data) throws -> RecordLocation {
        try append(StoredRecord.compressedIfSmaller(data), zone: .values)
    }
}

extension Storage {
    public func beginGroupedCommits() {}
    public func endGroupedCommits() throws {}
    public func prefetchRecords(at locations: [RecordLocation], zone: StorageZone) {}

    /// A committed record's data, decoded.
    public func readRecord(at location: RecordLocation, zone: StorageZone) throws -> Data {
        try readRecords(at: [location], zone: zone)[0]
    }

    /// Many records' data, decoded, in the order given.
    public func readRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [Data] {
        try zip(locations, try readStoredRecords(at: locations, zone: zone)).map { location, record in
            try record.decoded(of: location)
        }
    }

    /// Gives a committed record's data, decoded, to `write` in pieces (a restore writes each into a file it already
    /// holds open); a compressed record is decompressed as it is read.
    public func copyRecord(at location: RecordLocation, zone: StorageZone, into write: (Data) throws -> Void) throws {
        // A compressed record that comes in one piece (most do: pieces are 1 MiB) is decompressed whole with a pooled
        // context; only a larger one is streamed, so a restore of many small files makes no decoder per file.
        var first: Data?
        var decoder: ZstdStreamDecoder?
        do {
            try copyStoredRecord(at: location, zone: zone) { encoding, piece in
                switch encoding {
                case .plain: try write(piece)
                case .zstd:
                    if let decoder {
                        try decoder.feed(piece, to: write)
                    } else if let held = first {
                        let started = try ZstdStreamDecoder(expectedSize: nil)
                        try started.feed(held, to: write)
                        try started.feed(piece, to: write)
                        decoder = started
                        first = nil
                    } else {
                        first = piece
                    }
                }
            }
            if let first { try write(Zstd.decompress(first)) }
            try decoder?.finish(to: write)
        } catch let error as ZstdError {
            throw StoredRecord.corrupt(location, error)
        }
    }

    /// Writes a committed record's data, decoded, to `destination` (replacing it), in pieces. The checksum is verified
    /// before the file is moved into place.
    public func copyRecord(at location: RecordLocation, zone: StorageZone, to destination: URL) throws {
        let writer = try AtomicFileWriter(destination: destination.path)
        do {
            try copyRecord(at: location, zone: zone, into: writer.write)
            try writer.commit(durable: false)
        } catch {
            writer.discard()
            throw error
        }
    }
}

/// The records of one version being written. Nothing is visible until `commit`; `discard` drops it all.
public protocol VersionWriter: AnyObject {
    /// Stores one record as given (plain or compressed); `zone` is recorded with it, so a map node is never read as
    /// value data or the reverse. The location's length is the stored length.
    func append(_ record: StoredRecord, zone: StorageZone) throws -> RecordLocation
    /// Stores a local file's contents as one record kept in `encoding` (the file holds the bytes as stored), read once
    /// (in pieces where the storage can), feeding `digest` with exactly the bytes stored. A file that ends early is
    /// `sourceChanged`.
    func append(
        contentsOf file: URL, zone: StorageZone, encoding: RecordEncoding, digest: DigestStream?
    ) throws -> RecordLocation
    /// Stores a local file's contents as a value, compressed when that saves enough, read once; returns where and the
    /// file's size (the value's). A default reads the file whole.
    func appendValue(contentsOf file: URL, digest: DigestStream?) throws -> (RecordLocation, size: Int64)
    func commit(_ header: StoredVersion) throws
    func discard()
}

/// The two kinds of record a version stores.
public enum StorageZone: UInt8, Sendable {
    case values = 1
    case map = 2
}
