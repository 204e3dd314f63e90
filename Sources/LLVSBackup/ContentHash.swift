import Foundation
import LLVS
import LLVSSupport

/// The SHA-256 of a piece of content: what names a chunk or a folder listing in a backup, so equal content is
/// stored once whoever wrote it.
public struct ContentHash: Hashable, Sendable, Comparable, CustomStringConvertible {
    public let bytes: [UInt8]

    public init(of data: some ContiguousBytes) {
        bytes = data.withUnsafeBytes { SHA256.digest(raw: $0) }
    }

    /// From 32 stored bytes; nil for any other count.
    public init?(bytes: some Collection<UInt8>) {
        guard bytes.count == 32 else { return nil }
        self.bytes = Array(bytes)
    }

    public init?(hex: String) {
        let digits = Array(hex.utf8)
        guard digits.count == 64 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(32)
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 48...57: c - 48
            case 97...102: c - 87
            default: nil
            }
        }
        for index in stride(from: 0, to: 64, by: 2) {
            guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
        }
        bytes = out
    }

    public var hex: String { SHA256.hexString(bytes) }
    public var description: String { hex }

    public static func < (a: ContentHash, b: ContentHash) -> Bool { a.bytes.lexicographicallyPrecedes(b.bytes) }
}
