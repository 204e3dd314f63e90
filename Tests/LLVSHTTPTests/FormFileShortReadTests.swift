import Foundation
import LLVSHTTP
import LLVSMocks
import LLVSSupport
import Testing

/// A form's file part that holds fewer bytes than its size said (a file that shrank under the upload) ends the
/// upload with an error naming the file, and the connection goes with it: the server never reads the next request
/// on that connection as the rest of the body.
@Suite struct FormFileShortReadTests {
    /// A sysfs file says 4096 bytes and holds a few: a file that "shrank" on every read, the same way every time.
    static let shortFile = "/sys/devices/system/cpu/online"

    @Test(.enabled(if: FileManager.default.isReadableFile(atPath: shortFile) || CIEnvironment.requiresEveryTest))
    func aFilePartShorterThanItsSizeFailsTheUploadAndTheNextRequestIsReadWhole() async throws {
        try #require(FileManager.default.isReadableFile(atPath: Self.shortFile), "\(Self.shortFile) is not readable")
        let server = try MockHTTPServer { request in .text(200, "\(request.method) \(request.path) \(request.bodySize)")
        }
        defer { server.stop() }
        var configuration = HTTPClientConfiguration()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 1, sleep: { _ in })
        let http = HTTPClient(configuration: configuration)
        let form = HTTPRequest(
            method: "POST", url: server.baseURL.appendingPathComponent("upload"),
            body: .form([
                FormPart(name: "meta", content: .data(Data("x".utf8))),
                FormPart(name: "file", filename: "online", content: .file(URL(fileURLWithPath: Self.shortFile))),
            ]), isSafeToRepeat: false)
        do {
            let answer = try await http.send(form)
            Issue.record(
                "the short upload was answered \(answer.status): \(String(decoding: answer.body, as: UTF8.self))")
        } catch HTTPError.localFile(let path, let message) {
            #expect(path == Self.shortFile && message.contains("ended at"), "\(message)")
        }
        for index in 0..<3 {
            let next = try await http.send(HTTPRequest(url: server.baseURL.appendingPathComponent("after-\(index)")))
            #expect(next.status == 200 && String(decoding: next.body, as: UTF8.self) == "GET /after-\(index) 0")
        }
        #expect(server.log.allSatisfy { $0.status == 200 }, "\(server.log.map { ($0.target, $0.status) })")
    }
}
