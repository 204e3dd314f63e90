import CDeflate
import Foundation

/// CRC-32 (the zip and zlib polynomial), used to detect torn or corrupted records in storage files and by zip
/// archives. Computed by libdeflate, whose folding with carry-less multiplication runs several times faster than
/// zlib's table on every record a store reads or writes.
public enum CRC32 {
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        return libdeflate_crc32(0, base, bytes.count)
    }

    public static func checksum(_ bytes: [UInt8]) -> UInt32 {
        bytes.withUnsafeBytes { checksum($0) }
    }

    public static func checksum(_ data: Data) -> UInt32 {
        data.withUnsafeBytes { checksum($0) }
    }

    /// A checksum over data given in pieces.
    public struct Running: Sendable {
        public private(set) var value: UInt32 = 0

        public init() {}

        public mutating func update(_ data: Data) {
            data.withUnsafeBytes { update($0) }
        }

        public mutating func update(_ bytes: UnsafeRawBufferPointer) {
            guard let base = bytes.baseAddress, bytes.count > 0 else { return }
            value = libdeflate_crc32(value, base, bytes.count)
        }
    }
}
