import LLVSSupport
/// Finite State Entropy decoding as LZFSE uses it: tables built from normalized symbol frequencies, and a bit
/// stream read backwards from the end of its payload.
package struct FSEBackwardBits {
    private let input: [UInt8]
    /// Bytes before `lowerBound` are not this stream's (a flush may look back past the payload into the block
    /// header, as Apple's decoder does, but never before the start of the stream).
    private let lowerBound: Int
    private(set) var position: Int
    private var accumulator: UInt64 = 0
    private var available = 0

    /// Starts at `end`, taking the first 8 (or 7 when `extraBits` is 0) bytes below it; `extraBits` (−7…0) drops
    /// the unused high bits of the last byte written.
    package init(_ input: [UInt8], end: Int, lowerBound: Int, extraBits: Int) throws(LZFSEError) {
        self.input = input
        self.lowerBound = lowerBound
        let count = extraBits == 0 ? 7 : 8
        guard end - count >= lowerBound, end <= input.count else { throw .truncated(offset: end) }
        position = end - count
        for index in 0..<count { accumulator |= UInt64(input[position + index]) << UInt64(8 * index) }
        available = extraBits + (extraBits == 0 ? 56 : 64)
        guard (56..<64).contains(available), available == 64 || accumulator >> UInt64(available) == 0 else {
            throw .corrupt(offset: end, reason: "the bit stream's padding is not zero")
        }
    }

    /// Refills the accumulator to 56…63 bits.
    package mutating func refill() throws(LZFSEError) {
        let bytes = (63 - available) / 8
        guard bytes > 0 else { return }
        guard position - bytes >= lowerBound else {
            throw .corrupt(offset: position, reason: "a bit stream runs past its start")
        }
        position -= bytes
        var incoming: UInt64 = 0
        for index in 0..<bytes { incoming |= UInt64(input[position + index]) << UInt64(8 * index) }
        accumulator = accumulator << UInt64(8 * bytes) | incoming
        available += 8 * bytes
    }

    /// Takes the next `count` bits (the most significant ones held).
    package mutating func take(_ count: Int) throws(LZFSEError) -> UInt64 {
        guard count <= available else { throw .corrupt(offset: position, reason: "a bit stream runs dry") }
        available -= count
        let result = accumulator >> UInt64(available)
        accumulator &= available == 0 ? 0 : (UInt64.max >> UInt64(64 - available))
        return result
    }
}

/// One state of a decoding table: the bits to read for the next state, its base, and what the state emits (a
/// literal byte, or a base value plus extra bits for L, M and D).
package struct FSEEntry {
    package var stateBits: UInt8 = 0
    package var extraBits: UInt8 = 0
    package var delta: Int32 = 0
    package var base: Int32 = 0
}

package enum FSE {
    /// Builds the table of `states` entries for `frequencies` (sum at most `states`, checked by the header);
    /// symbol i emits `bases[i]` plus `extra[i]` extra bits (for literals, base is the byte and extra is 0).
    package static func table(
        states: Int, frequencies: [UInt16], extra: [UInt8]? = nil, bases: [Int32]? = nil
    ) -> [FSEEntry] {
        var table = [FSEEntry](repeating: FSEEntry(), count: states)
        let statesLeadingZeros = UInt32(states).leadingZeroBitCount
        var index = 0
        for (symbol, frequency) in frequencies.enumerated() where frequency > 0 {
            let f = Int(frequency)
            let k = UInt32(f).leadingZeroBitCount - statesLeadingZeros
            let j0 = ((2 * states) >> k) - f
            let extraBits = extra?[symbol] ?? 0
            let base = bases?[symbol] ?? Int32(symbol)
            for j in 0..<f {
                table[index] =
                    j < j0
                    ? FSEEntry(
                        stateBits: UInt8(k), extraBits: extraBits, delta: Int32(((f + j) << k) - states), base: base)
                    : FSEEntry(
                        stateBits: UInt8(k - 1), extraBits: extraBits, delta: Int32((j - j0) << (k - 1)), base: base)
                index += 1
            }
        }
        return table
    }

    /// Emits the value of `state` and moves it to the next state.
    package static func decode(
        _ state: inout Int, _ table: [FSEEntry], _ bits: inout FSEBackwardBits
    ) throws(LZFSEError) -> Int {
        let entry = table[state]
        let read = try bits.take(Int(entry.stateBits) + Int(entry.extraBits))
        state = Int(entry.delta) + Int(read >> UInt64(entry.extraBits))
        guard state >= 0, state < table.count else {
            throw .corrupt(offset: bits.position, reason: "an FSE state leaves its table")
        }
        return Int(entry.base) + Int(read & ((1 << UInt64(entry.extraBits)) - 1))
    }
}
