import Foundation
import LLVSHTTP
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The mock servers' request reader: a large body is spooled to a file, handed over when the body is whole, and
/// removed when it never is (a client that goes away mid-upload, as fault injection makes clients do). Such files
/// were left in the temporary directory, 2–7 MB each.
@Suite struct IncomingRequestReaderTests {
    /// A loopback connection: the reader's side, and a socket to play the client with.
    private func connected() throws -> (listener: TCPListener, server: TCPConnection, client: Int32) {
        let listener = try TCPListener()
        let client = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = listener.port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let status = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(client, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        #expect(status == 0)
        return (listener, try #require(listener.accept()), client)
    }

    private func send(_ text: String, to fd: Int32) {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
    }

    @Test(arguments: [false, true])
    func aBodyCutShortLeavesNoSpoolFile(chunked: Bool) throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-spool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (listener, server, client) = try connected()
        defer { listener.close() }
        let reader = IncomingRequestReader(connection: server, spoolThreshold: 16, spoolFolder: folder)
        let framing = chunked ? "Transfer-Encoding: chunked\r\n\r\n64\r\n" : "Content-Length: 100\r\n\r\n"
        send("PUT /x HTTP/1.1\r\nHost: a\r\n" + framing + String(repeating: "b", count: 40), to: client)
        close(client)
        #expect(throws: IncomingRequestReader.Malformed.self) { _ = try reader.next() }
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder.path).isEmpty, "a spool file was left")
    }

    @Test func aWholeLargeBodyIsHandedOverInItsFile() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-spool-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let (listener, server, client) = try connected()
        defer { listener.close(); close(client) }
        let reader = IncomingRequestReader(connection: server, spoolThreshold: 16, spoolFolder: folder)
        send("PUT /x HTTP/1.1\r\nHost: a\r\nContent-Length: 40\r\n\r\n" + String(repeating: "b", count: 40), to: client)
        let request = try #require(try reader.next())
        guard case .file(let url, let size) = request.body else {
            Issue.record("expected a spooled body, got \(request.body)"); return
        }
        #expect(size == 40 && url.path.hasPrefix(folder.path + "/"), "\(url.path)")
        #expect(try Data(contentsOf: url) == Data(repeating: UInt8(ascii: "b"), count: 40))
    }
}
