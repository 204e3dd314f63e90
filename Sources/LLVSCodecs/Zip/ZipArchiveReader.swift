import CZlib
import Foundation
import LLVSSupport

/// Reads a zip archive from a local file without holding it in memory: the central directory (with ZIP64 end
/// records and extra fields, which LLVS apps' zip library writes for archives of 65,535+ entries or 4 GiB+), then
/// each entry's data on demand, inflated by zlib in pieces and checked against its size and CRC-32.
public struct ZipArchiveReader: Sendable {
    public struct Entry: Sendable {
        /// The name as stored (UTF-8; LLVS apps on Apple devices write it decomposed).
        public var name: String
        public var method: UInt16
        public var flags: UInt16
        public var crc32: UInt32
        public var compressedSize: Int64
        public var size: Int64
        package var localHeaderOffset: Int64

        public var isDirectory: Bool { name.hasSuffix("/") }
    }

    public let path: String
    public let entries: [Entry]
    private let file: ReadableFile
    /// Where the central directory starts: every entry's data must end before it.
    private let directoryOffset: Int64
    private let smallEntryInflaters = WholeEntryInflater.Pool()
    /// Entries up to this size, compressed and not, are read with one `pread` and inflated in one call.
    package static let smallEntryLimit: Int64 = 256 << 10

    public init(path: String) throws {
        self.path = path
        let file = try ReadableFile(path: path)
        self.file = file
        func bad(_ reason: String) -> ZipError { .notAZip(path: path, reason: reason) }

        // The end of central directory record: 22 bytes plus a comment of up to 65,535, found from the end.
        let tailCount = Int(min(file.size, 22 + 65_535))
        guard tailCount >= 22 else { throw bad("only \(file.size) bytes, too short for a zip") }
        let tail = [UInt8](try file.read(at: file.size - Int64(tailCount), count: tailCount))
        var endIndex: Int?
        for index in stride(from: tailCount - 22, through: 0, by: -1)
        where tail.loadUInt32(at: index) == 0x0605_4b50
            && index + 22 + Int(tail.loadUInt16(at: index + 20)) == tailCount
        {
            endIndex = index
            break
        }
        guard let endIndex else { throw bad("it has no end of central directory record") }
        let endOffset = file.size - Int64(tailCount - endIndex)
        var entryCount = Int64(tail.loadUInt16(at: endIndex + 10))
        var directorySize = Int64(tail.loadUInt32(at: endIndex + 12))
        var directoryOffset = Int64(tail.loadUInt32(at: endIndex + 16))

        // A ZIP64 locator sits just before the end record when the counts or offsets do not fit.
        if endOffset >= 20, [UInt8](try file.read(at: endOffset - 20, count: 4)).loadUInt32(at: 0) == 0x0706_4b50 {
            let locator = [UInt8](try file.read(at: endOffset - 20, count: 20))
            let recordOffset = Int64(bitPattern: locator.loadUInt64(at: 8))
            guard recordOffset >= 0, recordOffset + 56 <= endOffset - 20 else {
                throw bad("its ZIP64 end record lies outside the file")
            }
            let record = [UInt8](try file.read(at: recordOffset, count: 56))
            guard record.loadUInt32(at: 0) == 0x0606_4b50 else {
                throw bad("its ZIP64 locator points at no ZIP64 end record")
            }
            entryCount = Int64(bitPattern: record.loadUInt64(at: 32))
            directorySize = Int64(bitPattern: record.loadUInt64(at: 40))
            directoryOffset = Int64(bitPattern: record.loadUInt64(at: 48))
        }
        guard directoryOffset >= 0, directorySize >= 0, directoryOffset + directorySize <= endOffset else {
            throw bad("its central directory (\(directorySize) bytes at \(directoryOffset)) lies outside the file")
        }
        // Each directory entry takes at least 46 bytes, so a count beyond that is a lie and is not allocated for.
        guard entryCount >= 0, entryCount <= directorySize / 46 else {
            throw bad("it claims \(entryCount) entries in a \(directorySize)-byte directory")
        }
        self.directoryOffset = directoryOffset
        entries = try Self.readDirectory(
            file, offset: directoryOffset, size: directorySize, count: Int(entryCount), bad: bad)
    }

    private static func readDirectory(
        _ file: ReadableFile, offset: Int64, size: Int64, count: Int,
        bad: (String) -> ZipError
    ) throws -> [Entry] {
        var entries: [Entry] = []
        entries.reserveCapacity(count)
        var buffer: [UInt8] = []
        var bufferStart: Int64 = offset
        var position: Int64 = offset
        let end = offset + size
        /// Where `count` bytes of the directory at `position` start in `buffer` (read in pieces of 1 MiB), read in
        /// place: an archive has tens of thousands of entries, and copying each one's fields out cost more than reading them.
        func bytes(_ count: Int) throws -> Int {
            guard position + Int64(count) <= end else { throw bad("its central directory ends inside an entry") }
            if position + Int64(count) > bufferStart + Int64(buffer.count) {
                bufferStart = position
                buffer = [UInt8](
                    try file.read(at: position, count: Int(min(end - position, max(Int64(count), 1 << 20)))))
            }
            let start = Int(position - bufferStart)
            position += Int64(count)
            return start
        }
        for index in 0..<count {
            let header = try bytes(46)
            guard buffer.loadUInt32(at: header) == 0x0201_4b50 else {
                throw bad("central directory entry \(index) has no signature")
            }
            let nameCount = Int(buffer.loadUInt16(at: header + 28)),
                extraCount = Int(buffer.loadUInt16(at: header + 30))
            let commentCount = Int(buffer.loadUInt16(at: header + 32))
            var entry = Entry(
                name: "", method: buffer.loadUInt16(at: header + 10), flags: buffer.loadUInt16(at: header + 8),
                crc32: buffer.loadUInt32(at: header + 16), compressedSize: Int64(buffer.loadUInt32(at: header + 20)),
                size: Int64(buffer.loadUInt32(at: header + 24)),
                localHeaderOffset: Int64(buffer.loadUInt32(at: header + 42)))
            // The header's fields are taken before the name is read: reading it may refill the buffer.
            let name = try bytes(nameCount)
            entry.name = String(decoding: buffer[name..<(name + nameCount)], as: UTF8.self)
            if extraCount > 0 {
                let extra = try bytes(extraCount)
                try applyZip64(Array(buffer[extra..<(extra + extraCount)]), to: &entry, bad: bad)
            } else {
                try applyZip64([], to: &entry, bad: bad)
            }
            _ = try bytes(commentCount)
            entries.append(entry)
        }
        return entries
    }

    /// Replaces the 32-bit fields set to 0xFFFFFFFF with the 64-bit ones of the ZIP64 extra field (in its order:
    /// size, compressed size, local header offset).
    private static func applyZip64(_ extra: [UInt8], to entry: inout Entry, bad: (String) -> ZipError) throws {
        var index = 0
        while index + 4 <= extra.count {
            let id = extra.loadUInt16(at: index), length = Int(extra.loadUInt16(at: index + 2))
            guard index + 4 + length <= extra.count else {
                throw bad("the extra field of \(entry.name) runs past its end")
            }
            if id == 0x0001 {
                var cursor = index + 4
                func next() throws -> Int64 {
                    guard cursor + 8 <= index + 4 + length else {
                        throw bad("the ZIP64 field of \(entry.name) is too short")
                    }
                    defer { cursor += 8 }
                    return Int64(bitPattern: extra.loadUInt64(at: cursor))
                }
                if entry.size == 0xFFFF_FFFF { entry.size = try next() }
                if entry.compressedSize == 0xFFFF_FFFF { entry.compressedSize = try next() }
                if entry.localHeaderOffset == 0xFFFF_FFFF { entry.localHeaderOffset = try next() }
            }
            index += 4 + length
        }
        guard entry.size >= 0, entry.compressedSize >= 0, entry.localHeaderOffset >= 0 else {
            throw bad("\(entry.name) has a negative size or offset")
        }
    }

    /// Gives the entry's bytes to `consume` in pieces of at most 1 MiB, checking the size and CRC-32 at the end.
    public func read(_ entry: Entry, into consume: (Data) throws -> Void) throws {
        func corrupt(_ reason: String) -> ZipError { .corruptEntry(path: path, entry: entry.name, reason: reason) }
        guard entry.flags & 1 == 0 else {
            throw ZipError.unsupported(path: path, entry: entry.name, reason: "it is encrypted")
        }
        guard entry.method == 0 || entry.method == 8 else {
            throw ZipError.unsupported(
                path: path, entry: entry.name,
                reason: "compression method \(entry.method) (only stored and deflate are read)")
        }
        guard entry.localHeaderOffset + 30 <= directoryOffset else {
            throw corrupt("its local header lies outside the archive's entries")
        }
        let dataOffset = try self.dataOffset(
            of: entry, localHeader: [UInt8](try file.read(at: entry.localHeaderOffset, count: 30)))

        var crc = CRC32.Running()
        var produced: Int64 = 0
        func deliver(_ piece: Data) throws {
            produced += Int64(piece.count)
            guard produced <= entry.size else {
                throw corrupt("it holds more than the \(entry.size) bytes its directory entry says")
            }
            crc.update(piece)
            try consume(piece)
        }
        if entry.method == 0 {
            guard entry.compressedSize == entry.size else {
                throw corrupt("a stored entry of \(entry.compressedSize) bytes says it holds \(entry.size)")
            }
            var done: Int64 = 0
            while done < entry.size {
                let count = Int(min(1 << 20, entry.size - done))
                try deliver(try file.read(at: dataOffset + done, count: count))
                done += Int64(count)
            }
        } else {
            try Inflater.inflate(
                file: file, offset: dataOffset, count: entry.compressedSize, expectedSize: entry.size, into: deliver,
                corrupt: corrupt)
        }
        guard produced == entry.size else {
            throw corrupt("it holds \(produced) bytes, its directory entry says \(entry.size)")
        }
        guard crc.value == entry.crc32 else {
            throw corrupt(
                "its CRC-32 is \(String(crc.value, radix: 16)), the archive says \(String(entry.crc32, radix: 16))")
        }
    }

    /// The whole entry in memory, refused when it is larger than `limit`.
    public func data(_ entry: Entry, limit: Int64 = 64 << 20) throws -> Data {
        guard entry.size <= limit else {
            throw ZipError.corruptEntry(
                path: path, entry: entry.name, reason: "\(entry.size) bytes, over the \(limit) read into memory")
        }
        if entry.size <= Self.smallEntryLimit, entry.compressedSize <= Self.smallEntryLimit,
            let data = try smallEntryData(entry)
        {
            return data
        }
        var data = Data(capacity: Int(entry.size))
        try read(entry) { data.append($0) }
        return data
    }

    /// Where the entry's data starts, from its 30-byte local header (checked, as is that the data ends before the
    /// central directory).
    private func dataOffset(of entry: Entry, localHeader local: [UInt8]) throws -> Int64 {
        func corrupt(_ reason: String) -> ZipError { .corruptEntry(path: path, entry: entry.name, reason: reason) }
        guard local.loadUInt32(at: 0) == 0x0403_4b50 else {
            throw corrupt("no local header at offset \(entry.localHeaderOffset)")
        }
        let dataOffset =
            entry.localHeaderOffset + 30 + Int64(local.loadUInt16(at: 26)) + Int64(local.loadUInt16(at: 28))
        guard entry.compressedSize <= directoryOffset - dataOffset else {
            throw corrupt("its \(entry.compressedSize) bytes run past the archive's entries")
        }
        return dataOffset
    }

    /// A small entry read with one `pread` (local header, name, extra field and data at once) and checked as `read`
    /// checks; nil when its local header's name and extra field are longer than guessed (then `read` does it).
    private func smallEntryData(_ entry: Entry) throws -> Data? {
        func corrupt(_ reason: String) -> ZipError { .corruptEntry(path: path, entry: entry.name, reason: reason) }
        guard entry.flags & 1 == 0, entry.method == 0 || entry.method == 8 else { return nil }
        guard entry.localHeaderOffset + 30 <= directoryOffset else {
            throw corrupt("its local header lies outside the archive's entries")
        }
        // The local name is normally the directory's; 512 bytes more covers it and a usual extra field.
        let guess = 30 + Int64(entry.name.utf8.count) + 512 + entry.compressedSize
        let bytes = try file.read(
            at: entry.localHeaderOffset, count: Int(min(guess, directoryOffset - entry.localHeaderOffset)))
        let dataStart = Int(try dataOffset(of: entry, localHeader: [UInt8](bytes.prefix(30))) - entry.localHeaderOffset)
        return try bytes.withUnsafeBytes { (raw: UnsafeRawBufferPointer) -> Data? in
            guard dataStart + Int(entry.compressedSize) <= raw.count else { return nil }
            let compressed = UnsafeRawBufferPointer(rebasing: raw[dataStart..<(dataStart + Int(entry.compressedSize))])
            let data: Data
            if entry.method == 0 {
                guard entry.compressedSize == entry.size else {
                    throw corrupt("a stored entry of \(entry.compressedSize) bytes says it holds \(entry.size)")
                }
                data = Data(compressed)
            } else {
                data = try smallEntryInflaters.inflate(compressed, size: Int(entry.size), corrupt: corrupt)
            }
            guard data.count == entry.size else {
                throw corrupt("it holds \(data.count) bytes, its directory entry says \(entry.size)")
            }
            let crc = CRC32.checksum(data)
            guard crc == entry.crc32 else {
                throw corrupt(
                    "its CRC-32 is \(String(crc, radix: 16)), the archive says \(String(entry.crc32, radix: 16))")
            }
            return data
        }
    }
}
