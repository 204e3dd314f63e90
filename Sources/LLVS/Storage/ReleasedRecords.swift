import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// The value records whose bytes are gone on purpose: released by a prune here (`llvs prune`), or received released
/// (a store that had pruned them sent the version anyway, with the values' sizes and no bytes). Their values stay
/// in every map that names them, so every store rebuilds the same maps; only their bytes are missing.
///
/// Kept in the store's folder as `released-records`: entries appended and synced before the records are released,
/// so the list is never short of a released record. A kill during an append leaves a partial last entry, whose
/// records were not released yet: the list ends at the last whole entry.
public struct ReleasedRecordList: Sendable {
    let path: String

    init(storeRoot: URL) { path = storeRoot.path + "/released-records" }

    /// The list, and the file's size it was read at (so a reader reads it again only when it grew).
    func read() throws -> (Set<RecordLocation>, Int64) {
        var info = stat()
        guard stat(path, &info) == 0 else {
            guard errno == ENOENT else { throw FileError.io(path: path, operation: "stat", errno: errno) }
            return ([], 0)
        }
        var reader = ByteReader(try POSIX.readFile(path))
        var found = Set<RecordLocation>()
        while !reader.isAtEnd {
            guard let version = try? reader.string(), let offset = try? reader.int(limit: Int.max),
                let length = try? reader.int(limit: Int.max)
            else { break }
            found.insert(RecordLocation(versionId: Version.ID(version), offset: Int64(offset), length: Int64(length)))
        }
        return (found, Int64(info.st_size))
    }

    func append(_ locations: [RecordLocation]) throws {
        guard !locations.isEmpty else { return }
        var writer = ByteWriter()
        for location in locations {
            writer.string(location.versionId.rawValue)
            writer.varint(UInt64(location.offset))
            writer.varint(UInt64(location.length))
        }
        let fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileError.io(path: path, operation: "open", errno: errno) }
        defer { close(fd) }
        // A prune and a sync receiving released values may append at once: each holds the file alone to append.
        while flock(fd, LOCK_EX) != 0 {
            guard errno == EINTR else { throw FileError.io(path: path, operation: "lock", errno: errno) }
        }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileError.io(path: path, operation: "stat", errno: errno) }
        try writer.bytes.withUnsafeBytes { try POSIX.write($0, at: Int64(info.st_size), to: fd, path: path) }
        guard fsync(fd) == 0 else { throw FileError.io(path: path, operation: "fsync", errno: errno) }
    }
}

extension ReleasedRecordList {
    static let snapshotMagic = Data("LLVSRELS".utf8)

    /// The released records that go beside an `llvs-bundles-v2` snapshot (`snapshots/<id>/released`):
    /// `"LLVSRELS" count:varint (versionId:string offset:varint length:varint)* crc32:u32`, sorted.
    public static func snapshotEncoding(_ locations: Set<RecordLocation>) -> Data {
        var writer = ByteWriter()
        writer.append(snapshotMagic)
        writer.varint(UInt64(locations.count))
        let sorted = locations.sorted { ($0.versionId.rawValue, $0.offset) < ($1.versionId.rawValue, $1.offset) }
        for location in sorted {
            writer.string(location.versionId.rawValue)
            writer.varint(UInt64(location.offset))
            writer.varint(UInt64(location.length))
        }
        ChecksummedBytes.seal(&writer)
        return Data(writer.bytes)
    }

    /// Reads what `snapshotEncoding` wrote; `path` names it in errors.
    /// - Throws: `ExchangeError.malformedFile(path:reason:)`.
    public static func decodeSnapshotList(_ data: Data, path: String) throws -> Set<RecordLocation> {
        func fail(_ reason: String) -> ExchangeError { .malformedFile(path: path, reason: reason) }
        var reader = try ChecksummedBytes.body(
            of: data, magic: snapshotMagic, what: "a list of released records", path: path)
        do {
            let count = try reader.int(limit: Int(Int32.max))
            var found = Set<RecordLocation>()
            for _ in 0..<count {
                let version = Version.ID(try reader.string())
                let offset = Int64(try reader.int(limit: Int.max))
                let length = Int64(try reader.int(limit: Int(UInt32.max)))
                found.insert(RecordLocation(versionId: version, offset: offset, length: length))
            }
            guard reader.isAtEnd else { throw fail("bytes after its \(count) records") }
            return found
        } catch let failure as ByteReader.Failure {
            throw fail(failure.description)
        }
    }
}

extension Store {
    /// Every value record whose bytes were released (`ReleasedRecordList`).
    public func releasedRecords() throws -> Set<RecordLocation> {
        let list = ReleasedRecordList(storeRoot: rootURL)
        var info = stat()
        let size = stat(list.path, &info) == 0 ? Int64(info.st_size) : 0
        if let cached = released.withLock({ $0.size == size ? $0.records : nil }) { return cached }
        let (records, readSize) = try list.read()
        released.withLock { $0 = (records, readSize) }
        return records
    }

    /// Lists records as released, durably; a prune does so before it releases them (`releaseRecords`).
    public func listReleased(_ locations: [RecordLocation]) throws {
        try ReleasedRecordList(storeRoot: rootURL).append(locations)
    }

    /// Gives back the space of listed records; returns the bytes released. The records released before in the same
    /// versions are given again (releasing is idempotent), so a record released now next to one released by an
    /// earlier prune frees the block they share.
    public func releaseRecords(_ locations: [RecordLocation]) throws -> Int64 {
        let versions = Set(locations.map(\.versionId))
        let neighbours = try releasedRecords().filter { versions.contains($0.versionId) && $0.length > 0 }
        return try storage.releaseValueRecords(at: locations + neighbours)
    }
}
