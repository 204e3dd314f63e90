import Foundation

/// Microsoft's QuickXorHash, the checksum OneDrive reports for every file (`file.hashes.quickXorHash`). Each byte
/// is XORed into a 160-bit circular register at a bit position that advances 11 bits per byte; the length is then
/// XORed into the last 8 bytes. libcrypto has no such hash, so it is here, fed in pieces like the others.
public final class QuickXorHash {
    package static let widthInBits = 160
    package static let shift = 11

    /// The register as three 64-bit cells, the last holding only 32 bits.
    private var cells: [UInt64] = [0, 0, 0]
    /// The bit position the next byte goes to.
    private var position = 0
    private var length: UInt64 = 0

    public init() {}

    public func update(_ data: Data) {
        data.withUnsafeBytes { raw in
            for byte in raw.bindMemory(to: UInt8.self) { add(byte) }
        }
        length &+= UInt64(data.count)
    }

    private func add(_ byte: UInt8) {
        let cell = position / 64
        let offset = position % 64
        let bitsInCell = cell == 2 ? Self.widthInBits % 64 : 64
        cells[cell] ^= UInt64(byte) << UInt64(offset)
        if offset > bitsInCell - 8 {
            // The byte straddles the end of this cell: its high bits go to the start of the next (circularly).
            cells[cell == 2 ? 0 : cell + 1] ^= UInt64(byte) >> UInt64(bitsInCell - offset)
        }
        position = (position + Self.shift) % Self.widthInBits
    }

    /// The 20-byte hash; the hash is finished after this.
    public func finalize() -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: Self.widthInBits / 8)
        for index in 0..<bytes.count {
            bytes[index] = UInt8(truncatingIfNeeded: cells[index / 8] >> UInt64((index % 8) * 8))
        }
        for index in 0..<8 { bytes[bytes.count - 8 + index] ^= UInt8(truncatingIfNeeded: length >> UInt64(index * 8)) }
        return bytes
    }
}
