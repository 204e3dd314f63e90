import CZstd
import Foundation

/// Decompresses one zstd frame given in pieces, handing the output on in pieces of at most `outputSize` bytes, so a
/// large value is never whole in memory. `finish` checks that the frame ended and held exactly the expected bytes
/// (those given, else those the frame declares); output past them is refused as it comes, so a hostile frame cannot
/// make a reader write more than it was told.
public final class ZstdStreamDecoder {
    private let context: OpaquePointer
    /// The size the output must have: given, or declared by the frame; nil when neither says.
    private var expectedSize: Int64?
    /// Whether the frame's header was looked at for its size.
    private var headerRead = false
    private var produced: Int64 = 0
    private var frameEnded = false
    private var output: [UInt8]

    public init(expectedSize: Int64?, outputSize: Int = 1 << 20) throws {
        guard let context = ZSTD_createDCtx() else { throw ZstdError.noContext }
        self.context = context
        self.expectedSize = expectedSize
        // Never read before zstd writes it: no need to clear it first.
        output = [UInt8](unsafeUninitializedCapacity: outputSize) { _, count in count = outputSize }
    }

    deinit { ZSTD_freeDCtx(context) }

    /// Decompresses `piece`, giving what it yields to `write`.
    public func feed(_ piece: Data, to write: (Data) throws -> Void) throws {
        // A frame's header takes at most 18 bytes; a first piece shorter than that is left to zstd to judge.
        if !headerRead, expectedSize == nil, piece.count >= 18 {
            expectedSize = try Zstd.declaredSize(ofFrameStartingWith: piece)
        }
        headerRead = true
        try piece.withUnsafeBytes { raw in
            var input = ZSTD_inBuffer(src: raw.baseAddress, size: raw.count, pos: 0)
            while input.pos < input.size {
                guard !frameEnded else { throw ZstdError.malformed("bytes after the end of the frame") }
                try step(&input, write)
            }
        }
    }

    /// Checks that the frame is complete and held the expected number of bytes.
    public func finish(to write: (Data) throws -> Void) throws {
        // Output zstd holds back for want of room is drained with an empty input.
        var input = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
        while !frameEnded {
            let before = produced
            try step(&input, write)
            if produced == before, !frameEnded { throw ZstdError.malformed("the frame is cut short") }
        }
        if let expectedSize, produced != expectedSize {
            throw ZstdError.sizeMismatch(expected: expectedSize, found: produced)
        }
    }

    private func step(_ input: inout ZSTD_inBuffer, _ write: (Data) throws -> Void) throws {
        let count = try output.withUnsafeMutableBytes { out -> Int in
            var buffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
            let result = ZSTD_decompressStream(context, &buffer, &input)
            try Zstd.check(result)
            if result == 0 { frameEnded = true }
            return buffer.pos
        }
        guard count > 0 else { return }
        produced += Int64(count)
        let limit = expectedSize ?? Zstd.largestValue
        guard produced <= limit else { throw ZstdError.sizeMismatch(expected: limit, found: produced) }
        try write(Data(output[0..<count]))
    }
}
