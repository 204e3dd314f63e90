import Foundation
import LLVS
import LLVSSupport
import Testing
@testable import LLVSBackup

/// A part of a backed-up file is read from the chunks that hold it and no others, and equals those bytes of the file.
@Suite struct RangedReadTests {
    @Test func anyRangeOfAFileReadsItsBytesFromTheChunksThatHoldThem() async throws {
        let fixture = try BackupFixture()
        let data = pseudoRandomData(count: 9 << 20, seed: 21)
        try fixture.write("big.bin", data)
        try fixture.write("small.txt", Data("a small file, kept in its listing".utf8))
        try await fixture.backup()
        let reader = BackupReader(store: fixture.store)
        let version = try #require(fixture.current)
        let record = try reader.resolveSource(nil, at: version)

        let big = try #require(try reader.entry(at: [Array("big.bin".utf8)], of: record, at: version))
        let layout = try reader.layout(of: big, at: version)
        #expect(layout.chunks.count > 2, "9 MiB should be several chunks")
        #expect(layout.size == Int64(data.count) && layout.offsets.first == 0)
        var generator = SeededGenerator(seed: 5)
        let ranges: [Range<Int64>] =
            [
                0..<1, 0..<Int64(data.count), Int64(data.count - 1)..<Int64(data.count),
                layout.offsets[1] - 10..<layout.offsets[1] + 10, layout.offsets[2]..<layout.offsets[2] + 1,
            ]
            + (0..<20).map { _ in
                let start = Int64(generator.next() % UInt64(data.count))
                return start..<min(Int64(data.count), start + Int64(generator.next() % (3 << 20)) + 1)
            }
        for range in ranges {
            var read = Data()
            try reader.read(range, of: layout, at: version) { read.append($0) }
            #expect(read == data.subdata(in: Int(range.lowerBound)..<Int(range.upperBound)), "\(range)")
            // Only the chunks that hold part of the range, and all of them.
            let touched = layout.chunkIndices(covering: range)
            #expect(
                layout.offsets[touched.lowerBound] <= range.lowerBound
                    && layout.offsets[touched.upperBound] >= range.upperBound)
            #expect(
                layout.offsets[touched.lowerBound + 1] > range.lowerBound
                    && layout.offsets[touched.upperBound - 1] < range.upperBound)
        }
        var past = Data()
        try reader.read(Int64(data.count)..<Int64(data.count) + 5, of: layout, at: version) { past.append($0) }
        try reader.read(Int64(data.count) + 10..<Int64(data.count) + 20, of: layout, at: version) { past.append($0) }
        #expect(past.isEmpty)

        let small = try #require(try reader.entry(at: [Array("small.txt".utf8)], of: record, at: version))
        var part = Data()
        try reader.read(2..<7, of: try reader.layout(of: small, at: version), at: version) { part.append($0) }
        #expect(String(decoding: part, as: UTF8.self) == "small")
    }
}
