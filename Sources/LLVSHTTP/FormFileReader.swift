import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A file part of a multipart form, read for libcurl through a callback rather than by libcurl itself
/// (`curl_mime_filedata`): when the file shrinks under the upload, libcurl's own reader ends the part early and sends
/// less than the Content-Length it announced, leaving the server reading the next request on that connection as the
/// rest of the body. Here a short read aborts the transfer, so the connection is closed and the upload fails with
/// `localFile`, as a body from a file does (`CurlTransfer.fill`).
final class FormFileReader {
    let path: String
    let size: Int64
    private let fd: Int32
    private var position: Int64 = 0
    /// Why the read stopped, when it did: the transfer's failure.
    private(set) var failure: HTTPError?

    init(path: String) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HTTPError.localFile(path: path, message: String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw HTTPError.localFile(path: path, message: message)
        }
        self.fd = fd
        self.path = path
        self.size = Int64(info.st_size)
    }

    deinit { close(fd) }

    /// Adds this file as the data of `part`; the reader must outlive the MIME body.
    func attach(to part: OpaquePointer) {
        curl_mime_data_cb(
            part, curl_off_t(size),
            { buffer, size, count, context in
                Unmanaged<FormFileReader>.fromOpaque(context!).takeUnretainedValue().read(
                    buffer!, capacity: size * count)
            },
            { context, offset, origin in
                Unmanaged<FormFileReader>.fromOpaque(context!).takeUnretainedValue().seek(
                    to: Int64(offset), origin: origin)
            },
            nil, Unmanaged.passUnretained(self).toOpaque())
    }

    private func read(_ buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = Int(min(Int64(capacity), size - position))
        guard count > 0 else { return 0 }
        let n = pread(fd, buffer, count, off_t(position))
        guard n > 0 else {
            failure = .localFile(
                path: path,
                message: n < 0
                    ? String(cString: strerror(errno))
                    : "it ended at \(position) bytes, before the \(size) the upload announced")
            return Int(CURL_READFUNC_ABORT)
        }
        position += Int64(n)
        return n
    }

    private func seek(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0, offset <= size else { return CURL_SEEKFUNC_FAIL }
        position = offset
        return CURL_SEEKFUNC_OK
    }
}
