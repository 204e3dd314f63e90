import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Box's error body: `{"type":"error","status","code","message","context_info":{"conflicts": …}}`, read once here.
struct BoxErrorBody {
    var code: String
    var message: String
    /// The items a 409 `item_name_in_use` names: `conflicts` is an array in most answers and one object in some.
    var conflicts: [BoxItem]

    private struct Shape: Decodable {
        struct Context: Decodable { var conflicts: OneOrMany<BoxItem>? }
        var code: String?
        var message: String?
        var context_info: Context?
    }

    init(_ response: HTTPResponse) {
        let body = ServiceErrorBody<Shape>(response)
        code = body.shape?.code ?? ""
        message = body.shape?.message ?? body.text
        conflicts = body.shape?.context_info?.conflicts?.elements ?? []
    }
}

/// Box's answers in the shared vocabulary. 429 (with retry-after) is paced by the shared client;
/// `operation_blocked_temporary` and a download's 202 (not ready yet, with Retry-After) are refusals too.
struct BoxClassifier: ServiceErrorClassifier {
    /// Box refuses a stream position it no longer keeps with 400.
    func isExpiredFeedPosition(_ response: HTTPResponse) -> Bool { response.status == 400 }
    func isRefusal(_ response: HTTPResponse) -> Bool {
        response.status == 202 && response.headers["Retry-After"] != nil && response.body.isEmpty
            || (response.status >= 400 && BoxErrorBody(response).code == "operation_blocked_temporary")
    }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        let body = BoxErrorBody(response)
        switch (response.status, body.code) {
        case (_, "not_found"), (404, _):
            return .notFound(path: path)
        case (_, "item_name_in_use"):
            return .alreadyExists(path: path)
        case (_, "rate_limit_exceeded"):
            return .rateLimited(retryAfter: ServiceFailure.retryAfter(response))
        case (_, "storage_limit_exceeded"):
            return .quotaExceeded("Box has no room for \(path): \(body.message)")
        case (_, "operation_blocked_temporary"):
            return .transient("Box blocked the operation on \(path) for now: \(body.message)")
        case (401, _):
            return .unauthorized(
                "Box refused the access token for \(path) (\(body.message)); authorize the remote again")
        default:
            return ServiceFailure.standard(
                response, path: path, service: "Box",
                message: (body.code.isEmpty ? "" : body.code + ": ") + body.message)
        }
    }
}
