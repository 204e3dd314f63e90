import Foundation
import LLVSCodecs
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a compaction did.
public struct StorageCompaction: Sendable, Encodable {
    /// Versions moved into the new pack, and the files (version files and packs) it replaced.
    public var versions = 0
    public var replacedFiles = 0
    /// Bytes the replaced files took on disk, and the new pack takes.
    public var bytesBefore: Int64 = 0
    public var bytesAfter: Int64 = 0

    public init() {}
}

/// A storage that can lay its records out again to take less space, every location staying valid.
public protocol CompactableStorage: Storage {
    /// Moves the records of `versions` into less space; `released` are records whose bytes are gone.
    func compact(versions: [Version.ID], released: Set<RecordLocation>) throws -> StorageCompaction
}

/// A prune frees records in place (`FileStorage+Release`), which leaves two costs a hole cannot remove: blocks shared
/// by a freed record and a kept one, and the map nodes of every version, each stored compressed on its own. A
/// compaction copies the kept records of many versions into one compacted pack (`CompactedPackDirectory`): value
/// records one after another, map nodes in zstd frames of nodes from the same place of the trie (a node and its
/// successors in later versions differ in a few entries, so together they compress several times better), and a
/// directory that finds each record by the location every map and header already names. Then the files it copied go.
///
/// A kill at any moment leaves the store whole: the pack is written under a temporary name and linked in durably
/// before any file it replaces is removed, and a version found both in a pack and in its old file is read from the
/// pack (the old file is removed by the next compaction). Another process that had a removed file open goes on
/// reading it; one that had not yet opened it finds the pack when the file is gone.
extension FileStorage: CompactableStorage {
    /// A compacted pack is compacted again once this fraction of its bytes or more has been released since.
    static let recompactionShare: Int64 = 5
    /// Raw bytes of map records per frame: larger frames compress a little better and cost more per node read.
    static let mapFrameSize = 64 << 10
    /// zstd level of map frames: written once per prune, read often.
    static let mapFrameLevel: Int32 = 3

    func isCompacted(_ id: Version.ID) -> Bool { compacted.withLock { $0[id] != nil } }

    func compactedVersion(_ id: Version.ID) -> CompactedVersion? { compacted.withLock { $0[id] } }

    /// Reads the compacted packs another process wrote since; whether `id` is now in one. Their versions' headers are
    /// handed out by the next `newlyCommittedVersions`.
    func reloadCompacted(_ id: Version.ID) throws -> Bool {
        let headers = try loadCompactedPacks()
        restoredHeaders.withLock { $0.append(contentsOf: headers) }
        return isCompacted(id)
    }

    /// Registers the compacted packs this process has not read; returns their versions' headers. A pack compacted
    /// again holds every version of the one it replaced, and more: packs are registered smallest first, so the newer
    /// one wins, and a pack none of whose versions it still places (its successor was linked in and a kill came
    /// before it was removed) is stale, for the next compaction to remove.
    func loadCompactedPacks() throws -> [StoredVersion] {
        let known = loadedNames.withLock { $0 }
        var loaded: [(path: String, directory: CompactedPackDirectory)] = []
        for name in try POSIX.listNames(packsPath)
        where name.hasSuffix(Self.compactedPackExtension) && !known.contains(name) {
            let path = packsPath + "/" + name
            let file: ReadableFile
            do { file = try ReadableFile(path: path) } catch FileError.io(_, _, let code) where code == ENOENT {
                continue  // compacted again since the listing; its successor is listed too
            }
            loaded.append((path, try CompactedPackDirectory.read(from: file)))
            loadedNames.withLock { _ = $0.insert(name) }
        }
        guard !loaded.isEmpty else { return [] }
        for (path, directory) in loaded.sorted(by: { $0.directory.versions.count < $1.directory.versions.count }) {
            register(directory, at: path)
        }
        let placing = Set(compacted.withLock { $0.values.map(\.pack.path) })
        let names = loadedNames.withLock { $0 }
        stale.withLock { stale in
            for name in names where name.hasSuffix(Self.compactedPackExtension) {
                let path = packsPath + "/" + name
                if !placing.contains(path), POSIX.fileExists(path) { stale.insert(path) }
            }
        }
        return loaded.flatMap { $0.directory.versions.map(\.header) }
    }

    func register(_ directory: CompactedPackDirectory, at path: String) {
        let pack = CompactedPackFile(path: path, frames: directory.frames)
        compacted.withLock { compacted in
            for version in directory.versions {
                compacted[version.header.version.id] = CompactedVersion(pack: pack, version: version)
            }
        }
    }

    /// Reads records of one compacted version from its pack, open as `file` (`locate`): value records lying one
    /// after another in one read each run (`readNearby`), map records from their frames.
    func readCompacted(
        _ locations: ArraySlice<RecordLocation>, of version: CompactedVersion, file: ReadableFile, zone: StorageZone
    ) throws -> [StoredRecord] {
        var results: [StoredRecord] = []
        results.reserveCapacity(locations.count)
        // Value records from `direct` on are read together when a map record or the end comes.
        var direct = locations.startIndex
        func readDirect(upTo end: Int) throws {
            guard direct < end else { return }
            results += try readNearby(locations[direct..<end], in: file, zone: zone) { location in
                guard case .direct(let start) = try version.record(at: location, zone: zone).placement else {
                    throw StoreError.corruptFile(path: file.path, reason: "a value record moved while it was read")
                }
                return start
            }
        }
        for index in locations.indices {
            let location = locations[index]
            switch try version.record(at: location, zone: zone).placement {
            case .released:
                throw StoreError.corruptFile(
                    path: version.pack.path,
                    reason: "the record of version \(location.versionId) at offset \(location.offset) was released")
            case .framed(let frame, let offset, _, _):
                try readDirect(upTo: index)
                results.append(try framedRecord(in: Int(frame), at: Int(offset), of: version, file: file, zone: zone))
                direct = index + 1
            case .direct:
                break
            }
        }
        try readDirect(upTo: locations.endIndex)
        return results
    }

    /// A map record held in a frame: plain, with its own frame and checksum.
    private func framedRecord(
        in frame: Int, at offset: Int, of version: CompactedVersion, file: ReadableFile, zone: StorageZone
    ) throws -> StoredRecord {
        let content = try mapFrames.content(of: frame, in: version.pack, file: file)
        let headerSize = RecordFraming.recordHeaderSize
        guard offset + headerSize <= content.count else {
            throw StoreError.corruptFile(path: version.pack.path, reason: "map frame \(frame) ends before a record")
        }
        var reader = ByteReader(content[(content.startIndex + offset + 1)..<(content.startIndex + offset + 5)])
        let length = Int(try reader.uint32())
        guard offset + headerSize + length <= content.count else {
            throw StoreError.corruptFile(
                path: version.pack.path, reason: "a record of map frame \(frame) runs past the frame")
        }
        let from = content.startIndex + offset
        return try RecordFraming.unframe(
            content[from..<(from + headerSize + length)], expectedLength: Int64(length), zone: zone,
            path: version.pack.path, offset: Int64(offset))
    }

    // MARK: Giving a bundle back

    /// Writes a compacted version's bundle as its version file held it: every record at its offset, released ones as
    /// zeros, map records as they were stored (compressed again, `storedAgain`).
    func writeBundle(of version: CompactedVersion, in file: ReadableFile, to archive: SnapshotArchiveWriter) throws {
        let header = version.header.encoded()
        let trailer = RecordFraming.trailer(
            headerLength: header.count, headerCRC: header.withUnsafeBytes { CRC32.checksum($0) })
        let length = version.recordsLength + Int64(header.count + trailer.count)
        try archive.append(bundleOfLength: length) { put in
            var at: Int64 = 0
            for record in version.records {
                guard record.offset == at else {
                    throw StoreError.corruptFile(
                        path: version.pack.path,
                        reason: "version \(version.header.version.id) has a gap in its records at offset \(at)")
                }
                let framedLength = Int64(RecordFraming.recordHeaderSize) + record.length
                switch record.placement {
                case .released:
                    var left = framedLength
                    while left > 0 {
                        let count = Int(min(left, 1 << 20))
                        try put(Data(count: count))
                        left -= Int64(count)
                    }
                case .direct(let start):
                    var done: Int64 = 0
                    while done < framedLength {
                        let count = Int(min(framedLength - done, 1 << 20))
                        try put(try file.read(at: start + done, count: count))
                        done += Int64(count)
                    }
                case .framed(let frame, let offset, let crc32, let encoding):
                    let plain = try framedRecord(
                        in: Int(frame), at: Int(offset), of: version, file: file, zone: record.zone)
                    let stored = try storedAgain(
                        plain.bytes, as: encoding, length: record.length, crc32: crc32, version: version, at: at)
                    try put(Data(RecordFraming.frame(stored, zone: record.zone, encoding: encoding)))
                    try put(stored)
                }
                at += framedLength
            }
            guard at == version.recordsLength else {
                throw StoreError.corruptFile(
                    path: version.pack.path,
                    reason: "version \(version.header.version.id)'s records end at \(at), not \(version.recordsLength)")
            }
            try put(header)
            try put(Data(trailer))
        }
    }

    /// A map record's bytes as its version stored them, `length` bytes with CRC `crc32`. A compressed one is
    /// compressed again at the levels this package writes at, which gives the same bytes with the same libzstd; with
    /// another, a frame of at most `length - 8` bytes is padded to `length` with a skippable frame, which every
    /// decoder passes over.
    private func storedAgain(
        _ plain: Data, as encoding: RecordEncoding, length: Int64, crc32: UInt32, version: CompactedVersion,
        at offset: Int64
    ) throws -> Data {
        func failure(_ reason: String) -> StoreError {
            .corruptFile(
                path: version.pack.path,
                reason: "the map record of version \(version.header.version.id) at offset \(offset): \(reason)")
        }
        switch encoding {
        case .plain:
            guard Int64(plain.count) == length, plain.withUnsafeBytes({ CRC32.checksum($0) }) == crc32 else {
                throw failure("its bytes differ from those stored")
            }
            return plain
        case .zstd:
            var smallest: Data?
            for level in [Zstd.defaultLevel, 3, 19] {
                guard let again = try? Zstd.compressed(plain, level: level) else { continue }
                if Int64(again.count) == length, again.withUnsafeBytes({ CRC32.checksum($0) }) == crc32 {
                    return again
                }
                if again.count < smallest?.count ?? Int.max { smallest = again }
            }
            guard let smallest, Int64(smallest.count) + 8 <= length else {
                throw failure("it cannot be compressed again into its \(length) bytes")
            }
            var padded = smallest
            var padding = ByteWriter()
            padding.uint32(0x184D_2A50)
            padding.uint32(UInt32(length - Int64(smallest.count) - 8))
            padded.append(contentsOf: padding.bytes)
            padded.append(Data(count: Int(length) - padded.count))
            return padded
        }
    }
}
