import CZlib
import Foundation
import LLVSSupport

/// Raw deflate (zip method 8) through zlib, in pieces: compressed bytes are read 1 MiB at a time and inflated into
/// a 1 MiB buffer, so an entry of any size costs bounded memory.
package enum Inflater {
    /// `expectedSize` (the entry's declared size) only sizes the output buffer, so a small entry costs a small one.
    package static func inflate(
        file: ReadableFile, offset: Int64, count: Int64, expectedSize: Int64, into deliver: (Data) throws -> Void,
        corrupt: (String) -> ZipError
    ) throws {
        var stream = z_stream()
        guard inflateInit2_(&stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            throw corrupt("zlib could not start inflating")
        }
        defer { inflateEnd(&stream) }
        let outputSize = Int(min(Int64(1 << 20), max(expectedSize, 0) + 64))
        var output = [UInt8](repeating: 0, count: outputSize)
        var read: Int64 = 0
        var finished = false
        while !finished {
            guard read < count else { throw corrupt("its deflate stream ends early") }
            let pieceCount = Int(min(Int64(1 << 20), count - read))
            var input = [UInt8](try file.read(at: offset + read, count: pieceCount))
            read += Int64(pieceCount)
            try input.withUnsafeMutableBufferPointer { inputBuffer in
                stream.next_in = inputBuffer.baseAddress
                stream.avail_in = uInt(pieceCount)
                repeat {
                    let status = output.withUnsafeMutableBufferPointer { outputBuffer -> Int32 in
                        stream.next_out = outputBuffer.baseAddress
                        stream.avail_out = uInt(outputSize)
                        return CZlib.inflate(&stream, Z_NO_FLUSH)
                    }
                    let produced = outputSize - Int(stream.avail_out)
                    if produced > 0 { try deliver(Data(output[0..<produced])) }
                    if status == Z_STREAM_END { finished = true; break }
                    guard status == Z_OK || status == Z_BUF_ERROR else {
                        throw corrupt(
                            "its deflate data is invalid (\(stream.msg.map { String(cString: $0) } ?? "zlib error \(status)"))"
                        )
                    }
                    guard status == Z_OK || produced > 0 || stream.avail_in == 0 else {
                        throw corrupt("its deflate data makes no progress")
                    }
                } while stream.avail_in > 0 || stream.avail_out == 0
            }
        }
        guard read == count, stream.avail_in == 0 else {
            throw corrupt("\(count - read + Int64(stream.avail_in)) bytes follow its deflate stream")
        }
    }
}
