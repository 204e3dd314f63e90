import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A request as a server receives it.
public struct IncomingRequest: Sendable {
    public enum Body: Sendable {
        case data(Data)
        /// A large body, spooled to a temporary file that the server removes after answering.
        case file(URL, size: Int64)
    }

    public var method: String
    /// The request target as sent (path and query, percent-encoded).
    public var target: String
    public var version: String
    public var headers: HTTPHeaders
    public var body: Body

    /// The path, percent-decoded, without the query.
    public var path: String {
        let raw = target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target
        return raw.removingPercentEncoding ?? raw
    }

    /// The path as sent, still percent-encoded.
    public var rawPath: String { target.split(separator: "?", maxSplits: 1).first.map(String.init) ?? target }

    public var query: [String: String] {
        guard let mark = target.firstIndex(of: "?") else { return [:] }
        return FormEncoding.decode(String(target[target.index(after: mark)...]))
    }

    /// The body's bytes (read from the spool file when it was large).
    public var bodyData: Data {
        switch body {
        case .data(let data): data
        case .file(let url, _): (try? Data(contentsOf: url)) ?? Data()
        }
    }

    public var bodySize: Int64 {
        switch body {
        case .data(let data): Int64(data.count)
        case .file(_, let size): size
        }
    }

    public var keepsAlive: Bool {
        let connection = headers["Connection"]?.lowercased() ?? ""
        return version == "HTTP/1.1" ? !connection.contains("close") : connection.contains("keep-alive")
    }
}

/// Reads HTTP/1.1 requests from a connection: the head, then a body by Content-Length or chunked encoding,
/// answering `Expect: 100-continue` first. Bodies above `spoolThreshold` go to a temporary file, so a 1 GiB upload
/// does not sit in memory.
public final class IncomingRequestReader {
    public struct Malformed: Error, CustomStringConvertible {
        public var description: String
    }

    private let connection: TCPConnection
    private var buffer: [UInt8] = []
    private let spoolThreshold: Int64
    private let spoolFolder: URL
    static let headLimit = 64 * 1024

    /// `spoolFolder`: where large bodies go (`llvs-body-UUID`), the temporary directory unless told.
    public init(
        connection: TCPConnection, spoolThreshold: Int64 = 8 * 1024 * 1024,
        spoolFolder: URL = FileManager.default.temporaryDirectory
    ) {
        self.connection = connection
        self.spoolThreshold = spoolThreshold
        self.spoolFolder = spoolFolder
    }

    /// The next request, or nil when the peer closed the connection between requests.
    public func next(beforeBody: (IncomingRequest) throws -> Void = { _ in }) throws -> IncomingRequest? {
        guard let headEnd = try fill(until: { self.find([13, 10, 13, 10]) }) else {
            if buffer.isEmpty { return nil }
            throw Malformed(description: "the connection closed in the middle of a request head")
        }
        let head = String(decoding: buffer[..<headEnd], as: UTF8.self)
        buffer.removeFirst(headEnd + 4)
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        guard requestLine.count == 3 else { throw Malformed(description: "bad request line") }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { throw Malformed(description: "bad header line") }
            headers.add(
                String(line[..<colon]), String(line[line.index(after: colon)...]).trimmingCharacters(in: .whitespaces))
        }
        var request = IncomingRequest(
            method: requestLine[0], target: requestLine[1], version: requestLine[2], headers: headers,
            body: .data(Data()))
        try beforeBody(request)
        if headers["Expect"]?.lowercased() == "100-continue" { try connection.write("HTTP/1.1 100 Continue\r\n\r\n") }
        if headers["Transfer-Encoding"]?.lowercased().contains("chunked") == true {
            request.body = try readChunked()
        } else if let length = headers["Content-Length"].flatMap(Int64.init), length > 0 {
            request.body = try readBody(length: length)
        }
        return request
    }

    private func find(_ pattern: [UInt8]) -> Int? {
        guard buffer.count >= pattern.count else { return nil }
        var index = 0
        while index <= buffer.count - pattern.count {
            if buffer[index] == pattern[0], Array(buffer[index..<index + pattern.count]) == pattern { return index }
            index += 1
        }
        return nil
    }

    /// Reads until `found` gives an index; nil when the peer closes first.
    private func fill(until found: () -> Int?) throws -> Int? {
        while true {
            if let index = found() { return index }
            guard buffer.count < Self.headLimit else {
                throw Malformed(description: "a request head or chunk line is too long")
            }
            let more = try connection.read(upTo: 64 * 1024)
            if more.isEmpty { return nil }
            buffer.append(contentsOf: more)
        }
    }

    private func readBody(length: Int64) throws -> IncomingRequest.Body {
        let sink = try BodySink(spoolAbove: spoolThreshold, in: spoolFolder, expected: length)
        try copy(length, into: sink, what: "the body")
        return try sink.finish()
    }

    /// Moves `count` bytes of body from the buffer and the connection into `sink`.
    private func copy(_ count: Int64, into sink: BodySink, what: String) throws {
        var remaining = count
        while remaining > 0 {
            if buffer.isEmpty {
                let more = try connection.read(upTo: Int(min(remaining, 1 << 20)))
                if more.isEmpty {
                    throw Malformed(description: "\(what) ended after \(count - remaining) of \(count) bytes")
                }
                buffer = more
            }
            let take = Int(min(Int64(buffer.count), remaining))
            try sink.write(buffer[..<take])
            buffer.removeFirst(take)
            remaining -= Int64(take)
        }
    }

    private func readChunked() throws -> IncomingRequest.Body {
        let sink = try BodySink(spoolAbove: spoolThreshold, in: spoolFolder, expected: nil)
        while true {
            guard let lineEnd = try fill(until: { self.find([13, 10]) }) else {
                throw Malformed(description: "the chunked body ended early")
            }
            let sizeText =
                String(decoding: buffer[..<lineEnd], as: UTF8.self).split(separator: ";").first.map(String.init) ?? ""
            buffer.removeFirst(lineEnd + 2)
            guard let size = Int64(sizeText.trimmingCharacters(in: .whitespaces), radix: 16), size >= 0 else {
                throw Malformed(description: "bad chunk size \(sizeText)")
            }
            if size == 0 {
                // Trailers, up to an empty line.
                while true {
                    guard let end = try fill(until: { self.find([13, 10]) }) else {
                        throw Malformed(description: "the chunked body ended early")
                    }
                    buffer.removeFirst(end + 2)
                    if end == 0 { return try sink.finish() }
                }
            }
            try copy(size, into: sink, what: "a chunk")
            guard try fill(until: { self.buffer.count >= 2 ? 0 : nil }) != nil, buffer[0] == 13, buffer[1] == 10 else {
                throw Malformed(description: "a chunk is not followed by CRLF")
            }
            buffer.removeFirst(2)
        }
    }
}

/// Collects a body in memory, moving to a temporary file once it grows past a threshold. A body that never finishes
/// (the client went away, the framing was bad) takes its file with it; only `finish` hands the file over.
private final class BodySink {
    private var data = Data()
    private var fd: Int32 = -1
    private var url: URL?
    private var size: Int64 = 0
    private let threshold: Int64
    private let folder: URL

    init(spoolAbove threshold: Int64, in folder: URL, expected: Int64?) throws {
        self.threshold = threshold
        self.folder = folder
        if let expected, expected > threshold { try spool() }
    }

    private func spool() throws {
        let url = folder.appendingPathComponent("llvs-body-\(UUID().uuidString)")
        fd = open(url.path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard fd >= 0 else {
            throw IncomingRequestReader.Malformed(
                description: "cannot spool the body: \(String(cString: strerror(errno)))")
        }
        self.url = url
        if !data.isEmpty { try append(data); data = Data() }
    }

    private func append(_ bytes: Data) throws {
        try bytes.withUnsafeBytes { raw in
            var done = 0
            while done < raw.count {
                let n = Glibc.write(fd, raw.baseAddress! + done, raw.count - done)
                if n < 0 {
                    if errno == EINTR { continue };
                    throw IncomingRequestReader.Malformed(description: "cannot spool the body")
                }
                done += n
            }
        }
    }

    func write(_ bytes: ArraySlice<UInt8>) throws {
        size += Int64(bytes.count)
        if fd < 0, size > threshold { try spool() }
        if fd >= 0 { try append(Data(bytes)) } else { data.append(contentsOf: bytes) }
    }

    func finish() throws -> IncomingRequest.Body {
        if fd >= 0, let url {
            close(fd)
            fd = -1
            return .file(url, size: size)
        }
        return .data(data)
    }

    deinit {
        guard fd >= 0 else { return }
        close(fd)
        if let url { unlink(url.path) }
    }
}
