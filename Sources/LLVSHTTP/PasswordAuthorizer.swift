import Foundation
import Synchronization

/// Sign-in that is not OAuth: a user and password (Basic or Digest) or a fixed bearer token, as WebDAV servers ask.
/// Nothing expires, so the only renewal is of the scheme: Basic is sent with the first request (a probe without it
/// would double every request), and a server whose challenge is not Basic (a Digest server given Basic credentials)
/// switches this authorizer to letting libcurl negotiate, once, for every later request.
public final class PasswordAuthorizer: HTTPAuthorizer {
    public enum Credentials: Sendable, Equatable {
        case basic(user: String, password: String)
        /// libcurl answers the server's Digest challenge.
        case digest(user: String, password: String)
        case bearer(token: String)
    }

    public let credentials: Credentials
    /// Set once the server asked for a scheme other than Basic.
    private let negotiates = Atomic<Bool>(false)

    public init(_ credentials: Credentials) {
        self.credentials = credentials
    }

    public func authorize(_ request: inout HTTPRequest) async throws {
        switch credentials {
        case .basic(let user, let password):
            request.credentials = HTTPCredentials(
                user: user, password: password, scheme: negotiates.load(ordering: .relaxed) ? .any : .basic)
        case .digest(let user, let password):
            request.credentials = HTTPCredentials(user: user, password: password, scheme: .digest)
        case .bearer(let token):
            request.headers["Authorization"] = "Bearer \(token)"
        }
    }

    /// True once, for Basic credentials refused by a server that challenges only with other schemes.
    public func renew(after response: HTTPResponse, to request: HTTPRequest) async throws -> Bool {
        guard case .basic = credentials, request.credentials?.scheme == .basic,
            case let challenges = response.headers.values("WWW-Authenticate"), !challenges.isEmpty,
            !challenges.contains(where: { $0.lowercased().hasPrefix("basic") })
        else { return false }
        negotiates.store(true, ordering: .relaxed)
        return true
    }
}
