import Foundation
import LLVSSupport

/// One version in portable form: its records (value data and map nodes, each framed with zone, length and
/// CRC-32) followed by its header. This is the byte layout of a FileStorage version file, and what snapshots
/// carry for every storage: a record's location offset is its byte offset in the bundle, so map nodes written
/// by one storage are valid in another.
public struct VersionBundle: Sendable {
    public struct Record: Sendable {
        public var offset: Int64
        public var zone: StorageZone
        /// The bytes as stored, and how (`encoding`).
        public var data: Data
        public var encoding: RecordEncoding

        /// A value record a prune released: zeros in its place, frame and all, as a file store's bundle keeps it.
        public var isReleased = false

        public init(offset: Int64, zone: StorageZone, data: Data, encoding: RecordEncoding = .plain) {
            self.offset = offset
            self.zone = zone
            self.data = data
            self.encoding = encoding
        }

        /// The place of a released value record of `length` bytes.
        public init(released offset: Int64, length: Int64) {
            self.init(offset: offset, zone: .values, data: Data(count: Int(length)))
            isReleased = true
        }
    }

    public var header: StoredVersion
    public var records: [Record]

    /// The bytes a record of `length` bytes takes in a bundle, so storages that do not write bundles directly
    /// can still hand out the same offsets.
    public static func framedSize(ofRecordWithLength length: Int) -> Int64 {
        Int64(RecordFraming.recordHeaderSize + length)
    }

    /// Encodes records (in offset order, starting at 0) and a header.
    public static func encode(header: StoredVersion, records: [Record]) throws -> Data {
        var bundle = Data()
        for record in records {
            if record.isReleased {
                bundle.append(Data(count: RecordFraming.recordHeaderSize + record.data.count))
                continue
            }
            bundle.append(contentsOf: RecordFraming.frame(record.data, zone: record.zone, encoding: record.encoding))
            bundle.append(record.data)
        }
        let encoded = header.encoded()
        bundle.append(encoded)
        bundle.append(
            contentsOf: RecordFraming.trailer(
                headerLength: encoded.count, headerCRC: encoded.withUnsafeBytes { CRC32.checksum($0) }))
        return bundle
    }

    /// Decodes and checks a whole bundle; `source` names it in errors. `released` (offset → length) are records its
    /// writer released, zeros in their places: they are stepped over, not returned.
    public static func decode(_ data: Data, source: String, released: [Int64: Int64] = [:]) throws -> VersionBundle {
        let (header, bodyLength) = try readHeader(size: Int64(data.count), source: source) { offset, count in
            Data(data[data.startIndex + Int(offset)..<data.startIndex + Int(offset) + count])
        }
        var records: [Record] = []
        var offset: Int64 = 0
        while offset < bodyLength {
            if let length = released[offset] {
                let end = offset + Int64(RecordFraming.recordHeaderSize) + length
                guard length >= 0, end <= bodyLength else {
                    throw StoreError.corruptFile(
                        path: source, reason: "released record at offset \(offset) runs past the records")
                }
                offset = end
                continue
            }
            guard bodyLength - offset >= Int64(RecordFraming.recordHeaderSize) else {
                throw StoreError.corruptFile(
                    path: source, reason: "a record header at offset \(offset) runs into the version header")
            }
            var reader = ByteReader(
                data[data.startIndex + Int(offset)..<data.startIndex + Int(offset) + RecordFraming.recordHeaderSize])
            let tag = try reader.byte()
            let length = Int64(try reader.uint32())
            guard let (zone, _) = RecordFraming.parse(tag: tag) else {
                throw StoreError.corruptFile(path: source, reason: "record at offset \(offset) has unknown tag \(tag)")
            }
            let end = offset + Int64(RecordFraming.recordHeaderSize) + length
            guard end <= bodyLength else {
                throw StoreError.corruptFile(path: source, reason: "record at offset \(offset) runs past the records")
            }
            let framed = data[data.startIndex + Int(offset)..<data.startIndex + Int(end)]
            let payload = try RecordFraming.unframe(
                Data(framed), expectedLength: length, zone: zone, path: source, offset: offset)
            records.append(Record(offset: offset, zone: zone, data: payload.bytes, encoding: payload.encoding))
            offset = end
        }
        return VersionBundle(header: header, records: records)
    }

    /// Reads the header from the end of a bundle of `size` bytes through `read(offset, count)`; returns it and the
    /// length of the records before it.
    static func readHeader(
        size: Int64, source: String, read: (Int64, Int) throws -> Data
    ) throws -> (StoredVersion, Int64) {
        func corrupt(_ reason: String) -> StoreError { .corruptFile(path: source, reason: reason) }
        let trailerSize = Int64(RecordFraming.trailerSize)
        guard size >= trailerSize else { throw corrupt("only \(size) bytes, too short for a version") }
        let trailer = try read(size - trailerSize, RecordFraming.trailerSize)
        guard Array(trailer.suffix(8)) == RecordFraming.magic else {
            throw corrupt("it does not end with the LLVS version marker (truncated or not a version)")
        }
        var reader = ByteReader(trailer.prefix(8))
        let headerLength = Int64(try reader.uint32())
        let headerCRC = try reader.uint32()
        guard headerLength > 0, headerLength <= size - trailerSize else {
            throw corrupt("header length \(headerLength) does not fit")
        }
        let header = try read(size - trailerSize - headerLength, Int(headerLength))
        guard header.withUnsafeBytes({ CRC32.checksum($0) }) == headerCRC else {
            throw corrupt("header checksum mismatch")
        }
        return (try StoredVersion(decoding: header, source: source), size - trailerSize - headerLength)
    }
}
