import Foundation
import LLVS
import LLVSSupport
import Synchronization

/// The storage of a store whose values stay on a remote: versions and map nodes are kept in a `FileStorage` in the
/// store's (temporary) folder, as any store keeps them, while a value placed from a version's index
/// (`Store.addVersion(_:placing:changes:)`) is read from its byte range in the remote's changes file when someone
/// reads it. A value written here (a merge's, a version whose changes were read whole) is the local storage's.
public final class RemoteValueStorage: Storage {
    public var kind: String { local.kind }
    let local: FileStorage
    let reader: RemoteRecordReader
    private let placed = Mutex<[RecordLocation: RemoteRecord]>([:])

    init(local: FileStorage, reader: RemoteRecordReader) {
        self.local = local
        self.reader = reader
    }

    /// Says how the bytes at `location` (a range of a changes file) are stored, before a version places them.
    func place(_ location: RecordLocation, as record: RemoteRecord) {
        placed.withLock { $0[location] = record }
    }

    /// Ranged reads of the remote made so far, and the bytes they brought.
    public var remoteReads: (count: Int, bytes: Int64) { reader.requests }

    public func newlyCommittedVersions() throws -> [StoredVersion] { try local.newlyCommittedVersions() }

    public func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter {
        try local.makeVersionWriter(for: id)
    }

    public func beginGroupedCommits() { local.beginGroupedCommits() }
    public func endGroupedCommits() throws { try local.endGroupedCommits() }

    public func readStoredRecords(at locations: [RecordLocation], zone: StorageZone) throws -> [StoredRecord] {
        guard zone == .values else { return try local.readStoredRecords(at: locations, zone: zone) }
        let records = placed.withLock { placed in locations.map { placed[$0] } }
        guard records.contains(where: { $0 != nil }) else {
            return try local.readStoredRecords(at: locations, zone: zone)
        }
        var remote: [(RecordLocation, RemoteRecord)] = []
        for (location, record) in zip(locations, records) {
            if let record { remote.append((location, record)) }
        }
        var fetched = try reader.blockingBytes(at: remote).makeIterator()
        var results: [StoredRecord] = []
        results.reserveCapacity(locations.count)
        for (location, record) in zip(locations, records) {
            if let record, let bytes = fetched.next() {
                results.append(StoredRecord(bytes: bytes, encoding: record.encoding))
            } else {
                results.append(contentsOf: try local.readStoredRecords(at: [location], zone: zone))
            }
        }
        return results
    }

    /// A placed value of at most `wholeLimit` bytes (a backup's chunks are at most 4 MiB) is read whole, through the
    /// cache, and given as one piece; a larger one in pieces of that size, each a ranged read of its own, its CRC-32
    /// checked after the last (as `FileStorage` checks a record it gives in pieces).
    public func copyStoredRecord(
        at location: RecordLocation, zone: StorageZone, into write: (RecordEncoding, Data) throws -> Void
    ) throws {
        guard zone == .values, let record = placed.withLock({ $0[location] }) else {
            return try local.copyStoredRecord(at: location, zone: zone, into: write)
        }
        guard location.length > Self.wholeLimit else {
            let bytes = try reader.blockingBytes(at: [(location, record)])
            for piece in bytes where !piece.isEmpty { try write(record.encoding, piece) }
            return
        }
        var crc = CRC32.Running()
        var done: Int64 = 0
        while done < location.length {
            let count = min(Self.wholeLimit, location.length - done)
            let piece = try reader.blockingPiece(of: location, at: done, count: count)
            crc.update(piece)
            try write(record.encoding, piece)
            done += count
        }
        guard crc.value == record.crc32 else {
            throw RemoteStoreError.damagedRange(
                path: reader.changesPath(of: location.versionId), offset: location.offset,
                reason: "its bytes do not match the CRC-32 of its index")
        }
    }

    /// Values up to this many stored bytes are read whole and cached; larger ones stream.
    static let wholeLimit: Int64 = 8 << 20

    /// Starts the ranged reads of placed records not held or in flight already, without waiting for them: what they
    /// bring goes to the cache, where the read that follows finds it (or joins the read still in flight).
    public func prefetchRecords(at locations: [RecordLocation], zone: StorageZone) {
        guard zone == .values else { return }
        let wanted = placed.withLock { placed in
            locations.compactMap { location in
                placed[location].flatMap { record in
                    record.isReleased || location.length > Self.wholeLimit ? nil : (location, record)
                }
            }
        }
        for (location, record) in wanted { reader.prefetch(location, record: record) }
    }

    public func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64 {
        throw RemoteStoreError.readOnly
    }
}
