import LLVSSupport
/// LZVN, the byte-oriented LZ format inside LZFSE's `bvxn` blocks (the encoder picks it for inputs under 4 KiB).
/// Each opcode carries a literal length L, a match length M and a distance D in one of these forms:
///
///     sml_d  LLMMMDDD DDDDDDDD  literal        med_d  101LLMMM DDDDDDDD DDDDDDMM  literal
///     lrg_d  LLMMM111 DDDDDDDD DDDDDDDD literal  pre_d  LLMMM110 literal  (D as before)
///     sml_m  1111MMMM (D as before)             lrg_m  11110000 MMMMMMMM  (M + 16)
///     sml_l  1110LLLL literal                   lrg_l  11100000 LLLLLLLL literal  (L + 16)
///     nop    00001110 or 00010110               eos    00000110 + 7 bytes
///
/// (match lengths of the _d forms are MMM + 3). Everything else is undefined.
package enum LZVN {
    /// Decodes one block of `count` payload bytes at `start` in `input`, appending exactly `rawCount` bytes to
    /// `output`; matches may reach back into what earlier blocks wrote. `blockOffset` names the block in errors.
    package static func decodeBlock(
        _ input: [UInt8], from start: Int, count: Int, rawCount: Int, into output: inout [UInt8],
        blockOffset: Int
    ) throws(LZFSEError) {
        let end = start + count
        let outputEnd = output.count + rawCount
        var position = start
        var distance = 0
        func corrupt(_ reason: String) -> LZFSEError {
            .corrupt(offset: blockOffset, reason: "LZVN at byte \(position): \(reason)")
        }

        while true {
            guard position < end else { throw LZFSEError.truncated(offset: position) }
            let opcode = input[position]
            var literal = 0
            var match = 0
            var length = 1  // opcode bytes, literal excluded
            switch opcode {
            case 0x06:  // eos
                guard position + 8 <= end else { throw LZFSEError.truncated(offset: position) }
                guard position + 8 == end else {
                    throw corrupt("\(end - position - 8) payload bytes follow the end marker")
                }
                guard output.count == outputEnd else {
                    throw corrupt(
                        "the block decodes to \(rawCount - (outputEnd - output.count)) bytes, not the \(rawCount) it declares"
                    )
                }
                return
            case 0x0E, 0x16:  // nop
                position += 1
                continue
            case 0xF0:  // lrg_m
                guard position + 2 <= end else { throw LZFSEError.truncated(offset: position) }
                match = Int(input[position + 1]) + 16
                length = 2
            case 0xF1...0xFF:  // sml_m
                match = Int(opcode & 0x0F)
            case 0xE0:  // lrg_l
                guard position + 2 <= end else { throw LZFSEError.truncated(offset: position) }
                literal = Int(input[position + 1]) + 16
                length = 2
            case 0xE1...0xEF:  // sml_l
                literal = Int(opcode & 0x0F)
            case 0xA0...0xBF:  // med_d
                guard position + 3 <= end else { throw LZFSEError.truncated(offset: position) }
                let next = input.loadUInt16(at: position + 1)
                literal = Int((opcode >> 3) & 3)
                match = Int((opcode & 7) << 2 | UInt8(next & 3)) + 3
                distance = Int(next >> 2)
                length = 3
            default:
                if (0x70...0x7F).contains(opcode) || (0xD0...0xDF).contains(opcode) {
                    throw corrupt("undefined opcode 0x\(String(opcode, radix: 16))")
                }
                literal = Int(opcode >> 6)
                match = Int((opcode >> 3) & 7) + 3
                switch opcode & 7 {
                case 7:  // lrg_d
                    guard position + 3 <= end else { throw LZFSEError.truncated(offset: position) }
                    distance = Int(input.loadUInt16(at: position + 1))
                    length = 3
                case 6:  // pre_d, except the undefined ones below 0x40
                    guard opcode >= 0x40 else { throw corrupt("undefined opcode 0x\(String(opcode, radix: 16))") }
                default:  // sml_d
                    guard position + 2 <= end else { throw LZFSEError.truncated(offset: position) }
                    distance = Int(opcode & 7) << 8 | Int(input[position + 1])
                    length = 2
                }
            }
            position += length
            if literal > 0 {
                guard position + literal <= end else { throw LZFSEError.truncated(offset: position) }
                guard literal <= outputEnd - output.count else {
                    throw corrupt("it writes past the \(rawCount) bytes the block declares")
                }
                output.append(contentsOf: input[position..<(position + literal)])
                position += literal
            }
            if match > 0 {
                guard distance > 0, distance <= output.count else {
                    throw corrupt("a match reaches \(distance) bytes back, before the start of the output")
                }
                guard match <= outputEnd - output.count else {
                    throw corrupt("it writes past the \(rawCount) bytes the block declares")
                }
                output.copyMatch(distance: distance, count: match)
            }
        }
    }
}

extension [UInt8] {
    /// Appends `count` bytes copied from `distance` bytes back, byte by byte where they overlap (a run).
    package mutating func copyMatch(distance: Int, count: Int) {
        let from = self.count - distance
        if distance >= count {
            append(contentsOf: self[from..<(from + count)])
        } else {
            for index in 0..<count { append(self[from + index]) }
        }
    }
}
