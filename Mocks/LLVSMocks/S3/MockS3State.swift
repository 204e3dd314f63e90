import Foundation
import LLVSHTTP
import LLVSSupport

/// One stored object: its bytes, its ETag (an MD5, or an MD5 of part MD5s and `-N`) and when it was written.
struct MockS3Object: Sendable {
    var content: MockContent
    var etag: String
    var modified: Date
}

/// A multipart upload in progress: its parts by number, each with its bytes, size and ETag.
struct MockS3Upload: Sendable {
    var bucket: String
    var key: String
    var parts: [Int: (content: MockContent, etag: String, md5: [UInt8])] = [:]
}

/// Everything the mock holds, behind one lock: buckets of objects by key (compared byte for byte, as S3 keys are),
/// and multipart uploads by ID.
struct MockS3State: Sendable {
    var buckets: [String: [MockNameKey: MockS3Object]] = [:]
    var uploads: [String: MockS3Upload] = [:]
}

/// S3's error body (`<Error><Code>…`), with the status it comes with.
struct MockS3Error: Error {
    var status: Int
    var code: String
    var message: String
    var resource = ""

    init(_ status: Int, _ code: String, _ message: String, resource: String = "") {
        self.status = status
        self.code = code
        self.message = message
        self.resource = resource
    }

    static func xml(_ code: String, _ message: String, resource: String = "") -> String {
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Error><Code>\(code)</Code><Message>\(XMLText.escape(message))</Message>"
            + "<Resource>\(XMLText.escape(resource))</Resource><RequestId>LLVSMOCK0000000</RequestId></Error>"
    }

    func response(method: String) -> MockResponse {
        // A HEAD answer has no body: its status is all a client gets.
        if method == "HEAD" { return MockResponse(status: status, headers: ["x-amz-request-id": "LLVSMOCK0000000"]) }
        return MockResponse(
            status: status, headers: ["Content-Type": "application/xml", "x-amz-request-id": "LLVSMOCK0000000"],
            body: .data(Data(Self.xml(code, message, resource: resource).utf8)))
    }
}

enum MockS3XML {
    /// An answer document.
    static func answer(_ root: String, _ inner: String) -> MockResponse {
        MockResponse(
            status: 200, headers: ["Content-Type": "application/xml"],
            body: .data(
                Data(
                    "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<\(root) xmlns=\"http://s3.amazonaws.com/doc/2006-03-01/\">\(inner)</\(root)>"
                        .utf8)))
    }

    /// `2026-12-06T20:00:00.000Z`, as S3 lists times.
    static func time(_ date: Date) -> String {
        let milliseconds = Int((date.timeIntervalSince1970 * 1000).rounded(.down)) % 1000
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d-%02d-%02dT%02d:%02d:%02d.%03dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1,
            Int(parts.tm_mday), Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec), milliseconds)
    }
}
