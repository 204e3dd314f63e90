import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// Where a version's records are, open: a bundle in a file (the version's own file, or a pack: `base` is where the
/// bundle starts in it, `limit` where it ends), or a compacted pack.
enum VersionPlace {
    case bundle(file: ReadableFile, base: Int64, limit: Int64)
    case compacted(CompactedVersion, file: ReadableFile)
}

extension FileStorage {
    /// Where `id`'s records are. A compacted version is looked for first; a version file or compacted pack that
    /// another process's compaction removed since this one listed it sends it to the packs on disk, where the version
    /// now is (`reloadCompacted`). Every reader and the release go through here.
    func locate(_ id: Version.ID) throws -> VersionPlace {
        if let registered = compactedVersion(id) { return try open(registered) }
        do {
            let (file, base, limit) = try fileAndBase(of: id)
            return .bundle(file: file, base: base, limit: limit)
        } catch FileError.io(let path, let operation, let code) where code == ENOENT {
            guard try reloadCompacted(id), let registered = compactedVersion(id) else {
                throw FileError.io(path: path, operation: operation, errno: code)
            }
            return try open(registered)
        }
    }

    /// A compacted version's pack, open; when another process compacted that pack again and removed it, the packs
    /// are read again and the version taken from where they now place it.
    private func open(_ version: CompactedVersion) throws -> VersionPlace {
        do {
            return .compacted(version, file: try compactedPackFile(version.pack.path))
        } catch FileError.io(let path, let operation, let code) where code == ENOENT {
            let id = version.header.version.id
            guard try reloadCompacted(id), let moved = compactedVersion(id), moved.pack.path != path else {
                throw FileError.io(path: path, operation: operation, errno: code)
            }
            return .compacted(moved, file: try compactedPackFile(moved.pack.path))
        }
    }

    /// Reads records of one file whose frames start where `frameStart` says, in the order given: those that lie
    /// close together (a version's values, read in the order they were written) with one request per run of them, up
    /// to `spanLimit` bytes and across gaps of up to `spanGap`, instead of one each. Nothing is gathered beforehand:
    /// reading one map node is the commonest call.
    func readNearby(
        _ locations: ArraySlice<RecordLocation>, in file: ReadableFile, zone: StorageZone,
        frameStart: (RecordLocation) throws -> Int64
    ) throws -> [StoredRecord] {
        let headerSize = Int64(RecordFraming.recordHeaderSize)
        var results: [StoredRecord] = []
        results.reserveCapacity(locations.count)
        var first = locations.startIndex
        while first < locations.endIndex {
            let spanStart = try frameStart(locations[first])
            var end = first + 1
            var spanEnd = spanStart + headerSize + locations[first].length
            while end < locations.endIndex {
                let start = try frameStart(locations[end])
                let recordEnd = start + headerSize + locations[end].length
                guard start >= spanEnd, start - spanEnd <= Self.spanGap, recordEnd - spanStart <= Self.spanLimit
                else { break }
                spanEnd = recordEnd
                end += 1
            }
            let span = try file.read(at: spanStart, count: Int(spanEnd - spanStart))
            for location in locations[first..<end] {
                let start = try frameStart(location)
                let from = span.startIndex + Int(start - spanStart)
                let framed = span[from..<(from + RecordFraming.recordHeaderSize + Int(location.length))]
                results.append(
                    try RecordFraming.unframe(
                        framed, expectedLength: location.length, zone: zone, path: file.path, offset: start))
            }
            first = end
        }
        return results
    }

    /// Where the frame of a record of a bundle at `base`..`limit` of `file` starts; an error naming the file when
    /// the record runs past the bundle.
    static func frameStart(of location: RecordLocation, base: Int64, limit: Int64, file: ReadableFile) throws -> Int64 {
        guard location.offset >= 0, location.length >= 0,
            base + location.offset + Int64(RecordFraming.recordHeaderSize) + location.length <= limit
        else {
            throw StoreError.corruptFile(
                path: file.path,
                reason: "a record of version \(location.versionId) at offset \(location.offset) runs past its bundle")
        }
        return base + location.offset
    }
}
