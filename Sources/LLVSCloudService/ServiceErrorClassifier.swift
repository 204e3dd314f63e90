import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP

/// What a connector tells the shared client about its service's answers: how a failed answer maps to the one
/// error vocabulary, and which answers besides 429 and 503 mean "slow down". Each connector has one small
/// classifier; nothing else in a connector looks at status codes or error bodies.
public protocol ServiceErrorClassifier: Sendable {
    /// The shared vocabulary for an answer that is not a success, about `path`.
    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError
    /// Answers that ask to slow down beyond 429 and 503 (Drive's 403 `rateLimitExceeded`): retried and paced.
    func isRefusal(_ response: HTTPResponse) -> Bool
    /// Whether the service documents that a refused request (429, 503, `isRefusal`) was not acted on, so even a
    /// creation may be sent again after one.
    var refusalsAreNotActedOn: Bool { get }
    /// Whether a failed answer to a change-feed request says the position sent is no longer known, so the caller
    /// must list in full (`cursorExpired`). Services say it with their own status.
    func isExpiredFeedPosition(_ response: HTTPResponse) -> Bool
}

extension ServiceErrorClassifier {
    public func isRefusal(_ response: HTTPResponse) -> Bool { false }
    public var refusalsAreNotActedOn: Bool { false }
    public func isExpiredFeedPosition(_ response: HTTPResponse) -> Bool { false }
}

/// The parts of error mapping every service shares.
public enum ServiceFailure {
    /// A failure below HTTP (the network, a local file, a limit) or of the account's token, in the shared
    /// vocabulary. Cancellation stays `CancellationError`, so a cancelled sync is never reported as a remote failure.
    public static func from(_ error: any Error) -> any Error {
        switch error {
        case let error as HTTPError:
            switch error {
            case .localFile(let path, let message): CloudFileSystemError.localFile(path: path, message: message)
            case .cancelled: CancellationError()
            case .responseTooLarge(let limit, let url): CloudFileSystemError.tooLargeForMemory(path: url, limit: limit)
            case .memoryBudgetExceeded: CloudFileSystemError.transient(error.description)
            case .unexpectedLength(let expected, let received, let url):
                CloudFileSystemError.sizeMismatch(path: url, expected: expected, received: received)
            default:
                error.isRetryable
                    ? CloudFileSystemError.transient(error.description)
                    : CloudFileSystemError.server(status: 0, message: error.description)
            }
        case let error as OAuthError:
            CloudFileSystemError.unauthorized(error.description)
        default:
            error
        }
    }

    /// The delay a 429 or 503 asked for, from its Retry-After.
    public static func retryAfter(_ response: HTTPResponse) -> Duration? {
        response.headers["Retry-After"].flatMap { RetryPolicy().retryAfter($0) }
    }

    /// The mapping most services share for the statuses that mean the same everywhere; a classifier handles its
    /// service's own cases first and falls back to this.
    public static func standard(
        _ response: HTTPResponse, path: String, service: String, message: String
    ) -> CloudFileSystemError {
        switch response.status {
        case 401:
            .unauthorized("\(service) refused the credentials for \(path) (\(message)); authorize the remote again")
        case 404, 410: .notFound(path: path)
        case 429: .rateLimited(retryAfter: retryAfter(response))
        case 507: .quotaExceeded("\(service) has no room for \(path): \(message)")
        case 408, 500, 502, 503, 504: .transient("\(service) answered \(response.status) for \(path): \(message)")
        default: .server(status: response.status, message: "\(response.status) for \(path): \(message)")
        }
    }
}
