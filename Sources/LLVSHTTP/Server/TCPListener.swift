import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A listening TCP socket on a loopback address: for the OAuth redirect listener and the mock servers.
public final class TCPListener: Sendable {
    public let port: UInt16
    private let descriptor: SharedDescriptor

    /// Listens on 127.0.0.1 at `port` (0 picks a free one).
    public init(port: UInt16 = 0) throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Self.failure("socket") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard bound == 0, listen(fd, 128) == 0 else {
            let error = Self.failure("listen on 127.0.0.1:\(port)")
            Glibc.close(fd)
            throw error
        }
        var actual = sockaddr_in()
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &actual) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        descriptor = SharedDescriptor(fd)
        self.port = UInt16(bigEndian: actual.sin_port)
    }

    deinit { close() }

    static func failure(_ operation: String) -> HTTPError {
        .transport(code: -1, message: "\(operation): \(String(cString: strerror(errno)))", url: "loopback")
    }

    /// Waits for the next connection; nil once the listener is closed.
    public func accept() -> TCPConnection? {
        while true {
            let outcome = descriptor.use { fd -> (client: Int32, error: Int32) in
                let client = Glibc.accept(fd, nil, nil)
                return (client, client >= 0 ? 0 : errno)
            }
            guard let outcome else { return nil }
            if outcome.client >= 0 {
                var yes: Int32 = 1
                setsockopt(outcome.client, Int32(IPPROTO_TCP), TCP_NODELAY, &yes, socklen_t(MemoryLayout<Int32>.size))
                return TCPConnection(fd: outcome.client)
            }
            if outcome.error == EINTR || outcome.error == ECONNABORTED { continue }
            return nil
        }
    }

    /// Stops listening; a thread waiting in `accept` gets nil. Safe from any thread.
    public func close() { descriptor.close() }
}

/// One accepted connection, read and written with blocking calls from one thread at a time; `close` may come from
/// another (a server shutting down).
public final class TCPConnection: Sendable {
    private let descriptor: SharedDescriptor

    init(fd: Int32) { descriptor = SharedDescriptor(fd) }
    deinit { close() }

    /// Reads what is there (at most `count` bytes); an empty result means the peer closed, or this side did.
    public func read(upTo count: Int) throws -> [UInt8] {
        var buffer = [UInt8](repeating: 0, count: count)
        let read = try descriptor.use { fd -> Int in
            while true {
                let n = recv(fd, &buffer, count, 0)
                if n >= 0 { return n }
                if errno == EINTR { continue }
                throw TCPListener.failure("read")
            }
        }
        return Array(buffer.prefix(read ?? 0))
    }

    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        let written: Void? = try descriptor.use { fd in
            var done = 0
            while done < bytes.count {
                let n = send(fd, bytes.baseAddress! + done, bytes.count - done, Int32(MSG_NOSIGNAL))
                if n < 0 {
                    if errno == EINTR { continue }
                    throw TCPListener.failure("write")
                }
                done += n
            }
        }
        guard written != nil else { throw HTTPError.transport(code: -1, message: "write: closed", url: "loopback") }
    }

    public func write(_ data: Data) throws { try data.withUnsafeBytes { try write($0) } }
    public func write(_ text: String) throws { try write(Data(text.utf8)) }

    /// Ends the connection; a thread reading it gets an end. Safe from any thread.
    public func close() { descriptor.close() }

    /// Makes a read that waits longer than `seconds` fail instead of waiting on.
    public func setReceiveTimeout(seconds: Int) {
        var timeout = timeval(tv_sec: seconds, tv_usec: 0)
        _ = descriptor.use { fd in
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        }
    }
}
