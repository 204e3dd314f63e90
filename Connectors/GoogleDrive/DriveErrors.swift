import Foundation
import LLVS
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

extension GoogleDriveFileSystem {
    /// 403 and 429 answers that say "slow down" are retried by the shared policy; everything else is not.
    static let isRetryable: @Sendable (HTTPResponse) -> Bool = { response in
        [403, 429].contains(response.status) && DriveErrorBody(response).isRateLimit
    }

    /// The shared vocabulary for a Drive answer that is not a success.
    static func failure(_ response: HTTPResponse, _ path: String) -> CloudFileSystemError {
        let body = DriveErrorBody(response)
        switch response.status {
        case 401:
            return .unauthorized("Google Drive refused the access token for \(path) (\(body.message)); authorize the remote again")
        case 403 where body.isRateLimit, 429:
            return .rateLimited(retryAfter: response.headers["Retry-After"].flatMap { RetryPolicy().retryAfter($0) })
        case 403 where body.isQuota:
            return .quotaExceeded("Google Drive has no room for \(path): \(body.message)")
        case 404:
            return .notFound(path: path)
        case 500...599:
            return .transient("Google Drive answered \(response.status) for \(path): \(body.message)")
        default:
            return .server(status: response.status, message: "\(response.status) for \(path): \(body.reasons.first.map { "\($0): " } ?? "")\(body.message)")
        }
    }

    static func failure(_ error: any Error) -> any Error {
        switch error {
        case let error as HTTPError:
            switch error {
            case .localFile(let path, let message): CloudFileSystemError.localFile(path: path, message: message)
            case .cancelled: CancellationError()
            default: error.isRetryable ? CloudFileSystemError.transient(error.description) : CloudFileSystemError.server(status: 0, message: error.description)
            }
        case let error as OAuthError:
            CloudFileSystemError.unauthorized(error.description)
        default:
            error
        }
    }
}
