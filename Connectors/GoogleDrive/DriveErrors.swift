import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Drive's error body, `{"error":{"errors":[{"domain","reason","message"}],"code","message"}}`, read once here so
/// no caller parses bodies.
struct DriveErrorBody {
    var reasons: [String] = []
    var message: String

    init(_ response: HTTPResponse) {
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        let error = object?["error"] as? [String: Any]
        reasons = (error?["errors"] as? [[String: Any]])?.compactMap { $0["reason"] as? String } ?? []
        if let status = error?["status"] as? String { reasons.append(status) }
        message = error?["message"] as? String ?? String(response.text.prefix(200))
    }

    static let rateLimitReasons: Set<String> = ["rateLimitExceeded", "userRateLimitExceeded", "RESOURCE_EXHAUSTED"]
    static let quotaReasons: Set<String> = ["storageQuotaExceeded", "quotaExceeded", "teamDriveFileLimitExceeded"]

    var isRateLimit: Bool { !Self.rateLimitReasons.isDisjoint(with: reasons) }
    var isQuota: Bool { !Self.quotaReasons.isDisjoint(with: reasons) }
}

/// Drive's answers in the shared vocabulary. 403 and 429 answers with a rate-limit reason mean "slow down" and were
/// not carried out (Drive documents it), so they are paced and retried even for creations.
struct DriveClassifier: ServiceErrorClassifier {
    var refusalsAreNotActedOn: Bool { true }

    func isRefusal(_ response: HTTPResponse) -> Bool {
        [403, 429].contains(response.status) && DriveErrorBody(response).isRateLimit
    }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        let body = DriveErrorBody(response)
        switch response.status {
        case 403 where body.isRateLimit:
            return .rateLimited(retryAfter: ServiceFailure.retryAfter(response))
        case 403 where body.isQuota:
            return .quotaExceeded("Google Drive has no room for \(path): \(body.message)")
        case 403 where body.reasons.contains("fileNotDownloadable"):
            return .wrongKind(path: path, expectedFolder: false)
        default:
            let reason = body.reasons.first.map { "\($0): " } ?? ""
            return ServiceFailure.standard(response, path: path, service: "Google Drive", message: reason + body.message)
        }
    }
}
