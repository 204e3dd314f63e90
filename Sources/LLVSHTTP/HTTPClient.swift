import Foundation
import LLVSSupport

/// Adds credentials to requests and renews them when the server refuses them. OAuth token sources, Basic and
/// bearer credentials all plug in here, so every request of a connector goes through one place.
public protocol HTTPAuthorizer: Sendable {
    /// Adds credentials to a request about to go to its own host (never to a host a redirect leads to).
    func authorize(_ request: inout HTTPRequest) async throws
    /// Given a 401 answer to `request` (as sent, with its credentials), renews the credentials if the answer says
    /// they are expired or invalid, and returns true when the request should be sent once more.
    func renew(after response: HTTPResponse, to request: HTTPRequest) async throws -> Bool
}

/// The HTTP client every connector uses: libcurl's multi interface underneath (connection reuse, HTTP/2, many
/// transfers at once), with the shared retry policy, redirects that never carry credentials to another host,
/// bodies streamed from and to files, and a redacted trace.
public final class HTTPClient: Sendable {
    public let configuration: HTTPClientConfiguration
    private let engine: CurlEngine
    /// Shared by every transfer of this client: the bound on answers held in memory at once.
    public let memoryBudget: MemoryBudget

    public init(configuration: HTTPClientConfiguration = HTTPClientConfiguration()) {
        self.configuration = configuration
        memoryBudget = MemoryBudget(limit: configuration.maximumBufferedBytes)
        engine = CurlEngine(
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
            maximumTotalConnections: configuration.maximumTotalConnections)
    }

    deinit { engine.shutdown() }

    /// Sends a request and returns the answer, whatever its status. This is the one retry point of every request:
    /// failures of the network (and 429, 5xx and answers `isRetryable` picks) are retried by the policy when the
    /// request is safe to repeat, up to `request.maximumAttempts`; a 401 gives the authorizer one chance to renew and
    /// the request is sent once more. With a `pacer`, every attempt waits its turn and a refusal (429, 503, or what
    /// `isRetryable` picks) slows down every request sharing that pacer, for the Retry-After the server asked.
    public func send(
        _ request: HTTPRequest, authorizer: (any HTTPAuthorizer)? = nil,
        isRetryable: (@Sendable (HTTPResponse) -> Bool)? = nil, pacer: RequestPacer? = nil
    ) async throws -> HTTPResponse {
        var renewed = false
        while true {
            var authorized = request
            try await authorizer?.authorize(&authorized)
            let response = try await sendRetrying(authorized, isRetryable: isRetryable, pacer: pacer)
            if response.status == 401, !renewed, let authorizer,
                try await authorizer.renew(after: response, to: authorized)
            {
                renewed = true
                // Revoked credentials stay refused after a renewal.
                if response.headers[HTTPFaultInjector.revokedMarker] != nil {
                    configuration.faults?.injectOnce(.unauthorized)
                }
                continue
            }
            return response
        }
    }

    private func sendRetrying(
        _ request: HTTPRequest, isRetryable: (@Sendable (HTTPResponse) -> Bool)?,
        pacer: RequestPacer?
    ) async throws -> HTTPResponse {
        let policy = configuration.retryPolicy
        let maximumAttempts = max(1, request.maximumAttempts ?? policy.maximumAttempts)
        var attempt = 1
        while true {
            try await pacer?.waitForTurn(sleep: policy.sleep)
            let wait: Duration
            do {
                let response = try await followingRedirects(request)
                let picked = isRetryable?(response) == true
                let refused = picked || Self.refusalStatuses.contains(response.status)
                let retryAfter = response.headers["Retry-After"].flatMap(policy.retryAfter)
                if refused {
                    // Every transfer of the remote holds back, not only this one, whether or not this one is retried.
                    let hold = policy.delay(beforeRetry: attempt, retryAfter: retryAfter)
                    pacer?.slowDown(for: hold)
                    if pacer != nil { noteWait(hold) }
                } else if response.status < 500 {
                    pacer?.succeeded()
                }
                guard attempt < maximumAttempts, !request.finalStatuses.contains(response.status),
                    (request.repeatable && (Self.retryableStatuses.contains(response.status) || picked))
                        || (request.repeatsAfterRefusal && refused)
                else { return response }
                // A paced refusal already holds this request back through the pacer.
                wait = refused && pacer != nil ? .zero : policy.delay(beforeRetry: attempt, retryAfter: retryAfter)
                trace(
                    "↻ \(response.status) from \(Redaction.url(request.url)); retry \(attempt) of \(maximumAttempts - 1)"
                )
            } catch let error as HTTPError {
                guard request.repeatable, attempt < maximumAttempts, error.isRetryable else { throw error }
                wait = policy.delay(beforeRetry: attempt, retryAfter: nil)
                trace("↻ \(error); retry \(attempt) of \(maximumAttempts - 1)")
            }
            if wait > .zero {
                noteWait(wait)
                try await policy.sleep(wait)
            }
            try Task.checkCancellation()
            attempt += 1
        }
    }

    private func noteWait(_ wait: Duration) {
        configuration.waitRecord?.record(wait)
        configuration.faults?.waits.record(wait)
    }

    static let retryableStatuses: Set<Int> = [408, 429, 500, 502, 503, 504]
    /// Answers that say the server did not act on the request.
    static let refusalStatuses: Set<Int> = [429, 503]
    static let redirectStatuses: Set<Int> = [301, 302, 303, 307, 308]

    private func followingRedirects(_ original: HTTPRequest) async throws -> HTTPResponse {
        var current = original
        var sameHost = true
        for _ in 0...configuration.maximumRedirects {
            var sending = current
            if !sameHost {
                sending.headers.remove("Authorization")
                sending.headers.remove("Cookie")
                sending.credentials = nil
            }
            let response = try await perform(sending)
            guard current.followsRedirects, Self.redirectStatuses.contains(response.status),
                let location = response.headers["Location"],
                let next = URL(string: location, relativeTo: current.url)?.absoluteURL
            else { return response }
            if !Self.sameOrigin(next, original.url) { sameHost = false }
            if response.status == 303
                || ([301, 302].contains(response.status) && current.method.uppercased() == "POST")
            {
                current.method = "GET"
                current.body = .none
            }
            current.url = next
        }
        throw HTTPError.tooManyRedirects(url: original.url.absoluteString)
    }

    static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? {
            url.port ?? (url.scheme?.lowercased() == "https" ? 443 : url.scheme?.lowercased() == "http" ? 80 : nil)
        }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased()
            && port(a) == port(b)
    }

    /// One exchange on the wire, traced; or the fault injected in its place.
    private func perform(_ request: HTTPRequest) async throws -> HTTPResponse {
        guard let fault = configuration.faults?.take(for: request) else { return try await performOnWire(request) }
        trace("⚡ \(fault.rawValue) injected into \(request.method) \(Redaction.url(request.url))")
        if let answer = HTTPFaultInjector.answer(to: fault, for: request) { return answer }
        if fault == .droppedMidBody { return try await performOnWire(request, droppingBodyHalfWay: true) }
        _ = try await performOnWire(request)
        throw HTTPFaultInjector.dropped(request)
    }

    private func performOnWire(_ request: HTTPRequest, droppingBodyHalfWay: Bool = false) async throws -> HTTPResponse {
        let start = DispatchTime.now().uptimeNanoseconds
        if let trace = configuration.trace {
            trace("→ \(request.method) \(Redaction.url(request.url))")
            for field in request.headers { trace("  \(field.name): \(Redaction.header(field.name, field.value))") }
        }
        let transfer = try CurlTransfer(
            request: request, configuration: configuration, budget: memoryBudget,
            droppingBodyHalfWay: droppingBodyHalfWay)
        do {
            let result = try transfer.result(code: try await engine.perform(transfer)).get()
            if let trace = configuration.trace {
                let milliseconds = (DispatchTime.now().uptimeNanoseconds - start) / 1_000_000
                trace(
                    "← \(result.status) \(Redaction.url(request.url)) (\(result.body.count) bytes in memory, \(milliseconds) ms)"
                )
                for field in result.headers { trace("  \(field.name): \(Redaction.header(field.name, field.value))") }
            }
            return HTTPResponse(status: result.status, headers: result.headers, body: result.body, url: result.url)
        } catch {
            trace("✗ \(request.method) \(Redaction.url(request.url)): \(error)")
            throw error
        }
    }

    private func trace(_ line: String) { configuration.trace?(line) }
}

extension HTTPError {
    /// Network failures worth another attempt: refused or reset connections, timeouts, a dropped answer.
    public var isRetryable: Bool {
        guard case .transport(let code, _, _) = self else { return false }
        // 65: a resend the transfer refused (`CurlTransfer.mayRewind`), after a connection died with no answer: lost
        // like the others, the server may have acted.
        return [6, 7, 16, 18, 28, 35, 52, 55, 56, 65, 92].contains(code)
    }
}
