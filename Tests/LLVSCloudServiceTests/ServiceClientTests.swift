import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import LLVSMocks
import Synchronization
import Testing

@Suite struct ServiceClientTests {
    /// The API answers a download with a 302 to a pre-authenticated URL on another host, as OneDrive and Box do:
    /// the client follows it without the account's token, and a request made without authorization carries none.
    @Test func aDownloadRedirectedToAnotherHostCarriesNoAuthorization() async throws {
        let content = try MockContentHost()
        defer { content.stop() }
        let data = SeededGenerator.bytes(100_000, seed: 3)
        let published = content.publish(.data(data))
        let api = try MockHTTPServer { request in
            request.headers["Authorization"] == "Bearer secret-token"
                ? .empty(302, headers: ["Location": published.absoluteString]) : .empty(401)
        }
        defer { api.stop() }
        let client = ServiceClient(http: testClient(), authorizer: BearerAuthorizer(), classifier: PlainClassifier())
        let body = try await client.checked(
            HTTPRequest(url: api.baseURL.appendingPathComponent("files/1/content")), path: "f"
        ).body
        #expect(body == data)
        let part = try await client.read(
            HTTPRequest(url: api.baseURL.appendingPathComponent("files/1/content")), range: .bytes(10, 19), path: "f")
        #expect(part == data[10...19])
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-redirect-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: file) }
        try await client.download(
            HTTPRequest(url: api.baseURL.appendingPathComponent("files/1/content")), to: file, path: "f")
        #expect(try Data(contentsOf: file) == data)
        _ = try await client.checked(HTTPRequest(url: published), path: "f", authorization: .none)
        #expect(api.log.allSatisfy { $0.headers["Authorization"] != nil })
        #expect(content.server.log.count == 4)
        #expect(content.requestsWithCredentials.isEmpty, "the token reached the content host")
    }

    @Test func aRangeOutsideTheFileIsAnErrorAndAFailedDownloadLeavesNoFile() async throws {
        let server = try MockHTTPServer { request in
            request.path == "/missing"
                ? .empty(404) : MockContent.data(Data("0123456789".utf8)).response(range: request.headers["Range"])
        }
        defer { server.stop() }
        let client = ServiceClient(http: testClient(), authorizer: nil, classifier: PlainClassifier())
        await #expect(
            throws: CloudFileSystemError.server(status: 416, message: "range bytes=20- is outside the file f")
        ) {
            _ = try await client.read(
                HTTPRequest(url: server.baseURL.appendingPathComponent("file")), range: .from(20), path: "f")
        }
        #expect(
            try await client.read(
                HTTPRequest(url: server.baseURL.appendingPathComponent("file")), range: .last(3), path: "f")
                == Data("789".utf8))
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-missing-\(UUID().uuidString)")
        await #expect(throws: CloudFileSystemError.notFound(path: "m")) {
            try await client.download(
                HTTPRequest(url: server.baseURL.appendingPathComponent("missing")), to: file, path: "m")
        }
        #expect(!FileManager.default.fileExists(atPath: file.path))
    }

    /// A creation answered 503 every time is sent at most the policy's attempts in all (the HTTP client does not
    /// repeat it on its own as well), looking between attempts whether it landed.
    @Test func aRefusedCreationIsSentAtMostThePolicysAttempts() async throws {
        let server = try MockHTTPServer { _ in .empty(503) }
        defer { server.stop() }
        let client = ServiceClient(
            http: testClient(attempts: 5), authorizer: nil, classifier: AlwaysRefusedIsNotActedOn())
        let looks = Recorder<Int>()
        await #expect(throws: CloudFileSystemError.self) {
            _ = try await client.createOnce(
                HTTPRequest(method: "POST", url: server.baseURL.appendingPathComponent("folders")), path: "a",
                decode: { _ in "id" },
                landed: {
                    looks.append(1); return nil
                })
        }
        #expect(server.log.filter { $0.method == "POST" }.count == 5)
        #expect(looks.values.count == 4, "it looks before each resend")
    }

    @Test func aCreationWhoseAnswerWasLostIsFoundInsteadOfMadeAgain() async throws {
        let server = try MockHTTPServer { _ in .empty(201) }
        defer { server.stop() }
        server.faults.injectNext(.dropBeforeAnswer)
        let client = ServiceClient(http: testClient(), authorizer: nil, classifier: PlainClassifier())
        let id = try await client.createOnce(
            HTTPRequest(method: "POST", url: server.baseURL.appendingPathComponent("folders")), path: "a",
            decode: { _ in "sent again" }, landed: { "found" })
        #expect(id == "found")
        #expect(server.log.filter { $0.method == "POST" }.count == 1)
    }

    /// libcurl streams a multipart/form-data body from a file, parts in the order given (Box's `attributes` first).
    @Test func aFormBodyIsStreamedFromAFileInOrder() async throws {
        let received = Mutex<(String?, Data)>((nil, Data()))
        let server = try MockHTTPServer { request in
            received.withLock { $0 = (request.headers["Content-Type"], request.bodyData) }
            return .empty(201)
        }
        defer { server.stop() }
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-form-\(UUID().uuidString)")
        let contents = SeededGenerator.bytes(3 * 1024 * 1024 + 7, seed: 9)
        try contents.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        let form: [FormPart] = [
            FormPart(name: "attributes", content: .data(Data(#"{"name":"a b.bin","parent":{"id":"0"}}"#.utf8))),
            UploadSource.file(file, size: Int64(contents.count)).formPart(name: "file", filename: "a b.bin"),
        ]
        let client = ServiceClient(http: testClient(), authorizer: nil, classifier: PlainClassifier())
        try await client.checked(
            HTTPRequest(method: "POST", url: server.baseURL.appendingPathComponent("upload"), body: .form(form)),
            path: "a")
        let (type, body) = received.withLock { $0 }
        let boundary = try #require(type?.components(separatedBy: "boundary=").last)
        #expect(type?.hasPrefix("multipart/form-data") == true)
        var parts: [Data] = []
        var rest = body[...]
        let delimiter = Data("--\(boundary)".utf8)
        while let found = rest.range(of: delimiter) {
            parts.append(Data(rest[..<found.lowerBound]))
            rest = rest[found.upperBound...]
        }
        parts = Array(parts.dropFirst())
        #expect(parts.count == 2)
        let first = try #require(parts.first), second = try #require(parts.last)
        #expect(String(decoding: first, as: UTF8.self).contains(#"Content-Disposition: form-data; name="attributes""#))
        let head = String(decoding: second.prefix(300), as: UTF8.self)
        #expect(head.contains(#"name="file"; filename="a b.bin""#))
        let separator = try #require(second.range(of: Data("\r\n\r\n".utf8)))
        #expect(Data(second[separator.upperBound...].dropLast(2)) == contents)
    }
}

/// As Drive: a refusal was not acted on, so even a creation may be resent after one.
struct AlwaysRefusedIsNotActedOn: ServiceErrorClassifier {
    var refusalsAreNotActedOn: Bool { true }
    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        ServiceFailure.standard(response, path: path, service: "the test service", message: "")
    }
}

@Suite struct TricklingServerTests {
    /// An answer trickled at 2 bytes a second fails once the transfer has been slower than the minimum rate for the
    /// stall time, instead of holding the caller for as long as the server likes.
    @Test func aTrickledAnswerFailsAfterTheStallTime() async throws {
        let server = try MockHTTPServer { _ in .text(200, String(repeating: "x", count: 1000)) }
        defer { server.stop() }
        server.faults.injectNext(.trickle(bytesPerSecond: 2))
        var configuration = HTTPClientConfiguration()
        configuration.stallTimeout = .seconds(2)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1, sleep: { _ in })
        let client = ServiceClient(
            http: HTTPClient(configuration: configuration), authorizer: nil, classifier: PlainClassifier())
        // The whole body would take 500 s; what ends it is libcurl's low-speed limit (error 28), not the body's end.
        do {
            _ = try await client.checked(HTTPRequest(url: server.baseURL.appendingPathComponent("slow")), path: "slow")
            Issue.record("a trickled answer should fail")
        } catch let error as CloudFileSystemError {
            #expect("\(error)".contains("curl error 28"), "\(error)")
        }
    }
}

@Suite struct MemoryBudgetTests {
    /// Eight transfers of large answers at once: what they hold in memory together never passes the client's budget;
    /// the ones that would pass it fail with a clear error, and the rest arrive whole.
    @Test func answersHeldAtOnceStayWithinTheClientsBudget() async throws {
        let body = Data(repeating: 0x61, count: 12 << 20)
        let server = try MockHTTPServer { _ in MockResponse(status: 200, body: .data(body)) }
        defer { server.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.maximumBufferedBytes = 32 << 20
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1, sleep: { _ in })
        let http = HTTPClient(configuration: configuration)
        let outcomes = await withTaskGroup(of: Result<Int, any Error>.self) { group in
            for index in 0..<8 {
                group.addTask {
                    do {
                        return .success(
                            try await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("big\(index)")))
                                .body.count)
                    } catch { return .failure(error) }
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(http.memoryBudget.highWaterMark <= 32 << 20)
        #expect(http.memoryBudget.inUse == 0, "every transfer gave its bytes back")
        for outcome in outcomes {
            switch outcome {
            case .success(let count): #expect(count == body.count)
            case .failure(let error): #expect("\(error)".contains("past 33554432 bytes"), "\(error)")
            }
        }
        #expect(
            outcomes.contains { if case .failure = $0 { true } else { false } },
            "eight 12 MiB answers cannot all be held in 32 MiB at once")
    }
}
