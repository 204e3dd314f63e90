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
}
