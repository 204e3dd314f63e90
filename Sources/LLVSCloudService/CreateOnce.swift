import Foundation
import LLVS
import LLVSHTTP

extension ServiceClient {
    /// Sends a creation that must not happen twice (a folder, a new file by POST). The service may have acted on a
    /// request whose answer was lost or was a 5xx, so before sending it again this looks whether the item landed.
    /// This is the request's only retry point: the HTTP client sends each attempt once, and all attempts together
    /// are at most the policy's `maximumAttempts`.
    public func createOnce<T: Sendable>(
        _ request: HTTPRequest, path: String, authorization: Authorization = .account,
        decode: (HTTPResponse) throws -> T, landed: () async throws -> T?
    ) async throws -> T {
        let policy = retryPolicy
        var request = request
        request.maximumAttempts = 1
        var attempt = 1
        while true {
            do {
                let response = try await send(request, authorization: authorization)
                guard response.isSuccess else { throw classifier.failure(response, path: path) }
                return try decode(response)
            } catch let error as CloudFileSystemError where error.isRetryable {
                guard attempt < policy.maximumAttempts else { throw error }
                if let item = try await landed() { return item }
                // A refusal already holds every request of the remote back through the pacer; other failures back off.
                if case .transient = error {
                    try await policy.sleep(policy.delay(beforeRetry: attempt, retryAfter: nil))
                }
                attempt += 1
            }
        }
    }
}
