import Foundation
import LLVSSupport

/// Writes a zip archive the way LLVS apps' zip library does (PKZIP 2.0, UTF-8 names with bit 11, Unix
/// attributes, a directory entry before what is in it, no data descriptors), streaming each file through deflate
/// into an `AtomicFileWriter` and writing its CRC and sizes back into its local header. ZIP64 end records and
/// extra fields are added only when counts, sizes or offsets need them.
package final class ZipArchiveWriter {
    package struct Written {
        var name: [UInt8]
        var isDirectory: Bool
        var method: UInt16
        var crc32: UInt32
        var compressedSize: Int64
        var size: Int64
        var offset: Int64
    }

    private let file: AtomicFileWriter
    private var written: [Written] = []
    private var directories = Set<String>()
    private let dosTime: UInt16, dosDate: UInt16
    private let deflater: Deflater
    private let wholeDeflater: WholeEntryDeflater

    package init(destination: String, date: Date = Date()) throws {
        file = try AtomicFileWriter(destination: destination)
        deflater = try Deflater()
        wholeDeflater = try WholeEntryDeflater()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute, .second], from: date)
        dosTime = UInt16(parts.hour! << 11 | parts.minute! << 5 | parts.second! / 2)
        dosDate = UInt16(max(0, parts.year! - 1980) << 9 | parts.month! << 5 | parts.day!)
    }

    package var entryCount: Int { written.count }

    /// Adds the entries of the folders above `path` not added yet, outermost first.
    private func addParents(of path: String) throws {
        var parents: [String] = []
        var components = path.split(separator: "/", omittingEmptySubsequences: false).dropLast()
        while !components.isEmpty {
            let folder = components.joined(separator: "/") + "/"
            if directories.contains(folder) { break }
            parents.append(folder)
            components = components.dropLast()
        }
        for folder in parents.reversed() {
            directories.insert(folder)
            try writeLocalHeader(
                Written(
                    name: Array(folder.utf8), isDirectory: true, method: 0, crc32: 0, compressedSize: 0, size: 0,
                    offset: file.bytesWritten), zip64: false)
        }
    }

    /// Adds a folder's entry (and those of the folders above it) unless it is there already.
    package func addDirectory(_ path: String) throws {
        try addParents(of: path.hasSuffix("/") ? path : path + "/")
    }

    /// Adds a file of `size` bytes whose contents `produce` gives to the writer it is handed, in pieces.
    package func addFile(_ path: String, size: Int64, produce: ((Data) throws -> Void) throws -> Void) throws {
        try addParents(of: path)
        var entry = Written(
            name: Array(path.utf8), isDirectory: false, method: 8, crc32: 0, compressedSize: 0, size: 0,
            offset: file.bytesWritten)
        // Sizes near 4 GiB (deflate can grow data a little) and offsets past it need ZIP64 fields in the local header.
        let zip64 = size >= 0xFFFF_0000 || entry.offset >= 0xFFFF_FFFF
        try writeLocalHeader(entry, zip64: zip64)
        let dataStart = file.bytesWritten
        var crc = CRC32.Running()
        var count: Int64 = 0
        let file = self.file
        deflater.reset { try file.write($0) }
        try produce { piece in
            crc.update(piece)
            count += Int64(piece.count)
            try deflater.update(piece)
        }
        try deflater.finish()
        guard count == size else { throw FileError.changedWhileRead(path: path) }
        entry.crc32 = crc.value
        entry.size = size
        entry.compressedSize = file.bytesWritten - dataStart
        written[written.count - 1] = entry
        // CRC and sizes into the local header (offset 14), or into its ZIP64 field.
        var patch = ByteWriter()
        patch.uint32(entry.crc32)
        if zip64 {
            patch.uint32(0xFFFF_FFFF)
            patch.uint32(0xFFFF_FFFF)
            try file.overwrite(patch.bytes, at: entry.offset + 14)
            var sizes = ByteWriter()
            sizes.uint64(UInt64(entry.size))
            sizes.uint64(UInt64(entry.compressedSize))
            try file.overwrite(sizes.bytes, at: entry.offset + 30 + Int64(entry.name.count) + 4)
        } else {
            patch.uint32(UInt32(entry.compressedSize))
            patch.uint32(UInt32(entry.size))
            try file.overwrite(patch.bytes, at: entry.offset + 14)
        }
    }

    /// Adds a file held in memory, compressed in one call; its CRC and sizes are known before its local header is
    /// written, so nothing is written back. Files past `wholeEntryLimit`, or past 4 GiB into the archive (whose local
    /// headers need ZIP64 fields), are streamed like any other.
    package func addFile(_ path: String, data: Data) throws {
        guard data.count <= Self.wholeEntryLimit, file.bytesWritten < 0xFFFF_0000 else {
            try addFile(path, size: Int64(data.count)) { write in try write(data) }
            return
        }
        try addParents(of: path)
        let compressed = try wholeDeflater.deflate(data)
        try writeLocalHeader(
            Written(
                name: Array(path.utf8), isDirectory: false, method: 8, crc32: CRC32.checksum(data),
                compressedSize: Int64(compressed.count), size: Int64(data.count), offset: file.bytesWritten),
            zip64: false)
        try file.write(compressed)
    }

    /// The largest file `addFile(_:data:)` compresses in one call (with a compressed copy beside it in memory).
    static let wholeEntryLimit = 16 << 20

    private func writeLocalHeader(_ entry: Written, zip64: Bool) throws {
        var header = ByteWriter()
        header.uint32(0x0403_4b50)
        header.uint16(zip64 ? 45 : 20)
        header.uint16(0x0800)
        header.uint16(entry.method)
        header.uint16(dosTime)
        header.uint16(dosDate)
        // A streamed file's CRC and sizes are not known yet (zero here) and are written back after its data.
        header.uint32(entry.crc32)
        header.uint32(zip64 ? 0xFFFF_FFFF : UInt32(entry.compressedSize))
        header.uint32(zip64 ? 0xFFFF_FFFF : UInt32(entry.size))
        header.uint16(UInt16(entry.name.count))
        header.uint16(zip64 ? 20 : 0)
        try file.write(header.bytes + entry.name)
        if zip64 {
            var extra = ByteWriter()
            extra.uint16(0x0001)
            extra.uint16(16)
            extra.uint64(0)
            extra.uint64(0)
            try file.write(extra.bytes)
        }
        written.append(entry)
    }

    /// Writes the central directory and end records and moves the archive into place; returns its size.
    package func finish() throws -> Int64 {
        let directoryStart = file.bytesWritten
        for entry in written {
            var extra = ByteWriter()
            let bigSize = entry.size >= 0xFFFF_FFFF || entry.compressedSize >= 0xFFFF_FFFF,
                bigOffset = entry.offset >= 0xFFFF_FFFF
            if bigSize || bigOffset {
                extra.uint16(0x0001)
                extra.uint16(UInt16((bigSize ? 16 : 0) + (bigOffset ? 8 : 0)))
                if bigSize { extra.uint64(UInt64(entry.size)); extra.uint64(UInt64(entry.compressedSize)) }
                if bigOffset { extra.uint64(UInt64(entry.offset)) }
            }
            var header = ByteWriter()
            header.uint32(0x0201_4b50)
            header.uint16(0x0315)
            header.uint16(extra.bytes.isEmpty ? 20 : 45)
            header.uint16(0x0800)
            header.uint16(entry.method)
            header.uint16(dosTime)
            header.uint16(dosDate)
            header.uint32(entry.crc32)
            header.uint32(bigSize ? 0xFFFF_FFFF : UInt32(entry.compressedSize))
            header.uint32(bigSize ? 0xFFFF_FFFF : UInt32(entry.size))
            header.uint16(UInt16(entry.name.count))
            header.uint16(UInt16(extra.bytes.count))
            header.uint16(0)  // comment
            header.uint16(0)  // disk
            header.uint16(0)  // internal attributes
            header.uint32(UInt32(entry.isDirectory ? 0o040755 : 0o100644) << 16)
            header.uint32(bigOffset ? 0xFFFF_FFFF : UInt32(entry.offset))
            try file.write(header.bytes + entry.name + extra.bytes)
        }
        let directorySize = file.bytesWritten - directoryStart
        let needsZip64 = written.count >= 0xFFFF || directoryStart >= 0xFFFF_FFFF || directorySize >= 0xFFFF_FFFF
        if needsZip64 {
            let recordOffset = file.bytesWritten
            var record = ByteWriter()
            record.uint32(0x0606_4b50)
            record.uint64(44)
            record.uint16(0x0315)
            record.uint16(45)
            record.uint32(0)
            record.uint32(0)
            record.uint64(UInt64(written.count))
            record.uint64(UInt64(written.count))
            record.uint64(UInt64(directorySize))
            record.uint64(UInt64(directoryStart))
            record.uint32(0x0706_4b50)
            record.uint32(0)
            record.uint64(UInt64(recordOffset))
            record.uint32(1)
            try file.write(record.bytes)
        }
        var end = ByteWriter()
        end.uint32(0x0605_4b50)
        end.uint16(0)
        end.uint16(0)
        end.uint16(needsZip64 ? 0xFFFF : UInt16(written.count))
        end.uint16(needsZip64 ? 0xFFFF : UInt16(written.count))
        end.uint32(needsZip64 ? 0xFFFF_FFFF : UInt32(directorySize))
        end.uint32(needsZip64 ? 0xFFFF_FFFF : UInt32(directoryStart))
        end.uint16(0)
        try file.write(end.bytes)
        let size = file.bytesWritten
        try file.commit(durable: false)
        return size
    }

    package func discard() { file.discard() }
}
