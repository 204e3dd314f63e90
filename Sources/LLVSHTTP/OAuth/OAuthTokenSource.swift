import Foundation
import LLVSSupport

/// The one place a remote's requests get their access token. It refreshes ahead of expiry and once after a 401
/// that the connector recognises as a rejected token; concurrent requests share one refresh (single flight), and
/// processes share one through the token file's lock: before refreshing, the file is read again under the lock,
/// since another process may have refreshed already (which matters for Box's single-use refresh tokens). A
/// rotated refresh token is on disk before the new access token is used. `invalid_grant` leaves the file as it
/// was and tells the user which command authorizes again.
public actor OAuthTokenSource: HTTPAuthorizer {
    public nonisolated let file: TokenFile
    public nonisolated let configuration: OAuthConfiguration
    /// The command that authorizes this remote again, named in errors (`llvs auth NAME`).
    public nonisolated let reauthorizeCommand: String
    /// Refresh when less than this is left.
    public nonisolated let refreshMargin: TimeInterval
    /// Tells whether a 401 answer means the token is expired or invalid (services say it differently).
    public nonisolated let isTokenRejection: @Sendable (HTTPResponse) -> Bool
    private let http: HTTPClient
    /// Where refreshes run: nil for this process; a helper of its own session where the application gives one, so a
    /// refresh outlives this process (`DetachedRefresh`).
    private let detached: DetachedRefresh?
    private let now: @Sendable () -> Date
    private var cached: OAuthToken?
    private var refreshing: Task<OAuthToken, any Error>?
    /// Refreshes performed by this source, for tests and traces.
    public private(set) var refreshCount = 0
    /// How long the last refresh took from the token endpoint's answer to the new token on disk: the window in which
    /// a kill loses a single-use refresh token (Box), measured so it can be shown to hold nothing but the write.
    public private(set) var lastRefreshKeptIn: Duration?

    public init(
        file: TokenFile, configuration: OAuthConfiguration, http: HTTPClient, reauthorizeCommand: String,
        refreshMargin: TimeInterval = 60, now: @escaping @Sendable () -> Date = { Date() },
        isTokenRejection: @escaping @Sendable (HTTPResponse) -> Bool = { $0.status == 401 },
        detached: DetachedRefresh? = nil
    ) {
        self.detached = detached
        self.file = file
        self.configuration = configuration
        self.http = http
        self.reauthorizeCommand = reauthorizeCommand
        self.refreshMargin = refreshMargin
        self.now = now
        self.isTokenRejection = isTokenRejection
    }

    /// A token good for at least `refreshMargin` more seconds (refreshed first if need be).
    public func token() async throws -> OAuthToken {
        let token = try currentToken()
        guard token.expires(within: refreshMargin, now: now()), token.refreshToken != nil else { return token }
        return try await refresh(replacing: token.accessToken)
    }

    private func currentToken() throws -> OAuthToken {
        if let cached { return cached }
        guard let token = try file.read() else {
            throw OAuthError.notAuthorized(command: reauthorizeCommand, tokenFile: file.path)
        }
        cached = token
        return token
    }

    public nonisolated func authorize(_ request: inout HTTPRequest) async throws {
        let token = try await token()
        request.headers["Authorization"] =
            "\(token.tokenType.lowercased() == "bearer" ? "Bearer" : token.tokenType) \(token.accessToken)"
    }

    public nonisolated func renew(after response: HTTPResponse, to request: HTTPRequest) async throws -> Bool {
        guard isTokenRejection(response), let sent = request.headers["Authorization"]?.split(separator: " ").last else {
            return false
        }
        _ = try await refresh(replacing: String(sent))
        return true
    }

    /// Replaces `rejected` with a fresh token, unless that already happened (here or in another process).
    public func refresh(replacing rejected: String) async throws -> OAuthToken {
        if let refreshing { return try await refreshing.value }
        if let cached, cached.accessToken != rejected, !cached.expires(within: refreshMargin, now: now()) {
            return cached
        }
        let task = Task {
            try await self.detached == nil
                ? self.refreshUnderLock(replacing: rejected) : self.refreshDetached(replacing: rejected)
        }
        refreshing = task
        defer { refreshing = nil }
        return try await task.value
    }

    /// The refresh done by the helper, which takes the lock, reads the file again and writes the new token; the token
    /// is read back from the file it wrote.
    private func refreshDetached(replacing rejected: String) async throws -> OAuthToken {
        guard let detached else { return try await refreshUnderLock(replacing: rejected) }
        try await detached.refresh(
            .init(
                tokenFile: file.path, tokenURL: configuration.tokenURL, clientId: configuration.clientId,
                clientSecret: configuration.clientSecret, scopes: configuration.scopes,
                basicClientAuthentication: configuration.clientAuthentication == .basic, rejected: rejected,
                refreshMargin: refreshMargin, reauthorizeCommand: reauthorizeCommand))
        guard let token = try file.read() else {
            throw OAuthError.notAuthorized(command: reauthorizeCommand, tokenFile: file.path)
        }
        cached = token
        refreshCount += 1
        return token
    }

    private func refreshUnderLock(replacing rejected: String) async throws -> OAuthToken {
        try await file.withLock {
            let onDisk = try file.read()
            if let onDisk, onDisk.accessToken != rejected, !onDisk.expires(within: refreshMargin, now: now()) {
                cached = onDisk  // another process refreshed while we waited
                return onDisk
            }
            let previous = onDisk ?? cached
            guard let refreshToken = previous?.refreshToken else {
                throw OAuthError.reauthorizationRequired(
                    command: reauthorizeCommand, reason: "the token cannot be refreshed")
            }
            var fields = [("grant_type", "refresh_token"), ("refresh_token", refreshToken)]
            if !configuration.scopes.isEmpty { fields.append(("scope", configuration.scopes.joined(separator: " "))) }
            // Token endpoints answer temporarily_unavailable, 429 and 5xx when they did not act: safe to repeat.
            let request = configuration.tokenRequest(configuration.tokenURL, fields: fields, safeToRepeat: true)
            let response = try await http.send(
                request, isRetryable: { TokenEndpointError($0).code == "temporarily_unavailable" })
            let answered = ContinuousClock.now
            guard response.isSuccess else {
                let error = TokenEndpointError(response)
                if error.code == "invalid_grant" {
                    throw OAuthError.reauthorizationRequired(
                        command: reauthorizeCommand, reason: "the service answered invalid_grant: \(error.description)")
                }
                throw OAuthError.tokenEndpoint(
                    status: response.status, error: error.code, description: error.description)
            }
            let token = try OAuthToken(tokenResponse: response.body, now: now(), previous: previous)
            try file.write(token)  // a rotated refresh token is safe on disk before anyone uses the new access token
            lastRefreshKeptIn = ContinuousClock.now - answered
            cached = token
            refreshCount += 1
            return token
        }
    }
}
