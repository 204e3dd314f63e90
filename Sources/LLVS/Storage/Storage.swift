import Foundation
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
///
/// Storage is shared by several processes: `newlyCommittedVersions()` also returns what others committed.
public protocol Storage: Sendable {
    /// A short name recorded in the store's descriptor (`file`, `sqlite`).
    var kind: String { get }
    /// Versions committed since the previous call, by this process or another; the first call returns all.
    func newlyCommittedVersions() throws -> [StoredVersion]
    /// Starts writing version `id`.
    func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter
    /// The bytes of a committed record, checked against its zone and checksum.
    func readRecord(at location: RecordLocation, zone: StorageZone) throws -> Data
    /// The bytes of many records, in the order given: a storage may read neighbours in one request.
    func readRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [Data]
    /// Until the matching `endGroupedCommits`, versions committed may be made durable together (a bulk receive)
    /// rather than one by one; each still appears whole or not at all. Calls nest.
    func beginGroupedCommits()
    /// Makes every version committed since `beginGroupedCommits` durable before returning.
    func endGroupedCommits() throws
    /// Writes a committed record to `destination` (replacing it), in pieces where the storage can, so a large value
    /// never sits whole in memory. The checksum is verified before the file is moved into place.
    func copyRecord(at location: RecordLocation, zone: StorageZone, to destination: URL) throws
    /// Gives a committed record to `write` in pieces where the storage can (a restore writes each into a file it
    /// already holds open); the checksum is verified after the last piece, and a mismatch throws.
    func copyRecord(at location: RecordLocation, zone: StorageZone, into write: (Data) throws -> Void) throws
}

extension VersionWriter {
    public func append(contentsOf file: URL, zone: StorageZone, digest: DigestStream?) throws -> RecordLocation {
        try appendWhole(contentsOf: file, zone: zone, digest: digest)
    }

    /// Stores a file's contents read whole into memory, for storages that keep each record in one piece.
    public func appendWhole(contentsOf file: URL, zone: StorageZone, digest: DigestStream?) throws -> RecordLocation {
        let data: Data
        do { data = try POSIX.readFile(file.path) } catch FileError.endedEarly {
            throw StoreError.sourceChanged(path: file.path)
        }
        digest?.update(data)
        return try append(data, zone: zone)
    }
}

extension Storage {
    public func beginGroupedCommits() {}
    public func endGroupedCommits() throws {}

    public func readRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [Data] {
        try locations.map { try readRecord(at: $0, zone: zone) }
    }

    public func copyRecord(at location: RecordLocation, zone: StorageZone, into write: (Data) throws -> Void) throws {
        try write(try readRecord(at: location, zone: zone))
    }

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
    /// Stores one record; `zone` is recorded with it, so a map node is never read as value data or the reverse.
    func append(_ record: Data, zone: StorageZone) throws -> RecordLocation
    /// Stores a local file's contents as one record, read once (in pieces where the storage can), feeding `digest`
    /// with exactly the bytes stored. A file that ends early is `sourceChanged`.
    func append(contentsOf file: URL, zone: StorageZone, digest: DigestStream?) throws -> RecordLocation
    func commit(_ header: StoredVersion) throws
    func discard()
}

/// The two kinds of record a version stores.
public enum StorageZone: UInt8, Sendable {
    case values = 1
    case map = 2
}
