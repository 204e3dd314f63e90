import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Drive's error body, `{"error":{"errors":[{"domain","reason","message"}],"code","message"}}`, read once here so
/// no caller parses bodies.
struct GoogleDriveErrorBody {
    var reasons: [String] = []
    var message: String

    private struct Shape: Decodable {
        struct Details: Decodable {
            struct Reason: Decodable { var reason: String? }
            var errors: [Reason]?
            var status: String?
            var message: String?
        }
        var error: Details?
    }

    init(_ response: HTTPResponse) {
        let body = ServiceErrorBody<Shape>(response)
        let error = body.shape?.error
        reasons = (error?.errors ?? []).compactMap(\.reason) + (error?.status.map { [$0] } ?? [])
        message = error?.message ?? body.text
    }

    static let rateLimitReasons: Set<String> = ["rateLimitExceeded", "userRateLimitExceeded", "RESOURCE_EXHAUSTED"]
    static let quotaReasons: Set<String> = ["storageQuotaExceeded", "quotaExceeded", "teamDriveFileLimitExceeded"]

    var isRateLimit: Bool { !Self.rateLimitReasons.isDisjoint(with: reasons) }
    var isQuota: Bool { !Self.quotaReasons.isDisjoint(with: reasons) }
}

/// Drive's answers in the shared vocabulary. 403 and 429 answers with a rate-limit reason mean "slow down" and were
/// not carried out (Drive documents it), so they are paced and retried even for creations.
struct GoogleDriveClassifier: ServiceErrorClassifier {
    var refusalsAreNotActedOn: Bool { true }
    /// Drive refuses a page token it no longer knows with 400 (invalid value), 404 or 410.
    func isExpiredFeedPosition(_ response: HTTPResponse) -> Bool { [400, 404, 410].contains(response.status) }

    func isRefusal(_ response: HTTPResponse) -> Bool {
        [403, 429].contains(response.status) && GoogleDriveErrorBody(response).isRateLimit
    }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        let body = GoogleDriveErrorBody(response)
        switch response.status {
        case 403 where body.isRateLimit:
            return .rateLimited(retryAfter: ServiceFailure.retryAfter(response))
        case 403 where body.isQuota:
            return .quotaExceeded("Google Drive has no room for \(path): \(body.message)")
        case 403 where body.reasons.contains("fileNotDownloadable"):
            return .wrongKind(path: path, expectedFolder: false)
        default:
            let reason = body.reasons.first.map { "\($0): " } ?? ""
            return ServiceFailure.standard(
                response, path: path, service: "Google Drive", message: reason + body.message)
        }
    }
}
