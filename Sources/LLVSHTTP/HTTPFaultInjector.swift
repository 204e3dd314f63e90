import Foundation
import Synchronization

/// Makes a client's next requests fail the ways servers fail, between the connector and the network, so the
/// failure checks of the conformance suite run against any server (`llvs conformance REMOTE --faults`), not only a
/// mock that fails on request.
///
/// Each injected fault is taken by the next request the client sends, except the requests that obtain credentials
/// (`HTTPRequest.isCredentialExchange`): an expired token's refresh is real, so a fault meant for a file request
/// never lands on it.
public final class HTTPFaultInjector: Sendable {
    public enum Fault: String, Sendable, CaseIterable {
        /// A 429 with Retry-After: 1, without sending the request.
        case rateLimited
        /// A 503 with Retry-After: 1, without sending the request.
        case serviceUnavailable
        /// The request is sent and answered, then its connection "drops": the server acted, the client saw nothing.
        case droppedAfterServerActed
        /// The connection drops half way through the request's body: the server got part of an upload. Taken by the
        /// next request with a body (bytes, a file or a multipart form).
        case droppedMidBody
        /// A 401 refusing the credentials, without sending the request: a renewal (an OAuth refresh) cures it.
        case unauthorized
        /// A 401 to the request and to its resend after the credentials are renewed: credentials revoked.
        case revoked
    }

    /// The header an injected `revoked` answer carries, so the client refuses the resend too.
    static let revokedMarker = "X-LLVS-Injected-Revocation"

    /// The waits the client decided on while faults were being injected (see `HTTPClientConfiguration.waitRecord`).
    public let waits = HTTPWaitRecord()
    /// Which requests a fault waits for.
    public enum Target: Sendable {
        /// The next request.
        case anyRequest
        /// The next request that changes something on the server (`HTTPRequest.changesRemote`): a removal's DELETE,
        /// not the look-up before it.
        case change
    }

    private let pending = Mutex<[(fault: Fault, target: Target)]>([])
    private let injected = Mutex<[Fault: Int]>([:])

    public init() {}

    /// Makes the next request (of `target`'s kind) fail with `fault` (faults queue in order).
    public func injectOnce(_ fault: Fault, on target: Target = .anyRequest) {
        pending.withLock { $0.append((fault, target)) }
    }

    /// How many of each fault requests have met so far.
    public var injectedCounts: [Fault: Int] { injected.withLock { $0 } }
    /// Faults injected that no request has met yet.
    public var pendingCount: Int { pending.withLock { $0.count } }

    /// The methods that only read: every other changes something (unless a request says otherwise).
    public static let readingMethods: Set<String> = ["GET", "HEAD", "PROPFIND", "OPTIONS", "REPORT"]

    /// The fault `request` meets, if one waits and the request is not a credential exchange.
    func take(for request: HTTPRequest) -> Fault? {
        guard !request.isCredentialExchange else { return nil }
        let streamsBody =
            switch request.body {
            case .data(let data): !data.isEmpty;
            case .file, .form: true;
            case .none: false
            }
        guard
            let fault = pending.withLock({ pending -> Fault? in
                guard let first = pending.first, first.fault != .droppedMidBody || streamsBody else { return nil }
                if case .change = first.target,
                    !(request.changesRemote ?? !Self.readingMethods.contains(request.method.uppercased()))
                {
                    return nil
                }
                return pending.removeFirst().fault
            })
        else { return nil }
        injected.withLock { $0[fault, default: 0] += 1 }
        return fault
    }

    /// The answer an injected fault gives in place of the server's; nil for a fault that needs the real exchange.
    static func answer(to fault: Fault, for request: HTTPRequest) -> HTTPResponse? {
        var headers: HTTPHeaders = [:]
        switch fault {
        case .rateLimited, .serviceUnavailable:
            headers["Retry-After"] = "1"
            return HTTPResponse(status: fault == .rateLimited ? 429 : 503, headers: headers, url: request.url)
        case .unauthorized, .revoked:
            // The challenge of the scheme the request signed in with: a password's refusal is final, a token's renewable.
            headers["WWW-Authenticate"] =
                request.credentials == nil
                ? #"Bearer error="invalid_token", error_description="injected""#
                : #"Basic realm="injected""#
            if fault == .revoked { headers[revokedMarker] = "1" }
            return HTTPResponse(status: 401, headers: headers, url: request.url)
        case .droppedAfterServerActed, .droppedMidBody:
            return nil
        }
    }

    /// What the client reports for a connection dropped after the answer began: curl's "failure receiving data".
    static func dropped(_ request: HTTPRequest) -> HTTPError {
        .transport(code: 56, message: "the connection dropped (an injected fault)", url: request.url.absoluteString)
    }
}
