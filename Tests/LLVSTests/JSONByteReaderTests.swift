import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// The eight-bytes-at-a-time test that passes over plain string bytes flags a word exactly when one of its bytes is
/// not plain, and strings read through it end where they should.
@Suite struct JSONByteReaderTests {
    func isPlain(_ byte: UInt8) -> Bool {
        byte >= 0x20 && byte < 0x80 && byte != UInt8(ascii: "\"") && byte != UInt8(ascii: "\\")
    }

    func word(_ bytes: [UInt8]) -> UInt64 { bytes.withUnsafeBytes { $0.loadUnaligned(as: UInt64.self) } }

    @Test func everyByteValueInEveryPlaceIsJudgedAsOnItsOwn() {
        for place in 0..<8 {
            for value in 0...255 {
                var bytes = [UInt8](repeating: UInt8(ascii: "a"), count: 8)
                bytes[place] = UInt8(value)
                #expect(
                    JSONByteReader.anyNonPlainByte(word(bytes)) == !isPlain(UInt8(value)), "byte \(value) at \(place)")
            }
        }
    }

    @Test func randomWordsAreFlaggedExactlyWhenOneOfTheirBytesIsNotPlain() {
        var generator = SeededGenerator(seed: 5)
        let plain = (0...255).map(UInt8.init).filter(isPlain)
        for _ in 0..<20_000 {
            // Mostly plain bytes, some words with one or more that are not.
            let bytes = (0..<8).map { _ in
                Int.random(in: 0..<10, using: &generator) == 0
                    ? UInt8.random(in: 0...255, using: &generator) : plain.randomElement(using: &generator)!
            }
            #expect(JSONByteReader.anyNonPlainByte(word(bytes)) == !bytes.allSatisfy(isPlain), "\(bytes)")
        }
    }

    @Test func stringsEndAtTheirQuoteWhateverTheirLength() throws {
        for length in 0..<40 {
            for tail in ["\"", "\\n\"", "é\""] {
                let text = String(repeating: "x", count: length) + tail
                var reader = JSONByteReader(bytes: Array(("\"" + text + ",1").utf8))
                let plain = try reader.skipString()
                #expect(plain == (tail == "\""))
                #expect(reader.position == 1 + text.utf8.count, "length \(length), tail \(tail)")
            }
            var unterminated = JSONByteReader(bytes: Array(("\"" + String(repeating: "x", count: length)).utf8))
            #expect(throws: JSONByteReader.Failure.self) { try unterminated.skipString() }
            var control = JSONByteReader(bytes: Array(("\"" + String(repeating: "x", count: length) + "\u{1}\"").utf8))
            #expect(throws: JSONByteReader.Failure.self) { try control.skipString() }
        }
    }
}
