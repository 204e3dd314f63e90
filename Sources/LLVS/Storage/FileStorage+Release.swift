import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

extension FileStorage {
    /// Punches a hole over each record's payload (its frame header stays): the file system frees the whole blocks
    /// inside it, and the payload then reads as zeros, which its checksum refuses. Records of a version file or a pack
    /// alike; a record is released once however often it is given.
    public func releaseValueRecords(at locations: [RecordLocation]) throws -> Int64 {
        var byFile: [String: [(start: Int64, length: Int64)]] = [:]
        for location in Set(locations) {
            let (path, base, limit) = try place(of: location.versionId)
            let start = base + location.offset + Int64(RecordFraming.recordHeaderSize)
            guard location.offset >= 0, location.length >= 0, start + location.length <= limit else {
                throw StoreError.corruptFile(
                    path: path,
                    reason:
                        "a record of version \(location.versionId) at offset \(location.offset) runs past its bundle")
            }
            byFile[path, default: []].append((start, location.length))
        }
        var released: Int64 = 0
        for (path, ranges) in byFile {
            let fd = open(path, O_WRONLY | O_CLOEXEC)
            guard fd >= 0 else { throw FileError.io(path: path, operation: "open for a prune", errno: errno) }
            defer { close(fd) }
            for range in ranges where range.length > 0 {
                try POSIX.punchHole(fd, offset: range.start, length: range.length, path: path)
                released += range.length
            }
            guard fsync(fd) == 0 else { throw FileError.io(path: path, operation: "fsync", errno: errno) }
        }
        return released
    }
}
