import LLVSSupport
/// A decoder for Apple's LZFSE format (the streams `compression_encode_buffer(…, COMPRESSION_LZFSE)` and Apple's
/// reference `lzfse` write), which LLVS apps use for value and map files (`LLZF` + LZFSE). Debian ships no library
/// for it. The whole stream is in memory (these are single files of a store), and the output is bounded by
/// `limit`: a hostile stream that claims gigabytes fails with `tooLarge` before it costs them.
///
/// A stream is a series of blocks, each starting with a 4-byte magic: `bvx-` (stored bytes), `bvxn` (LZVN),
/// `bvx1`/`bvx2` (LZFSE with plain or packed tables), ending with `bvx$`. Matches may reach back into the output
/// of earlier blocks.
public enum LZFSE {
    package static let endOfStream: UInt32 = 0x2478_7662  // bvx$
    package static let stored: UInt32 = 0x2d78_7662  // bvx-
    package static let lzfseV1: UInt32 = 0x3178_7662  // bvx1
    package static let lzfseV2: UInt32 = 0x3278_7662  // bvx2
    package static let lzvn: UInt32 = 0x6e78_7662  // bvxn

    /// Decodes a whole LZFSE stream. Bytes after the end-of-stream marker are an error, as they would be data
    /// the decoder silently dropped.
    public static func decode(_ input: [UInt8], limit: Int = 1 << 30) throws(LZFSEError) -> [UInt8] {
        var output: [UInt8] = []
        var position = 0
        while true {
            guard position + 4 <= input.count else { throw .truncated(offset: position) }
            let magic = input.loadUInt32(at: position)
            switch magic {
            case endOfStream:
                guard position + 4 == input.count else {
                    throw .corrupt(
                        offset: position + 4, reason: "\(input.count - position - 4) bytes follow the end of the stream"
                    )
                }
                return output
            case stored:
                guard position + 8 <= input.count else { throw .truncated(offset: position) }
                let count = Int(input.loadUInt32(at: position + 4))
                guard position + 8 + count <= input.count else { throw .truncated(offset: input.count) }
                try reserve(count, plausible: count, in: &output, limit: limit)
                output.append(contentsOf: input[(position + 8)..<(position + 8 + count)])
                position += 8 + count
            case lzvn:
                guard position + 12 <= input.count else { throw .truncated(offset: position) }
                let rawCount = Int(input.loadUInt32(at: position + 4))
                let payloadCount = Int(input.loadUInt32(at: position + 8))
                guard position + 12 + payloadCount <= input.count else { throw .truncated(offset: input.count) }
                // An LZVN opcode of 2 bytes writes at most 271, so a larger claim is not believed until it is decoded.
                try reserve(rawCount, plausible: payloadCount * 136, in: &output, limit: limit)
                try LZVN.decodeBlock(
                    input, from: position + 12, count: payloadCount, rawCount: rawCount, into: &output,
                    blockOffset: position)
                position += 12 + payloadCount
            case lzfseV1, lzfseV2:
                let header = try LZFSEBlockHeader(input, at: position, magic: magic)
                try reserve(Int(header.rawCount), plausible: header.maximumRawCount, in: &output, limit: limit)
                try LZFSEBlockDecoder(header: header, input: input, blockOffset: position).decode(into: &output)
                position = header.payloadEnd
            default:
                throw .unknownBlock(offset: position, magic: magic)
            }
        }
    }

    /// Checks that a block's declared `count` more bytes stay within `limit`, and reserves room for them, up to what
    /// the block's payload could possibly produce (a header may lie; the decoder checks the real count).
    private static func reserve(_ count: Int, plausible: Int, in output: inout [UInt8], limit: Int) throws(LZFSEError) {
        guard count <= limit - output.count else { throw .tooLarge(limit: limit) }
        output.reserveCapacity(output.count + min(count, plausible))
    }
}

extension [UInt8] {
    /// A little-endian 32-bit integer at `offset` (the caller has checked the bounds).
    package func loadUInt32(at offset: Int) -> UInt32 {
        UInt32(self[offset]) | UInt32(self[offset + 1]) << 8 | UInt32(self[offset + 2]) << 16 | UInt32(self[offset + 3])
            << 24
    }

    package func loadUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    package func loadUInt64(at offset: Int) -> UInt64 {
        UInt64(loadUInt32(at: offset)) | UInt64(loadUInt32(at: offset + 4)) << 32
    }
}
