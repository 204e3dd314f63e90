import Foundation
import LLVSSupport

/// How FileStorage lays out one version's file:
///
///     record*  header-JSON  header-length:u32  header-crc32:u32  "LLVSVER1"
///
/// and each record as `tag:u8 length:u32 crc32:u32 payload`, the tag being the zone with the encoding's bit
/// (`RecordEncoding`): length and CRC are those of the payload as stored. The header sits at the end so that records
/// can be streamed to disk before the header (which names the map root) is known. Every length is checked against
/// the file size and every payload against its CRC, so a truncated or damaged file gives an error, not garbage.
enum RecordFraming {
    /// The tag byte of a record of `zone` kept in `encoding`.
    static func tag(_ zone: StorageZone, _ encoding: RecordEncoding) -> UInt8 {
        RecordTag(zone: zone, encoding: encoding).byte
    }

    /// The zone and encoding a tag byte names; nil for a tag no build writes.
    static func parse(tag: UInt8) -> (zone: StorageZone, encoding: RecordEncoding)? {
        RecordTag(byte: tag).map { ($0.zone, $0.encoding) }
    }

    static let recordHeaderSize = 9
    static let trailerSize = 16
    static let magic: [UInt8] = Array("LLVSVER1".utf8)

    static func frame(_ payload: Data, zone: StorageZone, encoding: RecordEncoding = .plain) -> [UInt8] {
        var writer = ByteWriter()
        writer.byte(tag(zone, encoding))
        writer.uint32(UInt32(payload.count))
        writer.uint32(payload.withUnsafeBytes { CRC32.checksum($0) })
        return writer.bytes
    }

    /// Appends `payload` framed to `bytes`, without making the frame an array of its own: a staging store appends
    /// several records per version for every version it imports.
    static func appendFramed(
        _ payload: Data, zone: StorageZone, encoding: RecordEncoding = .plain, to bytes: inout [UInt8]
    ) {
        let length = UInt32(payload.count)
        payload.withUnsafeBytes { raw in
            let crc = CRC32.checksum(raw)
            bytes.append(tag(zone, encoding))
            for shift in stride(from: UInt32(0), to: 32, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: length >> shift))
            }
            for shift in stride(from: UInt32(0), to: 32, by: 8) {
                bytes.append(UInt8(truncatingIfNeeded: crc >> shift))
            }
            bytes.append(contentsOf: raw)
        }
    }

    /// Checks a framed record read from `path` and returns its payload as stored, with its encoding.
    static func unframe(
        _ framed: Data, expectedLength: Int64, zone: StorageZone, path: String, offset: Int64
    ) throws -> StoredRecord {
        var reader = ByteReader(framed.prefix(recordHeaderSize))
        func corrupt(_ reason: String) -> StoreError {
            .corruptFile(path: path, reason: "record at offset \(offset): \(reason)")
        }
        do {
            let storedTag = try reader.byte()
            let length = try reader.uint32()
            let crc = try reader.uint32()
            guard let stored = parse(tag: storedTag), stored.zone == zone else {
                throw corrupt("expected zone \(zone.rawValue), found tag \(storedTag)")
            }
            guard Int64(length) == expectedLength else {
                throw corrupt("length \(length) where \(expectedLength) was expected")
            }
            let payload = framed.dropFirst(recordHeaderSize)
            guard payload.withUnsafeBytes({ CRC32.checksum($0) }) == crc else { throw corrupt("checksum mismatch") }
            return StoredRecord(bytes: Data(payload), encoding: stored.encoding)
        } catch let failure as ByteReader.Failure {
            throw corrupt(failure.description)
        }
    }

    static func trailer(headerLength: Int, headerCRC: UInt32) -> [UInt8] {
        var writer = ByteWriter()
        writer.uint32(UInt32(headerLength))
        writer.uint32(headerCRC)
        return writer.bytes + magic
    }

    /// Reads the header at the end of a version file.
    static func readHeader(of file: ReadableFile) throws -> StoredVersion {
        try VersionBundle.readHeader(size: file.size, source: file.path) { offset, count in
            try file.read(at: offset, count: count)
        }.0
    }
}
