import Foundation
import LLVSCodecs
import LLVSSupport
import Testing

/// zstd as values use it: data that compresses is kept compressed, data that does not is left alone (found on samples
/// for large values), and a damaged, cut or lying frame is an error, whole or in pieces.
@Suite struct ZstdTests {
    let text = Data(String(repeating: "a value that repeats itself, as documents do. ", count: 30_000).utf8)

    @Test func compressibleDataIsKeptCompressedAndReadsBack() throws {
        let compressed = try #require(Zstd.compressedIfSmaller(text))
        #expect(compressed.count < text.count / 10)
        #expect(try Zstd.decompress(compressed) == text)
        #expect(try Zstd.decompress(compressed, expectedSize: Int64(text.count)) == text)
    }

    @Test(arguments: [100, 200_000, 3_000_000]) func incompressibleDataIsLeftAsItIs(count: Int) {
        #expect(Zstd.compressedIfSmaller(SeededGenerator.bytes(count, seed: UInt64(count))) == nil)
    }

    /// A value that starts as a gzip, xz, PNG or JPEG file is kept as it is without being tried (its contents are
    /// compressed already); the same bytes one later, or a zip (whose entries may be stored), are tried.
    @Test func dataInACompressedFormatIsNotTried() {
        for signature: [UInt8] in [
            [0x1F, 0x8B, 0x08], [0xFD, 0x37, 0x7A, 0x58, 0x5A, 0x00], [0x89, 0x50, 0x4E, 0x47],
        ] {
            #expect(Zstd.compressedIfSmaller(Data(signature) + text) == nil, "\(signature)")
            #expect(Zstd.compressedIfSmaller(Data([0x20] + signature) + text) != nil, "\(signature)")
        }
        #expect(Zstd.compressedIfSmaller(Data([0x50, 0x4B, 0x03, 0x04]) + text) != nil)
    }

    @Test func aFrameOfAnotherSizeOrDamagedIsAnError() throws {
        let compressed = try #require(Zstd.compressedIfSmaller(text))
        #expect(throws: ZstdError.sizeMismatch(expected: 5, found: Int64(text.count))) {
            try Zstd.decompress(compressed, expectedSize: 5)
        }
        #expect(throws: ZstdError.self) { try Zstd.decompress(compressed.prefix(compressed.count / 2)) }
        #expect(throws: ZstdError.self) { try Zstd.decompress(Data("not zstd at all".utf8)) }
    }

    @Test(arguments: [1, 7, 4096, 1 << 20]) func aStreamInPiecesReadsBackAndChecksItsEnd(piece: Int) throws {
        let compressed = try #require(Zstd.compressedIfSmaller(text))
        var output = Data()
        let decoder = try ZstdStreamDecoder(expectedSize: nil, outputSize: 64 << 10)
        var offset = 0
        while offset < compressed.count {
            let end = min(offset + piece, compressed.count)
            try decoder.feed(compressed[offset..<end]) { output.append($0) }
            offset = end
        }
        try decoder.finish { output.append($0) }
        #expect(output == text)

        let cut = try ZstdStreamDecoder(expectedSize: Int64(text.count))
        try cut.feed(compressed.prefix(compressed.count - 10)) { _ in }
        #expect(throws: ZstdError.self) { try cut.finish { _ in } }

        // A frame holding more than it was said to stops as soon as it passes that, not at its end.
        let lying = try ZstdStreamDecoder(expectedSize: 1000, outputSize: 4096)
        var written = 0
        #expect(throws: ZstdError.self) { try lying.feed(compressed) { written += $0.count } }
        #expect(written <= 1000)
    }
}
