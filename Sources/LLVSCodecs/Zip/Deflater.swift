import CZlib
import Foundation
import LLVSSupport

/// Raw deflate (zip method 8) through zlib, fed in pieces; compressed output goes to `emit` as it comes, so a
/// value of any size is compressed in bounded memory. One deflater serves a whole archive (`reset` between
/// entries): starting zlib afresh for each of tens of thousands of small files would cost more than compressing them.
package final class Deflater {
    private var stream = z_stream()
    private var output = [UInt8](repeating: 0, count: 256 << 10)
    /// Where the current entry's compressed bytes go.
    package var emit: ([UInt8]) throws -> Void = { _ in }

    package init(level: Int32 = 6) throws {
        guard
            deflateInit2_(
                &stream, level, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY, ZLIB_VERSION,
                Int32(MemoryLayout<z_stream>.size)) == Z_OK
        else {
            throw ZipError.deflateFailed(reason: "deflateInit2 failed")
        }
    }

    deinit { deflateEnd(&stream) }

    /// Starts a new entry, its output going to `emit`.
    package func reset(emit: @escaping ([UInt8]) throws -> Void) {
        deflateReset(&stream)
        self.emit = emit
    }

    package func update(_ data: Data) throws {
        guard !data.isEmpty else { return }
        var input = [UInt8](data)
        try input.withUnsafeMutableBufferPointer { buffer in
            stream.next_in = buffer.baseAddress
            stream.avail_in = uInt(buffer.count)
            try run(flush: Z_NO_FLUSH)
        }
    }

    package func finish() throws {
        stream.next_in = nil
        stream.avail_in = 0
        try run(flush: Z_FINISH)
    }

    private func run(flush: Int32) throws {
        while true {
            let capacity = output.count
            let status = output.withUnsafeMutableBufferPointer { buffer -> Int32 in
                stream.next_out = buffer.baseAddress
                stream.avail_out = uInt(capacity)
                return deflate(&stream, flush)
            }
            let produced = capacity - Int(stream.avail_out)
            if produced > 0 { try emit(Array(output[0..<produced])) }
            if flush == Z_FINISH {
                if status == Z_STREAM_END { return }
                guard status == Z_OK || status == Z_BUF_ERROR else {
                    throw ZipError.deflateFailed(reason: "deflate answered \(status)")
                }
            } else {
                guard status == Z_OK || status == Z_BUF_ERROR else {
                    throw ZipError.deflateFailed(reason: "deflate answered \(status)")
                }
                if stream.avail_in == 0 && stream.avail_out > 0 { return }
            }
        }
    }
}
