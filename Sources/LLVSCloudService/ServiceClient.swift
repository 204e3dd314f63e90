import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP

/// What every HTTP connector sends its requests through: the shared HTTP client (the one retry point), the
/// account's authorizer, one pacer for all of this remote's transfers, and the connector's classifier, so a
/// failed answer leaves here already in the shared error vocabulary and no connector parses bodies or retries.
///
/// ```swift
/// let client = ServiceClient(http: HTTPClient(), authorizer: tokenSource, classifier: GoogleDriveClassifier())
/// let item = try await client.json(GoogleDriveItem.self, HTTPRequest(url: url), path: "notes/a.txt")
/// ```
public final class ServiceClient: Sendable {
    /// The HTTP client: connection reuse, the retry policy, the memory budget.
    public let http: HTTPClient
    /// Signs each request with the account's credentials (a refreshed OAuth token, a password); nil for none.
    public let authorizer: (any HTTPAuthorizer)?
    /// The connector's reading of a failed answer, into `CloudFileSystemError`.
    public let classifier: any ServiceErrorClassifier
    /// Shared by every request of this remote: one "slow down" holds all of them back.
    public let pacer: RequestPacer

    /// Whether a request carries the account's credentials. Upload-session and download URLs on other hosts are
    /// pre-authenticated and must never get the token.
    public enum Authorization: Sendable { case account, none }

    /// - Parameters:
    ///   - http: the client to send through.
    ///   - authorizer: the account's credentials, or nil.
    ///   - classifier: the connector's failure classifier.
    ///   - pacer: the remote's pacer; share one between clients of one remote.
    public init(
        http: HTTPClient, authorizer: (any HTTPAuthorizer)?, classifier: any ServiceErrorClassifier,
        pacer: RequestPacer = RequestPacer()
    ) {
        self.http = http
        self.authorizer = authorizer
        self.classifier = classifier
        self.pacer = pacer
    }

    /// The policy every retry follows (the client's), for helpers that retry on their own (resumable uploads).
    public var retryPolicy: RetryPolicy { http.configuration.retryPolicy }

    /// Sends a request and returns the answer whatever its status; failures below HTTP come back mapped.
    public func send(_ request: HTTPRequest, authorization: Authorization = .account) async throws -> HTTPResponse {
        var request = request
        if classifier.refusalsAreNotActedOn { request.repeatsAfterRefusal = true }
        let classifier = classifier
        do {
            return try await http.send(
                request, authorizer: authorization == .account ? authorizer : nil,
                isRetryable: { classifier.isRefusal($0) }, pacer: pacer)
        } catch {
            throw ServiceFailure.from(error)
        }
    }

    /// Sends and requires a success; anything else is the classifier's error about `path`.
    @discardableResult
    public func checked(
        _ request: HTTPRequest, path: String, authorization: Authorization = .account
    ) async throws -> HTTPResponse {
        let response = try await send(request, authorization: authorization)
        guard response.isSuccess else { throw classifier.failure(response, path: path) }
        return response
    }

    /// Sends and returns a successful answer, or nil when the classifier says nothing is at `path` (`notFound`); any
    /// other failure is the classifier's error.
    public func answerIfPresent(
        _ request: HTTPRequest, path: String, authorization: Authorization = .account
    ) async throws -> HTTPResponse? {
        let response = try await send(request, authorization: authorization)
        guard !response.isSuccess else { return response }
        let failure = classifier.failure(response, path: path)
        if case .notFound = failure { return nil }
        throw failure
    }

    /// Sends a removal. Nothing there is success: the removal was repeated after a lost answer, or another device
    /// removed it first.
    public func remove(_ request: HTTPRequest, path: String, authorization: Authorization = .account) async throws {
        _ = try await answerIfPresent(request, path: path, authorization: authorization)
    }

    /// The failure an answer stands for, in the shared vocabulary; nil for a success. For code that branches on a
    /// failure (a name already taken, an upload session gone) without reading statuses itself.
    public func failure(of response: HTTPResponse, path: String) -> CloudFileSystemError? {
        response.isSuccess ? nil : classifier.failure(response, path: path)
    }

    /// Sends a request for a page of a change feed and decodes it; an answer saying the position is no longer known
    /// is `cursorExpired`, naming `feed`.
    public func feedPage<T: Decodable>(_ type: T.Type, _ request: HTTPRequest, feed: String) async throws -> T {
        let response = try await send(request)
        if !response.isSuccess, classifier.isExpiredFeedPosition(response) {
            throw CloudFileSystemError.cursorExpired(
                "\(feed) no longer knows the position sent (\(classifier.failure(response, path: "the feed")))")
        }
        return try decode(type, response, path: feed)
    }

    /// Sends and decodes a JSON answer.
    public func json<T: Decodable>(
        _ type: T.Type, _ request: HTTPRequest, path: String, authorization: Authorization = .account
    ) async throws -> T {
        try decode(type, try await checked(request, path: path, authorization: authorization), path: path)
    }

    /// Decodes a successful answer's JSON, or says which answer was not what the service documents.
    public func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse, path: String) throws -> T {
        guard response.isSuccess else { throw classifier.failure(response, path: path) }
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw CloudFileSystemError.server(
                status: response.status, message: "the answer for \(path) is not the JSON expected: \(error)")
        }
    }

    /// A request with a JSON body.
    public static func jsonRequest(
        _ method: String, _ url: URL, _ body: some Encodable, safeToRepeat: Bool
    ) -> HTTPRequest {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let data = (try? encoder.encode(body)) ?? Data("{}".utf8)
        return HTTPRequest(
            method: method, url: url, headers: ["Content-Type": "application/json; charset=UTF-8"],
            body: .data(data), isSafeToRepeat: safeToRepeat)
    }

    /// A connector's `read(_:range:)`: the whole file for a nil `range` (a success, or `check`'s verdict), else the
    /// part, as `read(_:range:path:)` below.
    public func read(
        _ request: HTTPRequest, range: ByteRange?, path: String, authorization: Authorization = .account,
        check: ((HTTPResponse) async throws -> Void)? = nil
    ) async throws -> Data {
        guard let range else {
            let response = try await send(request, authorization: authorization)
            if let check {
                try await check(response)
            } else if !response.isSuccess {
                throw classifier.failure(response, path: path)
            }
            return response.body
        }
        return try await read(request, range: range, path: path, authorization: authorization)
    }

    /// A connector's `download(_:to:)`: streamed into a new file or into a region of one, as the two below.
    public func download(
        _ request: HTTPRequest, to destination: DownloadDestination, path: String,
        authorization: Authorization = .account,
        check: ((HTTPResponse) async throws -> Void)? = nil
    ) async throws {
        switch destination {
        case .file(let url):
            try await download(request, to: url, path: path, authorization: authorization, check: check)
        case .region(let url, let offset, let length):
            try await download(
                request, into: url, at: offset, length: length, path: path, authorization: authorization, check: check)
        }
    }

    /// Part of a file: 206 is the part (as is a 200 whose Content-Range names it); a server that ignores Range answers
    /// 200 with everything, from which the part is cut; 416 (nothing of the file is in the range) is an error, as it is for a local folder.
    public func read(
        _ request: HTTPRequest, range: ByteRange, path: String, authorization: Authorization = .account
    ) async throws -> Data {
        var request = request
        request.headers["Range"] = range.httpValue
        let response = try await send(request, authorization: authorization)
        switch response.status {
        case 206:
            return response.body
        case 200 where Self.namesAPart(response.headers["Content-Range"]):
            // The part, with the wrong status (`rclone serve s3` answers a range so): its Content-Range says which.
            return response.body
        case 200:
            guard let span = range.resolved(size: Int64(response.body.count)) else {
                throw Self.unsatisfiable(range, path)
            }
            return response.body.subdata(in: Int(span.lowerBound)..<Int(span.upperBound))
        case 416:
            throw Self.unsatisfiable(range, path)
        default:
            throw classifier.failure(response, path: path)
        }
    }

    /// Whether a Content-Range names a part (`bytes 100-199/10000`), not an unsatisfiable range (`bytes */10000`).
    static func namesAPart(_ contentRange: String?) -> Bool {
        guard let contentRange, contentRange.hasPrefix("bytes "), !contentRange.hasPrefix("bytes */") else {
            return false
        }
        return true
    }

    static func unsatisfiable(_ range: ByteRange, _ path: String) -> CloudFileSystemError {
        .server(status: 416, message: "range \(range.httpValue) is outside the file \(path)")
    }

    /// A download streamed into a local file; `check` judges the answer (by default it must be a success, anything
    /// else is the classifier's error). On any failure the partial file is removed.
    public func download(
        _ request: HTTPRequest, to destination: URL, path: String, authorization: Authorization = .account,
        check: ((HTTPResponse) async throws -> Void)? = nil
    ) async throws {
        var request = request
        request.destination = .file(destination)
        do {
            let response = try await send(request, authorization: authorization)
            if let check {
                try await check(response)
            } else if !response.isSuccess {
                throw classifier.failure(response, path: path)
            }
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw error
        }
    }

    /// A download streamed into `length` bytes of an existing file at `offset` (`HTTPResponseDestination.region`),
    /// for a connector's `download(_:into:at:length:)`; `check` as for `download(_:to:…)`. A failure leaves the file
    /// to its owner.
    public func download(
        _ request: HTTPRequest, into destination: URL, at offset: Int64, length: Int64, path: String,
        authorization: Authorization = .account, check: ((HTTPResponse) async throws -> Void)? = nil
    ) async throws {
        var request = request
        request.destination = .region(destination, offset: offset, length: length)
        let response: HTTPResponse
        do {
            response = try await send(request, authorization: authorization)
        } catch CloudFileSystemError.sizeMismatch(_, let expected, let received) {
            // Named by its path, not its URL.
            throw CloudFileSystemError.sizeMismatch(path: path, expected: expected, received: received)
        }
        if let check {
            try await check(response)
        } else if !response.isSuccess {
            throw classifier.failure(response, path: path)
        }
    }
}
