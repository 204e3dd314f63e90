import Foundation
import Testing
@testable import LLVS
import LLVSCodecs
import LLVSSupport

/// The LZFSE decoder against streams Apple's reference encoder wrote, and against truncated and corrupted ones:
/// every bad stream is an `LZFSEError`, never a crash, a hang or an allocation beyond the limit.
@Suite struct LZFSETests {
    struct Expected: Decodable { var size: Int; var sha256: String }

    static let folder = TestPaths.packageRoot.appendingPathComponent("Tests/LLVSTests/Fixtures/lzfse")
    static let expected: [String: Expected] = {
        let data = try! Data(contentsOf: folder.appendingPathComponent("expected.json"))
        return try! JSONDecoder().decode([String: Expected].self, from: data)
    }()

    static func stream(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: folder.appendingPathComponent(name + ".lzfse")))
    }

    @Test(arguments: expected.keys.sorted())
    func decodesWhatTheReferenceEncoderWrote(name: String) throws {
        let decoded = try LZFSE.decode(try Self.stream(name))
        let expected = try #require(Self.expected[name])
        #expect(decoded.count == expected.size)
        #expect(SHA256.hex(Data(decoded)) == expected.sha256)
    }

    @Test func anEmptyStreamIsJustTheEndMarker() throws {
        #expect(try LZFSE.decode(Array("bvx$".utf8)) == [])
    }

    @Test(arguments: expected.keys.sorted())
    func everyTruncationIsAnError(name: String) throws {
        let stream = try Self.stream(name)
        // Every cut near the start and the end, and a spread in between.
        let cuts = Set(
            Array(0..<min(48, stream.count)) + Array(max(0, stream.count - 16)..<stream.count)
                + stride(from: 0, to: stream.count, by: max(1, stream.count / 29)))
        for cut in cuts.sorted() {
            #expect(throws: LZFSEError.self, "cut at \(cut) of \(stream.count)") {
                try LZFSE.decode(Array(stream[0..<cut]))
            }
        }
    }

    @Test(arguments: expected.keys.sorted())
    func corruptedStreamsNeverCrash(name: String) throws {
        let stream = try Self.stream(name)
        let expected = try #require(Self.expected[name])
        var generator = SeededGenerator(seed: UInt64(stream.count))
        for round in 0..<(stream.count > 100_000 ? 20 : 150) {
            var damaged = stream
            for _ in 0..<(1 + round % 4) {
                let index = Int.random(in: 0..<damaged.count, using: &generator)
                damaged[index] = UInt8.random(in: 0...255, using: &generator)
            }
            // A damaged byte in a stored block or a literal may still decode; it must never exceed the limit.
            do {
                let decoded = try LZFSE.decode(damaged, limit: expected.size + 1_000_000)
                #expect(decoded.count <= expected.size + 1_000_000)
            } catch {
                // Refused as damaged: what a damaged stream should get. `decode` throws only LZFSEError (typed
                // throws), so no other error can land here.
            }
        }
    }

    @Test func aStreamLargerThanTheLimitIsRefused() throws {
        let stream = try Self.stream("runs")
        #expect(throws: LZFSEError.tooLarge(limit: 10_000)) { try LZFSE.decode(stream, limit: 10_000) }
        // A stored block claiming 4 GiB with no bytes behind it is truncated, not an allocation.
        var claim = Array("bvx-".utf8)
        claim += [0xff, 0xff, 0xff, 0xff]
        #expect(throws: LZFSEError.self) { try LZFSE.decode(claim) }
    }

    @Test func errorsNameWhatIsWrong() {
        #expect(throws: LZFSEError.unknownBlock(offset: 0, magic: 0x6f6c6c65)) {
            try LZFSE.decode(Array("ello world".utf8))
        }
        #expect(throws: LZFSEError.truncated(offset: 0)) { try LZFSE.decode([0x62, 0x76]) }
        #expect("\(LZFSEError.truncated(offset: 12))".contains("truncated"))
    }
}
