import CDeflate
import Foundation
import LLVSSupport
import Synchronization

/// Inflates a small entry in one call with libdeflate, which decodes a whole buffer about twice as fast as zlib's
/// streaming inflate: a snapshot holds tens of thousands of files of a few KiB (versions, map nodes, values), so
/// their inflating is a large part of an import. Not for two threads at once: `Pool` hands each caller one of its own.
// @unchecked around a C handle (libdeflate's decompressor): safe because an instance is only ever used by the one
// caller `Pool` lent it to, and libdeflate keeps no other shared state.
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

    private let decompressor: OpaquePointer?

    package init() {
        decompressor = libdeflate_alloc_decompressor()
    }

    deinit { libdeflate_free_decompressor(decompressor) }

    /// The raw deflate stream `input` inflated; it must hold exactly `size` bytes and end exactly at `input`'s end.
    package func inflate(_ input: UnsafeRawBufferPointer, size: Int, corrupt: (String) -> ZipError) throws -> Data {
        guard let decompressor else { throw corrupt("libdeflate could not start inflating") }
        // One byte more than declared, so an entry holding more than its directory says is caught, not cut short.
        // The buffer is the answer's own (no zeroing first, no copy after): an import inflates tens of thousands.
        guard let output = malloc(size + 1) else { throw corrupt("\(size) bytes could not be allocated to inflate it") }
        var consumed = 0, produced = 0
        let result = libdeflate_deflate_decompress_ex(
            decompressor, input.baseAddress, input.count, output, size + 1, &consumed, &produced)
        switch result {
        case LIBDEFLATE_SUCCESS where produced > size, LIBDEFLATE_INSUFFICIENT_SPACE:
            free(output)
            throw corrupt("it holds more than the \(size) bytes its directory entry says")
        case LIBDEFLATE_SUCCESS where consumed != input.count:
            free(output)
            throw corrupt("\(input.count - consumed) bytes follow its deflate stream")
        case LIBDEFLATE_SUCCESS:
            // Fewer than declared is left for the caller to report with the entry's other size checks.
            return Data(bytesNoCopy: output, count: produced, deallocator: .free)
        default:
            free(output)
            throw corrupt("its deflate data is invalid or ends early")
        }
    }
}
