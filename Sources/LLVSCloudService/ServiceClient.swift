import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP

/// What every HTTP connector sends its requests through: the shared HTTP client (the one retry point), the
/// account's authorizer, one pacer for all of this remote's transfers, and the connector's classifier, so a
/// failed answer leaves here already in the shared error vocabulary and no connector parses bodies or retries.
public final class ServiceClient: Sendable {
    public let http: HTTPClient
    public let authorizer: (any HTTPAuthorizer)?
    public let classifier: any ServiceErrorClassifier
    /// Shared by every request of this remote: one "slow down" holds all of them back.
    public let pacer: RequestPacer

    /// Whether a request carries the account's credentials. Upload-session and download URLs on other hosts are
    /// pre-authenticated and must never get the token.
    public enum Authorization: Sendable { case account, none }

    public init(http: HTTPClient, authorizer: (any HTTPAuthorizer)?, classifier: any ServiceErrorClassifier,
                pacer: RequestPacer = RequestPacer()) {
        self.http = http
        self.authorizer = authorizer
        self.classifier = classifier
        self.pacer = pacer
    }

    public var retryPolicy: RetryPolicy { http.configuration.retryPolicy }

    /// Sends a request and returns the answer whatever its status; failures below HTTP come back mapped.
    public func send(_ request: HTTPRequest, authorization: Authorization = .account) async throws -> HTTPResponse {
        var request = request
        if classifier.refusalsAreNotActedOn { request.repeatsAfterRefusal = true }
        let classifier = classifier
        do {
            return try await http.send(request, authorizer: authorization == .account ? authorizer : nil,
                                       isRetryable: { classifier.isRefusal($0) }, pacer: pacer)
        } catch {
            throw ServiceFailure.from(error)
        }
    }

    /// Sends and requires a success; anything else is the classifier's error about `path`.
    @discardableResult
    public func checked(_ request: HTTPRequest, path: String, authorization: Authorization = .account) async throws -> HTTPResponse {
        let response = try await send(request, authorization: authorization)
        guard response.isSuccess else { throw classifier.failure(response, path: path) }
        return response
    }

    /// Sends and decodes a JSON answer.
    public func json<T: Decodable>(_ type: T.Type, _ request: HTTPRequest, path: String, authorization: Authorization = .account) async throws -> T {
        try decode(type, try await checked(request, path: path, authorization: authorization), path: path)
    }

    /// Decodes a successful answer's JSON, or says which answer was not what the service documents.
    public func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse, path: String) throws -> T {
        guard response.isSuccess else { throw classifier.failure(response, path: path) }
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw CloudFileSystemError.server(status: response.status, message: "the answer for \(path) is not the JSON expected: \(error)")
        }
    }

    /// A request with a JSON body.
    public static func jsonRequest(_ method: String, _ url: URL, _ body: some Encodable, safeToRepeat: Bool) -> HTTPRequest {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(body)) ?? Data("{}".utf8)
        return HTTPRequest(method: method, url: url, headers: ["Content-Type": "application/json; charset=UTF-8"],
                           body: .data(data), isSafeToRepeat: safeToRepeat)
    }

    /// Part of a file: 206 is the part; a server that ignores Range answers 200 with everything, from which the part
    /// is cut; 416 (nothing of the file is in the range) is an error, as it is for a local folder.
    public func read(_ request: HTTPRequest, range: ByteRange, path: String, authorization: Authorization = .account) async throws -> Data {
        var request = request
        request.headers["Range"] = range.httpValue
        let response = try await send(request, authorization: authorization)
        switch response.status {
        case 206:
            return response.body
        case 200:
            guard let span = range.resolved(size: Int64(response.body.count)) else { throw Self.unsatisfiable(range, path) }
            return response.body.subdata(in: Int(span.lowerBound)..<Int(span.upperBound))
        case 416:
            throw Self.unsatisfiable(range, path)
        default:
            throw classifier.failure(response, path: path)
        }
    }

    static func unsatisfiable(_ range: ByteRange, _ path: String) -> CloudFileSystemError {
        .server(status: 416, message: "range \(range.httpValue) is outside the file \(path)")
    }

    /// A download streamed into a local file; on any failure the partial file is removed.
    public func download(_ request: HTTPRequest, to destination: URL, path: String, authorization: Authorization = .account,
                         accept: (HTTPResponse) async throws -> Void = { _ in }) async throws {
        var request = request
        request.destination = .file(destination)
        do {
            let response = try await checked(request, path: path, authorization: authorization)
            try await accept(response)
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw error
        }
    }
}
