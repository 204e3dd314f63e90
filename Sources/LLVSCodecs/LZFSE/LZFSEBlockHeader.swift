import LLVSSupport
/// The header of an LZFSE-compressed block (`bvx1` with plain tables, `bvx2` with packed ones), checked against
/// the format's limits before any table is built from it.
package struct LZFSEBlockHeader {
    package static let literalSymbols = 256, literalStates = 1024
    package static let lSymbols = 20, lStates = 64
    package static let mSymbols = 20, mStates = 64
    package static let dSymbols = 64, dStates = 256
    package static let maximumLiterals = 40_000, maximumMatches = 10_000
    package static let maximumMatchLength = 2359

    package var rawCount: UInt32 = 0
    package var literalCount = 0
    package var matchCount = 0
    package var literalPayloadCount = 0
    package var lmdPayloadCount = 0
    package var literalBits = 0
    package var literalStates: [Int] = [0, 0, 0, 0]
    package var lmdBits = 0
    package var lState = 0, mState = 0, dState = 0
    package var lFrequencies = [UInt16](repeating: 0, count: lSymbols)
    package var mFrequencies = [UInt16](repeating: 0, count: mSymbols)
    package var dFrequencies = [UInt16](repeating: 0, count: dSymbols)
    package var literalFrequencies = [UInt16](repeating: 0, count: literalSymbols)
    /// Where the payload (literals, then L/M/D) starts and ends in the stream.
    package var payloadStart = 0
    package var payloadEnd = 0

    /// The most bytes such a block can produce, whatever its header claims.
    package var maximumRawCount: Int { literalCount + matchCount * Self.maximumMatchLength }

    package init(_ input: [UInt8], at offset: Int, magic: UInt32) throws(LZFSEError) {
        func corrupt(_ reason: String) -> LZFSEError { .corrupt(offset: offset, reason: reason) }
        if magic == LZFSE.lzfseV2 {
            guard offset + 32 <= input.count else { throw .truncated(offset: offset) }
            rawCount = input.loadUInt32(at: offset + 4)
            let v0 = input.loadUInt64(at: offset + 8), v1 = input.loadUInt64(at: offset + 16),
                v2 = input.loadUInt64(at: offset + 24)
            func field(_ v: UInt64, _ start: Int, _ bits: Int) -> Int {
                Int((v >> UInt64(start)) & ((1 << UInt64(bits)) - 1))
            }
            literalCount = field(v0, 0, 20)
            literalPayloadCount = field(v0, 20, 20)
            matchCount = field(v0, 40, 20)
            literalBits = field(v0, 60, 3) - 7
            literalStates = [field(v1, 0, 10), field(v1, 10, 10), field(v1, 20, 10), field(v1, 30, 10)]
            lmdPayloadCount = field(v1, 40, 20)
            lmdBits = field(v1, 60, 3) - 7
            let headerSize = field(v2, 0, 32)
            lState = field(v2, 32, 10)
            mState = field(v2, 42, 10)
            dState = field(v2, 52, 10)
            guard headerSize >= 32 else {
                throw corrupt("header size \(headerSize) is under the 32 bytes of its fixed fields")
            }
            guard offset + headerSize <= input.count else { throw .truncated(offset: offset) }
            if headerSize > 32 {
                try unpackFrequencies(input, from: offset + 32, to: offset + headerSize, blockOffset: offset)
            }
            payloadStart = offset + headerSize
        } else {
            // bvx1: every field as a little-endian integer, then the four tables as 16-bit counts (772 bytes with padding).
            let size = 772
            guard offset + size <= input.count else { throw .truncated(offset: offset) }
            rawCount = input.loadUInt32(at: offset + 4)
            literalCount = Int(input.loadUInt32(at: offset + 12))
            matchCount = Int(input.loadUInt32(at: offset + 16))
            literalPayloadCount = Int(input.loadUInt32(at: offset + 20))
            lmdPayloadCount = Int(input.loadUInt32(at: offset + 24))
            literalBits = Int(Int32(bitPattern: input.loadUInt32(at: offset + 28)))
            literalStates = (0..<4).map { Int(input.loadUInt16(at: offset + 32 + 2 * $0)) }
            lmdBits = Int(Int32(bitPattern: input.loadUInt32(at: offset + 40)))
            lState = Int(input.loadUInt16(at: offset + 44))
            mState = Int(input.loadUInt16(at: offset + 46))
            dState = Int(input.loadUInt16(at: offset + 48))
            var cursor = offset + 50
            func table(_ count: Int) -> [UInt16] {
                defer { cursor += 2 * count }
                return (0..<count).map { input.loadUInt16(at: cursor + 2 * $0) }
            }
            lFrequencies = table(Self.lSymbols)
            mFrequencies = table(Self.mSymbols)
            dFrequencies = table(Self.dSymbols)
            literalFrequencies = table(Self.literalSymbols)
            payloadStart = offset + size
        }
        payloadEnd = payloadStart + literalPayloadCount + lmdPayloadCount
        guard payloadEnd <= input.count else { throw .truncated(offset: input.count) }
        guard literalCount <= Self.maximumLiterals else {
            throw corrupt("\(literalCount) literals, over the \(Self.maximumLiterals) a block holds")
        }
        guard matchCount <= Self.maximumMatches else {
            throw corrupt("\(matchCount) matches, over the \(Self.maximumMatches) a block holds")
        }
        guard literalStates.allSatisfy({ $0 < Self.literalStates }), lState < Self.lStates, mState < Self.mStates,
            dState < Self.dStates
        else {
            throw corrupt("an initial state is out of range")
        }
        for (name, table, states) in [
            ("literal", literalFrequencies, Self.literalStates), ("L", lFrequencies, Self.lStates),
            ("M", mFrequencies, Self.mStates), ("D", dFrequencies, Self.dStates),
        ] {
            guard table.reduce(0, { $0 + Int($1) }) <= states else {
                throw corrupt("the \(name) frequencies add up to more than \(states) states")
            }
        }
        guard (-7...0).contains(literalBits), (-7...0).contains(lmdBits) else {
            throw corrupt("a bit count is out of range")
        }
    }

    /// Reads the four frequency tables of a `bvx2` header: each count is a prefix code of 2 to 14 bits, read from the
    /// least significant bit; the tables must end exactly at the header's end.
    private mutating func unpackFrequencies(
        _ input: [UInt8], from start: Int, to end: Int, blockOffset: Int
    ) throws(LZFSEError) {
        var position = start
        var accumulator: UInt32 = 0
        var available = 0
        var counts: [UInt16] = []
        counts.reserveCapacity(360)
        for _ in 0..<(Self.lSymbols + Self.mSymbols + Self.dSymbols + Self.literalSymbols) {
            while position < end && available + 8 <= 32 {
                accumulator |= UInt32(input[position]) << UInt32(available)
                available += 8
                position += 1
            }
            let (value, bits) = Self.frequencyCode(accumulator)
            guard bits <= available else {
                throw .corrupt(offset: blockOffset, reason: "the frequency tables end early")
            }
            counts.append(value)
            accumulator >>= UInt32(bits)
            available -= bits
        }
        guard available < 8, position == end else {
            throw .corrupt(offset: blockOffset, reason: "the frequency tables do not end at the header's end")
        }
        lFrequencies = Array(counts[0..<20])
        mFrequencies = Array(counts[20..<40])
        dFrequencies = Array(counts[40..<104])
        literalFrequencies = Array(counts[104..<360])
    }

    /// The value and bit length of the frequency code in the low bits of `bits`.
    private static let codeLengths: [Int] = [
        2, 3, 2, 5, 2, 3, 2, 8, 2, 3, 2, 5, 2, 3, 2, 14, 2, 3, 2, 5, 2, 3, 2, 8, 2, 3, 2, 5, 2, 3, 2, 14,
    ]
    private static let codeValues: [UInt16] = [
        0, 2, 1, 4, 0, 3, 1, 0, 0, 2, 1, 5, 0, 3, 1, 0, 0, 2, 1, 6, 0, 3, 1, 0, 0, 2, 1, 7, 0, 3, 1, 0,
    ]

    private static func frequencyCode(_ bits: UInt32) -> (UInt16, Int) {
        let low = Int(bits & 31)
        switch codeLengths[low] {
        case 8: return (8 + UInt16((bits >> 4) & 0xF), 8)
        case 14: return (24 + UInt16((bits >> 4) & 0x3FF), 14)
        case let length: return (codeValues[low], length)
        }
    }
}
