import Foundation
import LLVSCodecs
import LLVSSupport

/// A file that holds many versions' records after a prune, laid out for space rather than as written
/// (`FileStorage+Compaction`):
///
///     "LLVSCPK1"  block*  directory  directoryOffset:u64 directoryLength:u64 "LLVSCPK1"
///
/// A block is either one value record, framed as in a version file and copied as it was, or a *map frame*: one zstd
/// frame of map records, each framed as in a version file but plain. Map nodes of successive versions differ in a few
/// entries each, so frames of nodes that lie at the same place in the trie compress several times better together
/// than each node alone. The directory (zstd, sealed with a CRC-32 like the other small files, `ChecksummedBytes`)
/// says where every record of every version lies, by the offset it has in its version's bundle, which is what every
/// map node and header names: records move, their locations do not.
struct CompactedPackDirectory: Sendable {
    /// Where a record of a version lies in the pack.
    enum Placement: Sendable, Equatable {
        /// A value record, frame and all, at this offset of the pack.
        case direct(offset: Int64)
        /// A map record in map frame `frame`, its frame at `offset` of the frame's content; `crc32` and `encoding` are
        /// those of the record as its version stored it, so its bundle can be given back byte for byte.
        case framed(frame: UInt32, offset: UInt32, crc32: UInt32, encoding: RecordEncoding)
        /// A record released before the pack was made: nothing of it is in the pack.
        case released
    }

    struct Record: Sendable, Equatable {
        /// The record's offset in its version's bundle, and the length of its payload there.
        var offset: Int64
        var length: Int64
        var zone: StorageZone
        var placement: Placement
    }

    struct Version: Sendable {
        var header: StoredVersion
        /// The size of the version's bundle: its records, header and trailer.
        var bundleLength: Int64
        /// In bundle order.
        var records: [Record]
    }

    struct Frame: Sendable, Equatable {
        var offset: Int64
        var storedLength: Int64
        var contentLength: Int64
    }

    var frames: [Frame]
    var versions: [Version]

    static let magic = Data("LLVSCPK1".utf8)
    static let directoryMagic = Data("LLVSCPD1".utf8)
    static let trailerSize = 24

    func encoded() -> Data {
        var body = ByteWriter()
        body.varint(UInt64(frames.count))
        for frame in frames {
            body.varint(UInt64(frame.offset))
            body.varint(UInt64(frame.storedLength))
            body.varint(UInt64(frame.contentLength))
        }
        body.varint(UInt64(versions.count))
        for version in versions {
            body.data(version.header.encoded())
            body.varint(UInt64(version.bundleLength))
            body.varint(UInt64(version.records.count))
            for record in version.records {
                body.varint(UInt64(record.offset))
                body.varint(UInt64(record.length))
                body.byte(record.zone.rawValue)
                switch record.placement {
                case .direct(let offset):
                    body.byte(0)
                    body.varint(UInt64(offset))
                case .framed(let frame, let offset, let crc32, let encoding):
                    body.byte(1)
                    body.varint(UInt64(frame))
                    body.varint(UInt64(offset))
                    body.uint32(crc32)
                    body.byte(encoding.rawValue)
                case .released:
                    body.byte(2)
                }
            }
        }
        let content = Data(body.bytes)
        var writer = ByteWriter()
        writer.append(Self.directoryMagic)
        writer.varint(UInt64(content.count))
        writer.append(Zstd.compressedIfSmaller(content) ?? content)
        ChecksummedBytes.seal(&writer)
        return Data(writer.bytes)
    }

    /// Reads a directory; `path` names the pack in errors, `packSize` bounds every offset in it.
    init(decoding data: Data, path: String, packSize: Int64) throws {
        func corrupt(_ reason: String) -> StoreError { .corruptFile(path: path, reason: "pack directory: \(reason)") }
        var sealed: ByteReader
        do {
            sealed = try ChecksummedBytes.body(
                of: data, magic: Self.directoryMagic, what: "a compacted pack's directory", path: path)
        } catch ExchangeError.malformedFile(_, let reason) {
            throw corrupt(reason)
        }
        do {
            let contentLength = try sealed.int(limit: Int(Int32.max))
            let stored = Data(try sealed.raw(sealed.remaining))
            let content =
                stored.count == contentLength
                ? stored : try Zstd.decompress(stored, expectedSize: Int64(contentLength))
            var reader = ByteReader(content)
            let frameCount = try reader.int(limit: content.count)
            var frames: [Frame] = []
            frames.reserveCapacity(frameCount)
            for _ in 0..<frameCount {
                let frame = Frame(
                    offset: Int64(try reader.int(limit: Int(packSize))),
                    storedLength: Int64(try reader.int(limit: Int(packSize))),
                    contentLength: Int64(try reader.int(limit: Int(Int32.max))))
                guard frame.offset >= 0, frame.storedLength >= 0, frame.offset + frame.storedLength <= packSize
                else { throw corrupt("a map frame at \(frame.offset) runs past the pack") }
                frames.append(frame)
            }
            let versionCount = try reader.int(limit: content.count)
            var versions: [Version] = []
            versions.reserveCapacity(versionCount)
            for _ in 0..<versionCount {
                let header = try StoredVersion(decoding: try reader.data(), source: path)
                let bundleLength = Int64(try reader.int(limit: Int(Int64.max >> 2)))
                let recordCount = try reader.int(limit: content.count)
                var records: [Record] = []
                records.reserveCapacity(recordCount)
                for _ in 0..<recordCount {
                    let offset = Int64(try reader.int(limit: Int(bundleLength)))
                    let length = Int64(try reader.int(limit: Int(UInt32.max)))
                    guard let zone = StorageZone(rawValue: try reader.byte()) else {
                        throw corrupt("a record of version \(header.version.id) has an unknown zone")
                    }
                    let placement: Placement
                    switch try reader.byte() {
                    case 0:
                        let at = Int64(try reader.int(limit: Int(packSize)))
                        guard at + Int64(RecordFraming.recordHeaderSize) + length <= packSize else {
                            throw corrupt("a record of version \(header.version.id) runs past the pack")
                        }
                        placement = .direct(offset: at)
                    case 1:
                        let frame = try reader.int(limit: Int(UInt32.max))
                        guard frame < frames.count else {
                            throw corrupt("a map record of version \(header.version.id) names a frame the pack lacks")
                        }
                        let at = try reader.int(limit: Int(frames[frame].contentLength))
                        let crc = try reader.uint32()
                        guard let encoding = RecordEncoding(rawValue: try reader.byte()) else {
                            throw corrupt("a map record of version \(header.version.id) has an unknown encoding")
                        }
                        placement = .framed(
                            frame: UInt32(frame), offset: UInt32(at), crc32: crc, encoding: encoding)
                    case 2:
                        placement = .released
                    case let kind:
                        throw corrupt("unknown placement \(kind)")
                    }
                    guard offset >= 0, offset + Int64(RecordFraming.recordHeaderSize) + length <= bundleLength else {
                        throw corrupt("a record of version \(header.version.id) runs past its bundle")
                    }
                    guard
                        records.last.map({ $0.offset + Int64(RecordFraming.recordHeaderSize) + $0.length <= offset })
                            ?? true
                    else { throw corrupt("the records of version \(header.version.id) overlap or are out of order") }
                    records.append(Record(offset: offset, length: length, zone: zone, placement: placement))
                }
                versions.append(Version(header: header, bundleLength: bundleLength, records: records))
            }
            guard reader.isAtEnd else { throw corrupt("extra bytes after the last version") }
            self.frames = frames
            self.versions = versions
        } catch let failure as ByteReader.Failure {
            throw corrupt(failure.description)
        } catch let failure as ZstdError {
            throw corrupt("\(failure)")
        }
    }

    init(frames: [Frame], versions: [Version]) {
        self.frames = frames
        self.versions = versions
    }

    /// The trailer that ends a pack whose directory starts at `offset` and is `length` bytes long.
    static func trailer(directoryOffset offset: Int64, length: Int64) -> Data {
        var writer = ByteWriter()
        writer.uint64(UInt64(offset))
        writer.uint64(UInt64(length))
        writer.append(magic)
        return Data(writer.bytes)
    }

    /// Reads the directory of the pack open as `file`.
    static func read(from file: ReadableFile) throws -> CompactedPackDirectory {
        func corrupt(_ reason: String) -> StoreError { .corruptFile(path: file.path, reason: reason) }
        let size = file.size
        guard size >= Int64(magic.count + trailerSize) else { throw corrupt("too short for a compacted pack") }
        guard try file.read(at: 0, count: magic.count) == magic else {
            throw corrupt("it does not start with LLVSCPK1")
        }
        let trailer = try file.read(at: size - Int64(trailerSize), count: trailerSize)
        guard trailer.suffix(magic.count) == magic else {
            throw corrupt("it does not end with LLVSCPK1 (cut short?)")
        }
        var reader = ByteReader(trailer.prefix(16))
        let offset = Int64(try reader.uint64()), length = Int64(try reader.uint64())
        guard offset >= Int64(magic.count), length > 0, offset + length == size - Int64(trailerSize) else {
            throw corrupt("its directory's place (\(offset), \(length) bytes) does not fit")
        }
        return try CompactedPackDirectory(
            decoding: try file.read(at: offset, count: Int(length)), path: file.path, packSize: offset)
    }
}
