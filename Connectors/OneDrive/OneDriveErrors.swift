import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Graph's error body, `{"error":{"code","message","innerError":{…}}}`, read once here.
struct GraphErrorBody {
    var code: String
    var message: String

    private struct Shape: Decodable {
        struct Details: Decodable {
            var code: String?
            var message: String?
        }
        var error: Details?
    }

    init(_ response: HTTPResponse) {
        let body = ServiceErrorBody<Shape>(response)
        code = body.shape?.error?.code ?? ""
        message = body.shape?.error?.message ?? body.text
    }
}

/// OneDrive's answers in the shared vocabulary. 429 and 503 with Retry-After are paced and retried by the shared
/// client; `activityLimitReached` in any status is the same "slow down"; 507 and `quotaLimitReached` are final.
struct OneDriveClassifier: ServiceErrorClassifier {
    /// Graph answers a delta link it no longer honours with 410 Gone (`resyncRequired`).
    func isExpiredFeedPosition(_ response: HTTPResponse) -> Bool { response.status == 410 }
    func isRefusal(_ response: HTTPResponse) -> Bool {
        response.status == 403 && GraphErrorBody(response).code == "activityLimitReached"
    }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        let body = GraphErrorBody(response)
        switch (response.status, body.code) {
        case (_, "itemNotFound"), (404, _):
            return .notFound(path: path)
        case (_, "nameAlreadyExists"):
            return .alreadyExists(path: path)
        case (_, "activityLimitReached"):
            return .rateLimited(retryAfter: ServiceFailure.retryAfter(response))
        case (_, "quotaLimitReached"), (507, _):
            return .quotaExceeded("OneDrive has no room for \(path): \(body.message)")
        case (401, _):
            return .unauthorized(
                "OneDrive refused the access token for \(path) (\(body.message)); authorize the remote again")
        case (_, "resourceModified"):
            return .transient("OneDrive says \(path) changed meanwhile: \(body.message)")
        default:
            return ServiceFailure.standard(
                response, path: path, service: "OneDrive",
                message: (body.code.isEmpty ? "" : body.code + ": ") + body.message)
        }
    }
}
