import Foundation
import LLVSCodecs
import LLVSSupport

extension ReceivedValue {
    /// Gives the value's data, decoded, to `body` in pieces (a file's in 1 MiB reads), and fails unless it comes to
    /// `size` bytes: what a check of a remote reads without storing anything. A released value gives nothing.
    public func forEachDecodedPiece(_ body: (Data) throws -> Void) throws {
        switch bytes {
        case .released:
            return
        case .data(let data):
            try body(try StoredRecord(bytes: data, encoding: encoding).decoded(size: size))
        case .file(let url):
            var total: Int64 = 0
            let decoder = encoding == .zstd ? try ZstdStreamDecoder(expectedSize: size) : nil
            func take(_ piece: Data) throws {
                total += Int64(piece.count)
                try body(piece)
            }
            try ReadableFile(path: url.path).forEachPiece { piece in
                if let decoder { try decoder.feed(piece, to: take) } else { try take(piece) }
            }
            try decoder?.finish(to: take)
            guard total == size else { throw ZstdError.sizeMismatch(expected: size, found: total) }
        }
    }
}
