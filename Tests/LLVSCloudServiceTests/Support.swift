import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import LLVSMocks

/// A classifier for tests: the shared mapping and nothing of any service's own.
struct PlainClassifier: ServiceErrorClassifier {
    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        ServiceFailure.standard(response, path: path, service: "the test service", message: response.text)
    }
}

/// Adds a bearer token, as an OAuth token source would.
struct BearerAuthorizer: HTTPAuthorizer {
    var token = "secret-token"
    func authorize(_ request: inout HTTPRequest) async throws { request.headers["Authorization"] = "Bearer \(token)" }
    func renew(after response: HTTPResponse, to request: HTTPRequest) async throws -> Bool { false }
}

/// A client whose retries do not wait, unless `realSleep`.
func testClient(attempts: Int = 5, realSleep: Bool = false) -> HTTPClient {
    var configuration = HTTPClientConfiguration()
    configuration.retryPolicy =
        realSleep
        ? RetryPolicy(maximumAttempts: attempts, baseDelay: .milliseconds(10))
        : RetryPolicy(maximumAttempts: attempts, sleep: { _ in })
    return HTTPClient(configuration: configuration)
}
