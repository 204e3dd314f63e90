import Foundation

/// A small deterministic generator (SplitMix64), so a run with faults can be repeated exactly.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
    private var state: UInt64
    public init(seed: UInt64) { state = seed }
    public mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

extension SeededGenerator {
    /// `count` pseudo-random bytes, the same for the same seed (test data, benchmark payloads). Written a word at a
    /// time into one buffer, so even an unoptimised build makes megabytes quickly.
    public static func bytes(_ count: Int, seed: UInt64) -> Data {
        var generator = SeededGenerator(seed: seed)
        var data = Data(count: count)
        data.withUnsafeMutableBytes { raw in
            var offset = 0
            while offset < count {
                var word = generator.next()
                let length = min(8, count - offset)
                withUnsafeBytes(of: &word) { source in
                    raw.baseAddress!.advanced(by: offset).copyMemory(from: source.baseAddress!, byteCount: length)
                }
                offset += length
            }
        }
        return data
    }

    /// Writes `count` seeded bytes to a new file at `url` a MiB at a time, so memory stays at a MiB whatever the size,
    /// giving each piece to `each` too (to hash what was written without reading it back).
    public static func writeFile(_ url: URL, count: Int, seed: UInt64, each: (Data) -> Void = { _ in }) throws {
        try Data().write(to: url)
        let handle = try FileHandle(forWritingTo: url)
        defer { try? handle.close() }
        var written = 0, piece: UInt64 = 0
        while written < count {
            let data = bytes(min(1 << 20, count - written), seed: seed &* 1_000_003 &+ piece)
            each(data)
            try handle.write(contentsOf: data)
            written += data.count
            piece += 1
        }
    }
}
