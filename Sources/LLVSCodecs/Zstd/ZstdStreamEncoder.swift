import CZstd
import Foundation

/// Compresses one value given in pieces into one zstd frame that declares its size, handing the frame on in pieces,
/// so a large file is compressed as it is read and never whole in memory.
public final class ZstdStreamEncoder {
    private let context: OpaquePointer
    private var output: [UInt8]

    /// `size`: the number of bytes that will be given, written into the frame and checked by zstd at the end.
    public init(size: Int64, level: Int32 = Zstd.defaultLevel) throws {
        guard let context = ZSTD_createCCtx() else { throw ZstdError.noContext }
        self.context = context
        let outputSize = ZSTD_CStreamOutSize()
        output = [UInt8](unsafeUninitializedCapacity: outputSize) { _, count in count = outputSize }
        try Zstd.check(ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, level))
        try Zstd.check(ZSTD_CCtx_setPledgedSrcSize(context, UInt64(size)))
    }

    deinit { ZSTD_freeCCtx(context) }

    /// Compresses `piece`, giving what is ready to `write`.
    public func feed(_ piece: Data, to write: (Data) throws -> Void) throws {
        try piece.withUnsafeBytes { raw in
            var input = ZSTD_inBuffer(src: raw.baseAddress, size: raw.count, pos: 0)
            while input.pos < input.size { _ = try step(&input, ZSTD_e_continue, write) }
        }
    }

    /// Ends the frame, giving the rest to `write`. zstd fails it if the pieces did not add up to the size given.
    public func finish(to write: (Data) throws -> Void) throws {
        var input = ZSTD_inBuffer(src: nil, size: 0, pos: 0)
        while try step(&input, ZSTD_e_end, write) != 0 {}
    }

    /// One call of ZSTD_compressStream2; returns what zstd says is left to flush.
    private func step(
        _ input: inout ZSTD_inBuffer, _ directive: ZSTD_EndDirective, _ write: (Data) throws -> Void
    ) throws -> Int {
        var left = 0
        let count = try output.withUnsafeMutableBytes { out -> Int in
            var buffer = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
            left = ZSTD_compressStream2(context, &buffer, &input, directive)
            try Zstd.check(left)
            return buffer.pos
        }
        if count > 0 { try write(Data(output[0..<count])) }
        return left
    }
}
