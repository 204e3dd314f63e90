import Foundation
import LLVSCodecs

/// How a record's bytes are kept. The raw value is the bit it sets in a record's tag byte (`RecordFraming`) and in
/// SQLite's zone column, so a store's records say for themselves how to read them.
public enum RecordEncoding: UInt8, Sendable, Equatable {
    /// The bytes as given.
    case plain = 0
    /// One zstd frame, with the size of what it holds.
    case zstd = 0x80
}

/// A record as storage keeps it: its bytes and their encoding. Exchanges that move compressed records as they are
/// (the compact remote format) read and write this; everything else reads `decoded`.
public struct StoredRecord: Sendable, Equatable {
    public var bytes: Data
    public var encoding: RecordEncoding

    public init(bytes: Data, encoding: RecordEncoding) {
        self.bytes = bytes
        self.encoding = encoding
    }

    /// `data` compressed when that saves enough (`Zstd.compressedIfSmaller`), else as it is.
    public static func compressedIfSmaller(_ data: Data) -> StoredRecord {
        Zstd.compressedIfSmaller(data).map { StoredRecord(bytes: $0, encoding: .zstd) }
            ?? StoredRecord(bytes: data, encoding: .plain)
    }

    /// The data the record holds; `size`, when known, is checked.
    /// - Throws: `ZstdError` when compressed bytes are damaged or hold another size.
    public func decoded(size: Int64? = nil) throws -> Data {
        switch encoding {
        case .plain:
            if let size, size != Int64(bytes.count) {
                throw ZstdError.sizeMismatch(expected: size, found: Int64(bytes.count))
            }
            return bytes
        case .zstd:
            return try Zstd.decompress(bytes, expectedSize: size)
        }
    }

    /// The data of the record stored at `location`, a damaged one reported as a corrupt record there.
    func decoded(of location: RecordLocation) throws -> Data {
        do { return try decoded() } catch let error as ZstdError { throw Self.corrupt(location, error) }
    }

    static func corrupt(_ location: RecordLocation, _ error: ZstdError) -> StoreError {
        .corruptFile(
            path: "version \(location.versionId)", reason: "the record at offset \(location.offset): \(error)")
    }
}

/// A record's tag: its zone with its encoding's bit, as version bundles frame records and SQLite rows keep them.
public struct RecordTag: Sendable, Equatable {
    public var zone: StorageZone
    public var encoding: RecordEncoding

    public init(zone: StorageZone, encoding: RecordEncoding) {
        self.zone = zone
        self.encoding = encoding
    }

    /// The tag a byte holds; nil for one no build writes.
    public init?(byte: UInt8) {
        guard let zone = StorageZone(rawValue: byte & 0x7f), let encoding = RecordEncoding(rawValue: byte & 0x80) else {
            return nil
        }
        self.init(zone: zone, encoding: encoding)
    }

    public var byte: UInt8 { zone.rawValue | encoding.rawValue }
}
