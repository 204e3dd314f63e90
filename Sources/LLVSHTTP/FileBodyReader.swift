import CCurl
import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A request body read from a local file for libcurl, whole or a window of it, as a plain body (`CurlTransfer.fill`)
/// or as a form's file part (`attach(to:)`). A file that comes up short of what the request announced (it shrank
/// under the upload) aborts the transfer: libcurl then closes the connection, where left to read a form's file itself
/// (`curl_mime_filedata`) it sent less than its Content-Length and the server waited for the rest, or read the next
/// request on that connection as the rest of the body. The upload fails with `localFile`, naming the file.
package final class FileBodyReader {
    package let path: String
    /// Where the body starts in the file, and how long it is.
    package let offset: Int64
    package let length: Int64
    private let fd: Int32
    /// Where a form part has read to (a plain body's position is the transfer's).
    private var partPosition: Int64 = 0
    /// Why the read stopped, when it did: the transfer's failure.
    package private(set) var failure: HTTPError?

    /// The file from `offset`, `length` bytes (to its end when nil).
    /// - Throws: `localFile` when it cannot be opened, or the window is not inside it.
    package init(path: String, offset: Int64 = 0, length: Int64? = nil) throws {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw HTTPError.localFile(path: path, message: String(cString: strerror(errno))) }
        var info = stat()
        guard fstat(fd, &info) == 0 else {
            let message = String(cString: strerror(errno))
            close(fd)
            throw HTTPError.localFile(path: path, message: message)
        }
        let length = length ?? (Int64(info.st_size) - offset)
        guard offset >= 0, length >= 0, offset + length <= Int64(info.st_size) else {
            close(fd)
            throw HTTPError.localFile(
                path: path, message: "the range \(offset)+\(length) is outside the \(info.st_size)-byte file")
        }
        self.fd = fd
        self.path = path
        self.offset = offset
        self.length = length
    }

    deinit { close(fd) }

    /// Up to `capacity` bytes of the body from `position` into `buffer`: how many, 0 at its end, or
    /// `CURL_READFUNC_ABORT` (with `failure` set) when the file fails or ends before the body does.
    package func read(at position: Int64, into buffer: UnsafeMutablePointer<CChar>, capacity: Int) -> Int {
        let count = Int(min(Int64(capacity), length - position))
        guard count > 0 else { return 0 }
        let n = pread(fd, buffer, count, off_t(offset + position))
        guard n > 0 else {
            failure = .localFile(
                path: path,
                message: n < 0
                    ? String(cString: strerror(errno))
                    : "it ended at \(offset + position) bytes, before the \(offset + length) the upload announced")
            return Int(CURL_READFUNC_ABORT)
        }
        return n
    }

    /// Adds this body as the data of a form's `part`; the reader must outlive the MIME body.
    func attach(to part: OpaquePointer) {
        curl_mime_data_cb(
            part, curl_off_t(length),
            { buffer, size, count, context in
                Unmanaged<FileBodyReader>.fromOpaque(context!).takeUnretainedValue().readPart(buffer!, size * count)
            },
            { context, offset, origin in
                Unmanaged<FileBodyReader>.fromOpaque(context!).takeUnretainedValue().seekPart(Int64(offset), origin)
            },
            nil, Unmanaged.passUnretained(self).toOpaque())
    }

    private func readPart(_ buffer: UnsafeMutablePointer<CChar>, _ capacity: Int) -> Int {
        let n = read(at: partPosition, into: buffer, capacity: capacity)
        if failure == nil { partPosition += Int64(n) }
        return n
    }

    private func seekPart(_ offset: Int64, _ origin: Int32) -> Int32 {
        guard origin == SEEK_SET, offset >= 0, offset <= length else { return CURL_SEEKFUNC_FAIL }
        partPosition = offset
        return CURL_SEEKFUNC_OK
    }
}
