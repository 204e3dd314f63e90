import LLVSSupport
/// Decodes one LZFSE-compressed block: its literals (four interleaved FSE states over one backward bit stream),
/// then its L/M/D triples (a second stream), each copying L literals and then M bytes from D back.
package struct LZFSEBlockDecoder {
    package static let lExtraBits: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 3, 5, 8]
    package static let lBases: [Int32] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 20, 28, 60]
    package static let mExtraBits: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 5, 8, 11]
    package static let mBases: [Int32] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 24, 56, 312]
    package static let dExtraBits: [UInt8] = (0..<64).map { UInt8($0 / 4) }
    package static let dBases: [Int32] = [
        0, 1, 2, 3, 4, 6, 8, 10, 12, 16, 20, 24, 28, 36, 44, 52, 60, 76, 92, 108, 124, 156, 188, 220, 252, 316, 380,
        444,
        508, 636, 764, 892, 1020, 1276, 1532, 1788, 2044, 2556, 3068, 3580, 4092, 5116, 6140, 7164, 8188, 10236, 12284,
        14332, 16380, 20476, 24572, 28668, 32764, 40956, 49148, 57340, 65532, 81916, 98300, 114684, 131068, 163836,
        196604, 229372,
    ]

    package let header: LZFSEBlockHeader
    package let input: [UInt8]
    package let blockOffset: Int

    package func decode(into output: inout [UInt8]) throws(LZFSEError) {
        let literals = try decodeLiterals()
        let start = output.count
        let end = start + Int(header.rawCount)
        func corrupt(_ reason: String) -> LZFSEError { .corrupt(offset: blockOffset, reason: reason) }

        let lTable = FSE.table(
            states: LZFSEBlockHeader.lStates, frequencies: header.lFrequencies, extra: Self.lExtraBits,
            bases: Self.lBases)
        let mTable = FSE.table(
            states: LZFSEBlockHeader.mStates, frequencies: header.mFrequencies, extra: Self.mExtraBits,
            bases: Self.mBases)
        let dTable = FSE.table(
            states: LZFSEBlockHeader.dStates, frequencies: header.dFrequencies, extra: Self.dExtraBits,
            bases: Self.dBases)
        let lmdStart = header.payloadStart + header.literalPayloadCount
        var bits = try FSEBackwardBits(input, end: header.payloadEnd, lowerBound: lmdStart, extraBits: header.lmdBits)
        var (lState, mState, dState) = (header.lState, header.mState, header.dState)
        var literalIndex = 0
        var distance = -1
        for _ in 0..<header.matchCount {
            try bits.refill()
            let l = try FSE.decode(&lState, lTable, &bits)
            let m = try FSE.decode(&mState, mTable, &bits)
            let d = try FSE.decode(&dState, dTable, &bits)
            if d != 0 { distance = d }
            guard l <= literals.count - literalIndex else {
                throw corrupt("a match takes more literals than the block has")
            }
            guard l + m <= end - output.count else {
                throw corrupt("it decodes to more than the \(header.rawCount) bytes it declares")
            }
            output.append(contentsOf: literals[literalIndex..<(literalIndex + l)])
            literalIndex += l
            if m > 0 {
                guard distance > 0, distance <= output.count else {
                    throw corrupt("a match reaches \(distance) bytes back, before the start of the output")
                }
                output.copyMatch(distance: distance, count: m)
            }
        }
        guard output.count == end else {
            throw corrupt("it decodes to \(output.count - start) bytes, not the \(header.rawCount) it declares")
        }
    }

    /// The block's literal bytes, decoded four at a time by four states taking turns.
    private func decodeLiterals() throws(LZFSEError) -> [UInt8] {
        let table = FSE.table(states: LZFSEBlockHeader.literalStates, frequencies: header.literalFrequencies)
        var bits = try FSEBackwardBits(
            input, end: header.payloadStart + header.literalPayloadCount, lowerBound: 0, extraBits: header.literalBits)
        var states = header.literalStates
        var literals = [UInt8]()
        literals.reserveCapacity(header.literalCount + 3)
        var index = 0
        while index < header.literalCount {
            try bits.refill()
            for lane in 0..<4 {
                literals.append(UInt8(truncatingIfNeeded: try FSE.decode(&states[lane], table, &bits)))
            }
            index += 4
        }
        return literals
    }
}
