import CZlib
import Foundation
import LLVSSupport
import Synchronization

/// Inflates a small entry in one call through one zlib stream reused from entry to entry.
///
/// A store's snapshot holds tens of thousands of files of a few hundred bytes (versions, map nodes, values); for
/// those, `inflateInit2` (about 7 KiB of state, then a 32 KiB window) and `inflateEnd` per entry cost more than
/// the inflating, so one stream is reset (`inflateReset`, which keeps both) instead. Not for two threads at once:
/// `Pool` hands each caller one of its own.
// @unchecked around a C handle (zlib's z_stream): safe because an instance is only ever used by the one caller
// `Pool` lent it to, and zlib keeps no other shared state.
package final class WholeEntryInflater: @unchecked Sendable {
    /// Inflaters for a `Sendable` reader that several threads use at once (an import decodes version files on every
    /// core): each call takes one nobody is using, or makes one, and gives it back.
    package final class Pool: Sendable {
        private let idle = Mutex<[WholeEntryInflater]>([])

        func inflate(_ input: UnsafeRawBufferPointer, size: Int, corrupt: (String) -> ZipError) throws -> Data {
            let inflater = idle.withLock { $0.popLast() } ?? WholeEntryInflater()
            defer { idle.withLock { $0.append(inflater) } }
            return try inflater.inflate(input, size: size, corrupt: corrupt)
        }
    }

    /// Allocated, not a stored `z_stream`: zlib keeps a pointer back to the stream and checks it on every call.
    private let stream: UnsafeMutablePointer<z_stream>
    private let started: Bool

    package init() {
        stream = .allocate(capacity: 1)
        stream.initialize(to: z_stream())
        started = inflateInit2_(stream, -MAX_WBITS, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    }

    deinit {
        if started { inflateEnd(stream) }
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    /// The raw deflate stream `input` inflated; it must hold exactly `size` bytes and end exactly at `input`'s end.
    package func inflate(_ input: UnsafeRawBufferPointer, size: Int, corrupt: (String) -> ZipError) throws -> Data {
        guard started, inflateReset(stream) == Z_OK else { throw corrupt("zlib could not start inflating") }
        // One byte more than declared, so an entry holding more than its directory says is caught, not cut short.
        var output = Data(count: size + 1)
        let status = output.withUnsafeMutableBytes { (out: UnsafeMutableRawBufferPointer) -> Int32 in
            stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(input.count)
            stream.pointee.next_out = out.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(out.count)
            return CZlib.inflate(stream, Z_FINISH)
        }
        let produced = size + 1 - Int(stream.pointee.avail_out)
        let unread = Int(stream.pointee.avail_in)
        defer {
            stream.pointee.next_in = nil
            stream.pointee.next_out = nil
        }
        guard produced <= size else { throw corrupt("it holds more than the \(size) bytes its directory entry says") }
        switch status {
        case Z_STREAM_END:
            guard unread == 0 else { throw corrupt("\(unread) bytes follow its deflate stream") }
        case Z_BUF_ERROR where unread == 0, Z_OK where unread == 0:
            throw corrupt("its deflate stream ends early")
        default:
            throw corrupt("its deflate data is invalid (\(stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"))")
        }
        // Fewer than declared is left for the caller to report with the entry's other size checks.
        output.count = produced
        return output
    }
}
