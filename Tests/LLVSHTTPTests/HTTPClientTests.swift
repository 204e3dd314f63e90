import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP
import LLVSMocks
import Synchronization
import Testing

/// Records the delays the retry policy asked for, instead of sleeping.
final class SleepRecorder: Sendable {
    private let delays = Mutex<[Duration]>([])
    var recorded: [Duration] { delays.withLock { $0 } }
    var policy: RetryPolicy {
        RetryPolicy(
            maximumAttempts: 4, sleep: { [self] delay in delays.withLock { $0.append(delay) } }, random: { 0.5 })
    }
}

func client(_ policy: RetryPolicy = .immediate, trace: (@Sendable (String) -> Void)? = nil) -> HTTPClient {
    var configuration = HTTPClientConfiguration(environment: [:])
    configuration.retryPolicy = policy
    configuration.trace = trace
    configuration.stallTimeout = .seconds(5)
    return HTTPClient(configuration: configuration)
}

/// A server that answers every request with its method, path and body length.
func echoServer() throws -> MockHTTPServer {
    try MockHTTPServer { request in
        .text(200, "\(request.method) \(request.path) \(request.bodySize)")
    }
}

@Suite struct HTTPClientTests {
    @Test func manyRequestsOverReusedConnections() async throws {
        let server = try echoServer()
        let http = client()
        try await withThrowingTaskGroup(of: String.self) { group in
            for i in 0..<50 {
                group.addTask {
                    try await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("item/\(i)"))).text
                }
            }
            var answers = Set<String>()
            for try await answer in group { answers.insert(answer) }
            #expect(answers.count == 50)
            #expect(answers.contains("GET /item/7 0"))
        }
        // Fifty requests over far fewer connections (about the client's 8 per host): connections are kept and reused.
        let connections = Set(server.log.map(\.connection))
        #expect(
            connections.count <= 2 * http.configuration.maximumConnectionsPerHost,
            "\(connections.count) connections for 50 requests")
        #expect(!connections.contains(0))
    }

    @Test func bodiesStreamFromAndToFiles() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let stored = folder.appendingPathComponent("stored")
        let server = try MockHTTPServer { request in
            switch request.method {
            case "PUT":
                if case .file(let url, _) = request.body {
                    try? FileManager.default.moveItem(at: url, to: stored)
                } else {
                    try? request.bodyData.write(to: stored)
                }
                return .empty(201)
            default:
                let size = (try? FileManager.default.attributesOfItem(atPath: stored.path)[.size] as? Int64) ?? 0
                return .ranged(.file(stored, range: nil), size: size, rangeHeader: request.headers["Range"])
            }
        }
        let source = folder.appendingPathComponent("source")
        let data = Data((0..<(12 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try data.write(to: source)
        let http = client()
        let put = try await http.send(
            HTTPRequest(method: "PUT", url: server.baseURL.appendingPathComponent("f"), body: .file(source)))
        #expect(put.status == 201)
        let back = folder.appendingPathComponent("back")
        let get = try await http.send(
            HTTPRequest(url: server.baseURL.appendingPathComponent("f"), destination: .file(back)))
        #expect(get.status == 200)
        #expect(try Data(contentsOf: back) == data)
        var ranged = HTTPRequest(url: server.baseURL.appendingPathComponent("f"))
        ranged.headers["Range"] = "bytes=-10"
        #expect(try await http.send(ranged).body == data.suffix(10))
        #expect(!server.log.contains { $0.headers["Expect"] != nil })
    }

    /// An answer into a region of a file lands at its offset and nowhere else: one longer than the region is refused
    /// before a byte of it is written, one shorter fails after, and a failure's body stays out of the file.
    @Test func anAnswerIntoARegionStaysInsideIt() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-http-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("target")
        let untouched = Data(repeating: 0xEE, count: 30)
        try untouched.write(to: target)
        let server = try MockHTTPServer { request in
            switch request.path {
            case "/ten": .text(200, "0123456789")
            case "/twelve": .text(200, "0123456789AB")
            case "/five": .text(200, "abcde")
            default: .text(404, "no such thing")
            }
        }
        let http = client()
        func get(_ name: String) async throws -> HTTPResponse {
            try await http.send(
                HTTPRequest(
                    url: server.baseURL.appendingPathComponent(name),
                    destination: .region(target, offset: 10, length: 10)))
        }
        func failure(_ name: String) async -> HTTPError? {
            do { _ = try await get(name) } catch let error as HTTPError { return error } catch { return nil }
            return nil
        }
        var expected = untouched
        expected.replaceSubrange(10..<20, with: Data("0123456789".utf8))

        #expect(try await get("ten").status == 200)
        #expect(try Data(contentsOf: target) == expected)
        let longer = await failure("twelve")
        #expect(
            longer
                == .unexpectedLength(
                    expected: 10, received: 12, url: server.baseURL.appendingPathComponent("twelve").absoluteString))
        #expect(try Data(contentsOf: target) == expected, "nothing of the longer answer is written")
        let shorter = await failure("five")
        #expect(
            shorter
                == .unexpectedLength(
                    expected: 10, received: 5, url: server.baseURL.appendingPathComponent("five").absoluteString))
        #expect(try Data(contentsOf: target).count == 30, "the file keeps its length")
        #expect(try await get("missing").status == 404)
        #expect(try Data(contentsOf: target).suffix(10) == untouched.suffix(10), "past the region, never a byte")
    }

    @Test func retriesHonourRetryAfterWithAnInjectedClock() async throws {
        let server = try echoServer()
        server.faults.inject(.status(503, retryAfter: 7), intoRequest: 1)
        server.faults.inject(.status(429, retryAfter: 2), intoRequest: 2)
        server.faults.inject(.status(500), intoRequest: 3)
        let sleeps = SleepRecorder()
        let response = try await client(sleeps.policy).send(
            HTTPRequest(url: server.baseURL.appendingPathComponent("x")))
        #expect(response.status == 200)
        #expect(server.log.count == 4)
        // Retry-After is honoured; without one, full jitter over the third retry's ceiling (0.5 × 1 s).
        #expect(sleeps.recorded == [.seconds(7), .seconds(2), .milliseconds(500)])
    }

    /// "Could not reach" only when the server was not reached; a transfer that failed on the way says so.
    @Test func transportFailuresSayWhetherTheServerWasReached() {
        let refused = HTTPError.transport(code: 7, message: "Couldn't connect to server", url: "http://h/x")
        #expect(refused.description == "Could not reach http://h/x: Couldn't connect to server (curl error 7).")
        let broken = HTTPError.transport(
            code: 56, message: "Failure when receiving data from the peer", url: "http://h/x")
        #expect(
            broken.description
                == "The transfer with http://h/x failed: Failure when receiving data from the peer (curl error 56).")
    }

    @Test func retryAfterAsAnHTTPDateAndTheCap() {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let policy = RetryPolicy(maximumRetryAfter: .seconds(60), now: { now })
        #expect(policy.retryAfter("Tue, 14 Nov 2023 22:13:50 GMT") == .seconds(30))
        #expect(policy.delay(beforeRetry: 1, retryAfter: .seconds(3600)) == .seconds(60))
        #expect(policy.retryAfter("soon") == nil)
    }

    @Test func aRequestThatIsNotSafeToRepeatIsSentOnce() async throws {
        let server = try echoServer()
        server.faults.injectNext(.status(503, retryAfter: 1))
        let response = try await client().send(
            HTTPRequest(method: "POST", url: server.baseURL, body: .data(Data("x".utf8))))
        #expect(response.status == 503)
        #expect(server.log.count == 1)
        // Marked safe by the caller, it is retried.
        server.faults.injectNext(.status(503, retryAfter: 1))
        var marked = HTTPRequest(method: "POST", url: server.baseURL, body: .data(Data("x".utf8)))
        marked.isSafeToRepeat = true
        #expect(try await client().send(marked).status == 200)
    }

    @Test func theAuthorizationHeaderNeverFollowsARedirectToAnotherHost() async throws {
        let other = try echoServer()
        let origin = try MockHTTPServer { request in
            switch request.path {
            case "/elsewhere":
                .empty(302, headers: ["Location": other.baseURL.appendingPathComponent("download").absoluteString])
            case "/here": .empty(307, headers: ["Location": "/final"])
            default: .text(200, request.headers["Authorization"] ?? "none")
            }
        }
        var request = HTTPRequest(url: origin.baseURL.appendingPathComponent("elsewhere"))
        request.headers["Authorization"] = "Bearer secret-token"
        let http = client()
        let answer = try await http.send(request)
        #expect(answer.text == "GET /download 0")
        #expect(other.log.count == 1 && other.log[0].headers["Authorization"] == nil)
        var same = HTTPRequest(url: origin.baseURL.appendingPathComponent("here"))
        same.headers["Authorization"] = "Bearer secret-token"
        #expect(try await http.send(same).text == "Bearer secret-token")
    }

    @Test(arguments: [MockFault.dropBeforeAnswer, .dropMidBody, .truncateBody, .status(502)])
    func eachFaultIsSeenAndRetried(fault: MockFault) async throws {
        let server = try MockHTTPServer { _ in .text(200, String(repeating: "payload ", count: 1000)) }
        server.faults.injectNext(fault)
        let once = client(RetryPolicy(maximumAttempts: 1, sleep: { _ in }))
        do {
            let response = try await once.send(HTTPRequest(url: server.baseURL))
            #expect(response.status == 502, "only a status fault is an answer")
        } catch let error as HTTPError {
            #expect(error.isRetryable, "\(error)")
        }
        server.faults.injectNext(fault)
        let response = try await client().send(HTTPRequest(url: server.baseURL))
        #expect(response.status == 200 && response.body.count == 8000)
    }

    /// The answer would take 120 s; cancelled once the server holds the request, the send ends cancelled (an
    /// uncancelled one would instead succeed after the latency, failing the expectation). Latency itself is seen in
    /// the server's log, not timed.
    @Test func latencyIsAddedAndCancellationStopsATransfer() async throws {
        let server = try echoServer()
        server.faults.setLatency(.seconds(120))
        let http = client()
        let task = Task { try await http.send(HTTPRequest(url: server.baseURL)) }
        await server.waitForRequests(1)
        task.cancel()
        // Cancelled in the transfer (libcurl's abort) or in a wait between attempts: either way, cancelled.
        await #expect { try await task.value } throws: { $0 as? HTTPError == .cancelled || $0 is CancellationError }
        server.faults.setLatency(.milliseconds(300))
        _ = try await http.send(HTTPRequest(url: server.baseURL))
        #expect(server.log.last?.faults.first == .latency(.milliseconds(300)))
    }

    @Test func anAnswerLargerThanItsMemoryLimitFailsCleanly() async throws {
        let server = try MockHTTPServer { _ in .text(200, String(repeating: "x", count: 100_000)) }
        await #expect(throws: HTTPError.responseTooLarge(limit: 1000, url: server.baseURL.absoluteString)) {
            try await client().send(HTTPRequest(url: server.baseURL, destination: .memory(limit: 1000)))
        }
    }

    @Test func theTraceRedactsSecrets() async throws {
        let server = try echoServer()
        let lines = Mutex<[String]>([])
        let http = client(trace: { line in lines.withLock { $0.append(line) } })
        var request = HTTPRequest(url: URL(string: server.baseURL.absoluteString + "/p?access_token=abc123&name=ok")!)
        request.headers["Authorization"] = "Bearer abc123"
        request.headers["Cookie"] = "session=abc123"
        _ = try await http.send(request)
        let text = lines.withLock { $0.joined(separator: "\n") }
        #expect(text.contains("→ GET"))
        #expect(text.contains("← 200"))
        #expect(text.contains("Bearer <redacted>"))
        #expect(text.contains("name=ok"))
        #expect(!text.contains("abc123"))
    }

    @Test func theMockReadsChunkedBodiesAndAnswersExpectContinue() async throws {
        let server = try MockHTTPServer { request in
            .text(200, "\(request.bodySize):\(String(decoding: request.bodyData, as: UTF8.self))")
        }
        let socket = try RawSocket(port: server.port)
        try socket.send("POST /c HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\nExpect: 100-continue\r\n\r\n")
        #expect(try socket.receive(until: "\r\n\r\n").hasPrefix("HTTP/1.1 100 Continue"))
        try socket.send("5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n")
        let answer = try socket.receive(until: "11:hello world")
        #expect(answer.contains("200 OK"))
        // Keep-alive: a HEAD on the same connection has headers and no body.
        try socket.send("HEAD /h HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try socket.receive(until: "\r\n\r\n").contains("Content-Length: 2"))
        try socket.send("GET /g HTTP/1.1\r\nHost: x\r\n\r\n")
        #expect(try socket.receive(until: "0:").hasPrefix("HTTP/1.1 200 OK"))
        server.stop()
    }

    /// The spec means what it says: request 1 dropped, request 3 answered 500, about half answered 503 with
    /// Retry-After: 2, every answer at least 20 ms late.
    @Test func theFaultSpecOfTheMockToolMeansWhatItSays() async throws {
        let faults = try MockFaults.parse("500@3,503:0.5,retry-after=2,drop@1,latency=20ms,seed=9")
        let server = try MockHTTPServer(faults: faults) { _ in .text(200, "ok") }
        defer { server.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1, sleep: { _ in })
        let http = HTTPClient(configuration: configuration)
        var statuses: [Int] = []
        var retryAfters: Set<String> = []
        for index in 1...40 {
            do {
                let response = try await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("r\(index)")))
                statuses.append(response.status)
                if response.status == 503 { retryAfters.insert(response.headers["Retry-After"] ?? "none") }
            } catch {
                statuses.append(0)
            }
        }
        // Every request was held back by the latency, by the mock's own record (not by a clock here).
        let log = server.log
        #expect(
            log.count == 40 && log.allSatisfy { $0.faults.first == .latency(.milliseconds(20)) }, "\(log.map(\.faults))"
        )
        #expect(statuses[0] == 0, "request 1 is dropped")
        #expect(statuses[2] == 500, "request 3 answers 500")
        let unavailable = statuses.filter { $0 == 503 }.count
        #expect((10...30).contains(unavailable), "about half answer 503: \(unavailable) of 40")
        #expect(retryAfters == ["2"])
        #expect(statuses.allSatisfy { [0, 200, 500, 503].contains($0) })
        #expect(throws: MockFaults.SpecError.self) { try MockFaults.parse("explode:0.1") }
        for bad in ["500@0", "500@MOVE*0", "500@MOVE*x", "500@MO-VE", "500@"] {
            #expect(throws: MockFaults.SpecError.self, "\(bad)") { try MockFaults.parse(bad) }
        }
        // KIND@METHOD*K waits for the first K requests of that method.
        #expect(try MockFaults.parse("503@MOVE*2").pendingCount == 2)
    }
}

/// A plain socket for speaking raw HTTP/1.1 to a mock.
final class RawSocket {
    let fd: Int32
    private var received = Data()

    init(port: UInt16) throws {
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard result == 0 else { throw HTTPError.transport(code: 7, message: "connect", url: "raw") }
        // A server that never answers makes `receive` fail after this long instead of hanging the suite.
        var timeout = timeval(tv_sec: 10, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    }

    deinit { close(fd) }

    func send(_ text: String) throws {
        let bytes = Array(text.utf8)
        _ = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, 0) }
    }

    func receive(until marker: String) throws -> String {
        var buffer = [UInt8](repeating: 0, count: 4096)
        while !String(decoding: received, as: UTF8.self).contains(marker) {
            let n = recv(fd, &buffer, buffer.count, 0)
            guard n > 0 else { break }
            received.append(contentsOf: buffer.prefix(n))
        }
        let text = String(decoding: received, as: UTF8.self)
        if let range = text.range(of: marker) {
            received = Data(text[range.upperBound...].utf8)
            return String(text[..<range.upperBound])
        }
        return text
    }
}

#if canImport(Glibc)
import Glibc
#endif
