import Foundation
import LLVSHTTP
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// An HTTP/1.1 server on a loopback port for mocks: keep-alive, Content-Length and chunked request bodies,
/// `Expect: 100-continue`, HEAD, streamed file bodies, many connections at once (a thread each), fault injection,
/// a request log, and a clean stop.
public final class MockHTTPServer: Sendable {
    public typealias Handler = @Sendable (IncomingRequest) -> MockResponse
    /// The answer an injected status fault gives (a service's own error body); the status and Retry-After are set.
    public typealias FaultBody = @Sendable (_ status: Int) -> MockResponse

    public let port: UInt16
    public let faults: MockFaults
    private let namedFaultsFrom: MockFaults?
    private let listener: TCPListener
    private let handler: Handler
    private let faultBody: FaultBody
    private let connections = Mutex<[ObjectIdentifier: TCPConnection]>([:])
    private let entries = Mutex<[MockLogEntry]>([])
    private let counter = Mutex(0)
    private let faultCatalogue: [MockNamedFault]
    /// Where a client injects faults into a running mock: `POST /llvs-mock/faults` with a `--faults` spec as its body
    /// (`locked`, `throttled*3`, `503@PUT`, …) adds them, answered 204, or 400 naming what it could not read. Such
    /// requests are neither numbered nor logged, so a test harness in any language can fail the next request of its
    /// own client exactly where it wants.
    public static let faultControlPath = "/llvs-mock/faults"
    /// Where a client reads what the mock was asked: `GET /llvs-mock/requests` answers the log so far, one JSON object
    /// a line (`number`, `method`, `target`, `status`, and `range` when the request had one), so a harness in any
    /// language can count what its client sent. Neither numbered nor logged itself.
    public static let requestLogPath = "/llvs-mock/requests"
    private let arrivalWaiters = Mutex<[(count: Int, continuation: CheckedContinuation<Void, Never>)]>([])
    private let connectionCounter = Mutex(0)
    private let stopped = Atomic<Bool>(false)

    /// Starts serving on 127.0.0.1:`port` (0 picks a free port) on background threads.
    /// `namedFaultsFrom`: for a mock's second host, the API host's faults, whose named faults (which say what they
    /// meet) reach this host too; its own `faults` number its own requests.
    /// `faultCatalogue`: the service's named faults, which a POST to `faultControlPath` may name.
    public init(
        port: UInt16 = 0, faults: MockFaults = MockFaults(), namedFaultsFrom: MockFaults? = nil,
        faultBody: FaultBody? = nil, faultCatalogue: [MockNamedFault] = [],
        handler: @escaping Handler
    ) throws {
        self.namedFaultsFrom = namedFaultsFrom
        self.faultCatalogue = faultCatalogue
        listener = try TCPListener(port: port)
        self.port = listener.port
        self.faults = faults
        self.handler = handler
        self.faultBody =
            faultBody ?? { status in
                MockResponse(
                    status: status, headers: ["Content-Type": "application/json"],
                    body: .data(Data(#"{"error":"injected fault","status":\#(status)}"#.utf8)))
            }
        // The threads hold the server weakly, and strongly only while they answer a request: a server nobody holds
        // any more is deinitialized, which stops it (its port and connections closed, its threads ended).
        let listener = self.listener
        let thread = Thread { [weak self] in
            while let connection = listener.accept() {
                guard let server = self, !server.stopped.load(ordering: .relaxed) else {
                    connection.close()
                    break
                }
                server.serveOnThreadOfItsOwn(connection)
            }
        }
        thread.name = "mock-accept-\(listener.port)"
        thread.start()
    }

    public var baseURL: URL { URL(string: "http://127.0.0.1:\(port)")! }

    /// Every request so far, in arrival order.
    public var log: [MockLogEntry] { entries.withLock { $0 } }
    public func clearLog() { entries.withLock { $0 = [] } }

    /// Stops listening and closes every open connection.
    public func stop() {
        guard !stopped.exchange(true, ordering: .relaxed) else { return }
        listener.close()
        for connection in connections.withLock({ Array($0.values) }) { connection.close() }
    }

    deinit { stop() }

    private func serveOnThreadOfItsOwn(_ connection: TCPConnection) {
        connections.withLock { $0[ObjectIdentifier(connection)] = connection }
        let connectionNumber = connectionCounter.withLock { count -> Int in
            count += 1
            return count
        }
        let thread = Thread { [weak self] in
            let reader = IncomingRequestReader(connection: connection)
            while true {
                // Read without holding the server: a keep-alive connection a client keeps must not keep it alive.
                let next = Result { try reader.next() }
                guard let server = self, !server.stopped.load(ordering: .relaxed),
                    server.answer(next, on: connection, connectionNumber: connectionNumber)
                else { break }
            }
            _ = self?.connections.withLock { $0.removeValue(forKey: ObjectIdentifier(connection)) }
            connection.close()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }

    /// Answers one request read from `connection` (or the failure to read one); true when the connection stays open
    /// for the next.
    private func answer(
        _ next: Result<IncomingRequest?, any Error>, on connection: TCPConnection, connectionNumber: Int
    ) -> Bool {
        let request: IncomingRequest
        switch next {
        case .success(let read?):
            request = read
        case .success(nil):
            return false
        case .failure(let error):
            // The reason goes in the body, so a client that meets it (and a test that fails on it) says why.
            let reason = Array("the mock could not read the request: \(error)".utf8)
            try? connection.write(
                "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: \(reason.count)\r\nConnection: close\r\n\r\n"
            )
            try? reason.withUnsafeBytes { try connection.write($0) }
            return false
        }
        defer { if case .file(let url, _) = request.body { try? FileManager.default.removeItem(at: url) } }
        if request.path == Self.faultControlPath || request.path == Self.requestLogPath {
            let answer = request.path == Self.faultControlPath ? controlFaults(request) : requestLog(request)
            do {
                try write(answer, for: request, to: connection, keepAlive: request.keepsAlive, cutShort: nil)
                return request.keepsAlive
            } catch {
                return false
            }
        }
        let number = counter.withLock { count -> Int in
            count += 1
            return count
        }
        let ready = arrivalWaiters.withLock { waiters -> [CheckedContinuation<Void, Never>] in
            let due = waiters.filter { $0.count <= number }.map(\.continuation)
            waiters.removeAll { $0.count <= number }
            return due
        }
        for continuation in ready { continuation.resume() }
        let shared = namedFaultsFrom?.decideNamed(
            MockRequestSummary(method: request.method, path: request.path, headers: request.headers))
        let faults =
            shared.map { [$0] }
            ?? self.faults.decide(number: number, method: request.method, path: request.path, headers: request.headers)
        var entry = MockLogEntry(
            number: number, method: request.method, target: request.target, headers: request.headers,
            status: nil, faults: faults)
        entry.connection = connectionNumber
        var response: MockResponse?
        var ending: MockFault?
        for fault in faults {
            switch fault {
            case .latency(let duration):
                Thread.sleep(
                    forTimeInterval: Double(duration.components.seconds) + Double(duration.components.attoseconds)
                        / 1e18)
            case .status(let status, let retryAfter):
                var answer = faultBody(status)
                answer.status = status
                if let retryAfter { answer.headers["Retry-After"] = String(retryAfter) }
                response = answer
            case .answer(let status, let headers, let body):
                response = MockResponse(status: status, headers: headers, body: .data(body))
            case .dropBeforeAnswer, .dropMidBody, .truncateBody, .trickle: ending = fault
            }
        }
        let answer = response ?? handler(request)
        if ending == .dropBeforeAnswer {
            record(entry)
            return false
        }
        entry.status = answer.status
        record(entry)
        do {
            let keepAlive = request.keepsAlive && ending == nil
            try write(answer, for: request, to: connection, keepAlive: keepAlive, cutShort: ending)
            return keepAlive
        } catch {
            return false
        }
    }

    private func record(_ entry: MockLogEntry) { entries.withLock { $0.append(entry) } }

    /// A request to `requestLogPath`: the log as JSON lines.
    private func requestLog(_ request: IncomingRequest) -> MockResponse {
        guard request.method == "GET" else {
            return MockResponse(
                status: 405, headers: ["Content-Type": "text/plain"],
                body: .data(Data("GET \(Self.requestLogPath) for the requests so far\n".utf8)))
        }
        var lines = Data()
        for entry in log {
            var object: [String: Any] = ["number": entry.number, "method": entry.method, "target": entry.target]
            if let status = entry.status { object["status"] = status }
            if let range = entry.headers["Range"] { object["range"] = range }
            if let line = try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]) {
                lines.append(line)
                lines.append(UInt8(ascii: "\n"))
            }
        }
        return MockResponse(status: 200, headers: ["Content-Type": "application/x-ndjson"], body: .data(lines))
    }

    /// A request to `faultControlPath`: a POST adds the spec in its body to this server's faults.
    private func controlFaults(_ request: IncomingRequest) -> MockResponse {
        func text(_ status: Int, _ message: String) -> MockResponse {
            MockResponse(status: status, headers: ["Content-Type": "text/plain"], body: .data(Data(message.utf8)))
        }
        guard request.method == "POST" else { return text(405, "POST a --faults spec to \(Self.faultControlPath)\n") }
        let trimmed = String(decoding: request.bodyData, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
        guard !trimmed.isEmpty else { return text(400, "the body should be a --faults spec, such as 503@PUT\n") }
        do {
            try faults.add(trimmed, catalogue: faultCatalogue)
        } catch {
            let names = faultCatalogue.map(\.name).joined(separator: ", ")
            return text(400, "\(error); the named faults here: \(names.isEmpty ? "none" : names)\n")
        }
        return MockResponse(status: 204, headers: [:], body: .data(Data()))
    }

    /// Returns once the server has read `count` requests, answered or not: how a test knows a request is in flight
    /// (the log holds only answered ones), without polling or a clock.
    public func waitForRequests(_ count: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            // Registered under the lock the count is read under, so an arrival between the two cannot be missed.
            let now = arrivalWaiters.withLock { waiters -> Bool in
                if counter.withLock({ $0 }) >= count { return true }
                waiters.append((count, continuation))
                return false
            }
            if now { continuation.resume() }
        }
    }

    private func write(
        _ response: MockResponse, for request: IncomingRequest, to connection: TCPConnection,
        keepAlive: Bool, cutShort: MockFault?
    ) throws {
        let length = response.bodyLength
        var head = "HTTP/1.1 \(response.status) \(HTTPStatus.reason(response.status))\r\n"
        var headers = response.headers
        let hasBody = !(response.status == 204 || response.status == 304 || (100..<200).contains(response.status))
        if hasBody, headers["Content-Length"] == nil { headers["Content-Length"] = String(length) }
        headers["Connection"] = keepAlive ? "keep-alive" : "close"
        for field in headers { head += "\(field.name): \(field.value)\r\n" }
        head += "\r\n"
        try connection.write(head)
        guard hasBody, request.method.uppercased() != "HEAD" else { return }
        // How much of the body to send: all, half (dropped mid-body) or all but the last byte (truncated).
        let limit: Int64 =
            switch cutShort {
            case .dropMidBody?: length / 2
            case .truncateBody?: max(0, length - 1)
            default: length
            }
        var sent: Int64 = 0
        if case .trickle(let rate)? = cutShort {
            // A byte at a time, spaced to the rate, until the body is out or the client gives up (the write fails).
            let body: Data =
                switch response.body {
                case .data(let data): data
                case .file(let url, _): (try? Data(contentsOf: url)) ?? Data()
                }
            for byte in body.prefix(Int(limit)) {
                Thread.sleep(forTimeInterval: 1 / Double(max(1, rate)))
                try connection.write(Data([byte]))
            }
            return
        }
        switch response.body {
        case .data(let data):
            try connection.write(data.prefix(Int(limit)))
            sent = limit
        case .file(let url, let range):
            let fd = open(url.path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw MockServerError.cannotRead(url.path) }
            defer { close(fd) }
            let start = range?.lowerBound ?? 0
            var chunk = [UInt8](repeating: 0, count: 1 << 20)
            while sent < limit {
                let n = pread(fd, &chunk, Int(min(Int64(chunk.count), limit - sent)), off_t(start + sent))
                guard n > 0 else { throw MockServerError.cannotRead(url.path) }
                try chunk.withUnsafeBytes { try connection.write(UnsafeRawBufferPointer(rebasing: $0.prefix(n))) }
                sent += Int64(n)
            }
        }
    }

}

enum MockServerError: Error { case cannotRead(String) }
