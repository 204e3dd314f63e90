import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

extension FileStorage {
    /// Punches a hole over each record, frame and all: the file system frees the whole blocks inside it, and the
    /// record then reads as zeros, which its frame refuses. Records of a version file, a pack or a compacted pack
    /// alike; records that
    /// touch are punched as one range, so a run of small released records frees the blocks they share (a block is
    /// freed only when one punch covers it whole). A record is released once however often it is given.
    public func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64 {
        var byFile: [String: [(start: Int64, end: Int64)]] = [:]
        for location in Set(locations) {
            switch try locate(location.versionId) {
            case .compacted(let version, let file):
                switch try version.record(at: location, zone: .values).placement {
                case .released: continue
                case .direct(let start):
                    let end = start + Int64(RecordFraming.recordHeaderSize) + location.length
                    byFile[file.path, default: []].append((start, end))
                case .framed:
                    throw StoreError.corruptFile(
                        path: file.path,
                        reason: "the record of version \(location.versionId) at offset \(location.offset) is a map node"
                    )
                }
            case .bundle(let file, let base, let limit):
                let start = try Self.frameStart(of: location, base: base, limit: limit, file: file)
                byFile[file.path, default: []].append(
                    (start, start + Int64(RecordFraming.recordHeaderSize) + location.length))
            }
        }
        var released: Int64 = 0
        for (path, ranges) in byFile {
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FileError.io(path: path, operation: "open for a prune", errno: errno) }
            defer { close(fd) }
            for range in Self.joined(ranges) {
                try POSIX.punchHole(fd, offset: range.start, length: range.end - range.start, path: path)
                released += range.end - range.start
            }
            guard fsync(fd) == 0 else { throw FileError.io(path: path, operation: "fsync", errno: errno) }
        }
        return released
    }

    /// Ranges sorted, those that touch or overlap joined.
    static func joined(_ ranges: [(start: Int64, end: Int64)]) -> [(start: Int64, end: Int64)] {
        var result: [(start: Int64, end: Int64)] = []
        for range in ranges.sorted(by: { $0.start < $1.start }) {
            if let last = result.last, range.start <= last.end {
                result[result.count - 1].end = max(last.end, range.end)
            } else {
                result.append(range)
            }
        }
        return result
    }
}
