import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// S3's error body: `<Error><Code>NoSuchKey</Code><Message>…</Message></Error>`. Branch on the code, not the status
/// (`NoSuchKey` and `NoSuchBucket` are both 404). A HEAD answer has no body: its status is all there is.
struct S3ErrorBody {
    var code: String
    var message: String

    init(_ response: HTTPResponse) {
        let root = try? S3XMLElement.parse(response.body)
        code = root?.name == "Error" ? root?.value("Code") ?? "" : ""
        message = root?.value("Message") ?? String(response.text.prefix(200))
    }

    /// An error inside a 200 answer: CompleteMultipartUpload (and CopyObject) may fail after sending 200.
    static func inSuccess(_ response: HTTPResponse) -> S3ErrorBody? {
        guard response.isSuccess, response.body.prefix(256).range(of: Data("<Error>".utf8)) != nil else { return nil }
        return S3ErrorBody(response)
    }
}

/// S3's answers in the shared vocabulary. `SlowDown` (503) is paced by the shared client; `InternalError` (500) is
/// retried where the request may be repeated; keys refused are `unauthorized`; a missing bucket is said as such
/// rather than as a missing file.
struct S3Classifier: ServiceErrorClassifier {
    let bucket: String

    func isRefusal(_ response: HTTPResponse) -> Bool {
        response.status == 503 || S3ErrorBody(response).code == "SlowDown"
    }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        let body = S3ErrorBody(response)
        switch (response.status, body.code) {
        case (_, "NoSuchBucket"):
            return .server(status: 404, message: "the bucket \(bucket) does not exist (\(body.message))")
        case (_, "NoSuchKey"), (_, "NoSuchUpload"), (404, ""):
            return .notFound(path: path)
        case (_, "PreconditionFailed"), (412, _):
            return .alreadyExists(path: path)
        case (_, "ConditionalRequestConflict"), (_, "InternalError"), (_, "OperationAborted"), (_, "RequestTimeout"):
            return .transient("S3 answered \(body.code) for \(path): \(body.message)")
        case (_, "SlowDown"):
            return .rateLimited(retryAfter: ServiceFailure.retryAfter(response))
        case (_, "InvalidAccessKeyId"), (_, "SignatureDoesNotMatch"), (_, "AccessDenied"), (_, "ExpiredToken"),
            (_, "InvalidToken"), (403, ""):
            let code = body.code.isEmpty ? "403" : body.code
            return .unauthorized(
                "S3 refused the keys for \(path) (\(code): \(body.message)); check the access key and its secret")
        case (_, "EntityTooLarge"), (_, "QuotaExceeded"):
            return .quotaExceeded("S3 has no room for \(path): \(body.message)")
        default:
            return ServiceFailure.standard(
                response, path: path, service: "S3",
                message: (body.code.isEmpty ? "" : body.code + ": ") + body.message)
        }
    }
}
