import Foundation
import LLVSHTTP

/// S3's failures by name: its throttling, an internal error before or after the write, a lost answer, an upload a
/// lifecycle rule aborted, and keys refused.
extension MockS3Server: MockFaultCatalogue {
    public static var namedFaults: [MockNamedFault] {
        let all = MockFaultScope(paths: ["/"], describe: "every request")
        let writes = MockFaultScope(methods: ["PUT", "POST", "DELETE"], paths: ["/"], describe: "writes")
        let puts = MockFaultScope(methods: ["PUT"], paths: ["/"], describe: "PutObject")
        func body(_ code: String, _ message: String) -> String { MockS3Error.xml(code, message) }
        return [
            .xml(
                "slow-down", "503 SlowDown: the prefix's request rate is too high (Retry-After 1)", transient: true,
                scope: all, status: 503, headers: ["Retry-After": "1"],
                body: body("SlowDown", "Please reduce your request rate.")),
            .xml(
                "internal-error", "500 InternalError before anything was written", transient: true, scope: all,
                status: 500, body: body("InternalError", "We encountered an internal error. Please try again.")),
            MockNamedFault(
                "internal-error-after-write",
                "500 InternalError to a PutObject S3 carried out (the write may have happened: it did)",
                transient: true, scope: puts, effect: .behavior),
            MockNamedFault(
                "answer-lost", "a write carried out, then the connection drops before its answer", transient: true,
                scope: writes, effect: .answer(.dropBeforeAnswer)),
            MockNamedFault(
                "no-such-upload", "404 NoSuchUpload to a part: a lifecycle rule aborted the multipart upload",
                transient: true, scope: MockFaultScope(methods: ["PUT"], paths: ["/"], describe: "UploadPart"),
                effect: .behavior),
            .xml(
                "access-denied", "403 AccessDenied: the key may not do this", transient: false, scope: all,
                status: 403, body: body("AccessDenied", "Access Denied")),
        ]
    }
}

extension MockNamedFault {
    /// An answer with an XML body, as S3 sends its errors.
    static func xml(
        _ name: String, _ summary: String, transient: Bool, scope: MockFaultScope, status: Int,
        headers: HTTPHeaders = [:], body: String
    ) -> MockNamedFault {
        var all = headers
        all["Content-Type"] = "application/xml"
        return MockNamedFault(
            name, summary, transient: transient, scope: scope,
            effect: .answer(.answer(status: status, headers: all, body: Data(body.utf8))))
    }
}
