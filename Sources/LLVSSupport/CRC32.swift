import CZlib
import Foundation

/// CRC-32 through zlib, used to detect torn or corrupted records in storage files (and by zip archives).
public enum CRC32 {
    public static func checksum(_ bytes: UnsafeRawBufferPointer) -> UInt32 {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return 0 }
        return UInt32(crc32(0, base.assumingMemoryBound(to: Bytef.self), uInt(bytes.count)))
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
            value = data.withUnsafeBytes { raw in
                guard let base = raw.baseAddress, raw.count > 0 else { return value }
                return UInt32(crc32(uLong(value), base.assumingMemoryBound(to: Bytef.self), uInt(raw.count)))
            }
        }
    }
}
