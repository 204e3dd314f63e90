import Foundation
import LLVSSupport

/// The ways to get a first token on a Linux machine (docs/services/oauth.md): authorization code with PKCE and a
/// loopback redirect when a browser is at hand; the same with the redirect pasted back on a headless machine; the
/// device authorization grant where the service has one; or a token JSON made elsewhere.
public struct OAuthAuthorization: Sendable {
    public let configuration: OAuthConfiguration
    public let http: HTTPClient
    public let now: @Sendable () -> Date

    public init(configuration: OAuthConfiguration, http: HTTPClient, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        self.http = http
        self.now = now
    }

    /// One authorization attempt: the URL to open, and what the answer must match.
    public struct Attempt: Sendable {
        public let url: URL
        public let state: String
        public let pkce: PKCE
        public let redirectURI: String
    }

    public func makeAttempt(redirectURI: String) -> Attempt {
        let pkce = PKCE()
        let state = PKCE.base64URL(PKCE.randomBytes(16))
        var components = URLComponents(url: configuration.authorizationURL, resolvingAgainstBaseURL: false)!
        var items = components.queryItems ?? []
        items += [URLQueryItem(name: "response_type", value: "code"), URLQueryItem(name: "client_id", value: configuration.clientId),
                  URLQueryItem(name: "redirect_uri", value: redirectURI), URLQueryItem(name: "state", value: state),
                  URLQueryItem(name: "code_challenge", value: pkce.challenge), URLQueryItem(name: "code_challenge_method", value: "S256")]
        if !configuration.scopes.isEmpty { items.append(URLQueryItem(name: "scope", value: configuration.scopes.joined(separator: " "))) }
        items += configuration.extraAuthorizationParameters.map { URLQueryItem(name: $0.0, value: $0.1) }
        components.percentEncodedQuery = items.map { "\(FormEncoding.escape($0.name))=\(FormEncoding.escape($0.value ?? ""))" }.joined(separator: "&")
        return Attempt(url: components.url!, state: state, pkce: pkce, redirectURI: redirectURI)
    }

    /// Reads `code` and `state` from a redirect URL or a query string, checks the state, and trades the code for a
    /// token. A bare code (no `?`, `=`) is accepted too, as headless users often paste just that.
    public func finish(_ attempt: Attempt, answer: String) async throws -> OAuthToken {
        let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        let code: String
        var fields: [String: String] = [:]
        if text.contains("=") {
            let query = text.split(separator: "?", maxSplits: 1).last.map(String.init) ?? text
            fields = FormEncoding.decode(query.split(separator: "#").first.map(String.init) ?? query)
            if let error = fields["error"] { throw OAuthError.authorizationDenied(fields["error_description"] ?? error) }
            guard let state = fields["state"], PKCE.constantTimeEquals(state, attempt.state) else { throw OAuthError.stateMismatch }
            guard let found = fields["code"], !found.isEmpty else { throw OAuthError.missingCode("the redirect") }
            code = found
        } else {
            guard !text.isEmpty else { throw OAuthError.missingCode("the pasted text") }
            code = text
        }
        return try await exchange(code: code, attempt: attempt, redirectFields: fields)
    }

    /// Trades an authorization code for a token. The code is single-use, so this request is never repeated. A
    /// service with regions exchanges it at the region the redirect named, and the fields it needs later are kept.
    func exchange(code: String, attempt: Attempt, redirectFields: [String: String] = [:]) async throws -> OAuthToken {
        let tokenURL = try configuration.regionalTokenURL?(redirectFields) ?? configuration.tokenURL
        let request = configuration.tokenRequest(tokenURL, fields: [
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI), ("code_verifier", attempt.pkce.verifier),
        ], safeToRepeat: false)
        let response = try await http.send(request)
        // Some services (pCloud) answer a refused code with HTTP 200 and an error in the body.
        let answered = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        guard response.isSuccess, answered?["access_token"] != nil || answered?["error"] == nil else {
            let error = TokenEndpointError(response)
            throw OAuthError.tokenEndpoint(status: response.status, error: error.code, description: error.description)
        }
        var token = try OAuthToken(tokenResponse: response.body, now: now())
        for name in configuration.keptRedirectFields where token.extras[name] == nil {
            if let value = redirectFields[name] { token.extras[name] = value }
        }
        return token
    }

    /// Authorization code flow with a loopback listener on 127.0.0.1: `open` is given the URL to show the user (or
    /// to open in a browser); the listener takes the one redirect, answers the browser, and the code is exchanged.
    public func authorizeWithLoopback(timeout: Duration = .seconds(300), open: @Sendable (URL) async throws -> Void) async throws -> OAuthToken {
        let listener = try TCPListener(port: configuration.loopbackPort ?? 0)
        defer { listener.close() }
        let attempt = makeAttempt(redirectURI: "http://127.0.0.1:\(listener.port)/")
        let redirect = BlockingWork { try LoopbackRedirect.wait(on: listener) }
        let watchdog = Task.detached {
            try await Task.sleep(for: timeout)
            listener.close()
        }
        defer { watchdog.cancel() }
        try await open(attempt.url)
        guard let target = try await redirect.value else {
            throw OAuthError.missingCode("the browser's answer (none arrived within \(timeout))")
        }
        return try await finish(attempt, answer: target)
    }

    /// Device authorization grant (RFC 8628): `show` is given the code and the address where the user enters it;
    /// the token endpoint is then polled at the interval the service asks for.
    public func authorizeWithDevice(sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
                                    show: @Sendable (_ userCode: String, _ verificationURI: String, _ completeURI: String?) async throws -> Void) async throws -> OAuthToken {
        guard let endpoint = configuration.deviceAuthorizationURL else {
            throw OAuthError.tokenEndpoint(status: 0, error: "unsupported", description: "this service has no device authorization")
        }
        var fields: [(String, String)] = []
        if !configuration.scopes.isEmpty { fields.append(("scope", configuration.scopes.joined(separator: " "))) }
        let response = try await http.send(configuration.tokenRequest(endpoint, fields: fields, safeToRepeat: false))
        guard response.isSuccess, let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
              let deviceCode = object["device_code"] as? String, let userCode = object["user_code"] as? String,
              let verification = (object["verification_uri"] ?? object["verification_url"]) as? String else {
            let error = TokenEndpointError(response)
            throw OAuthError.tokenEndpoint(status: response.status, error: error.code, description: error.description)
        }
        var interval = Duration.seconds((object["interval"] as? NSNumber)?.intValue ?? 5)
        let deadline = now().addingTimeInterval((object["expires_in"] as? NSNumber)?.doubleValue ?? 900)
        try await show(userCode, verification, object["verification_uri_complete"] as? String)
        while now() < deadline {
            try await sleep(interval)
            let poll = configuration.tokenRequest(configuration.tokenURL, fields: [
                ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode),
            ], safeToRepeat: true)
            let answer = try await http.send(poll)
            if answer.isSuccess { return try OAuthToken(tokenResponse: answer.body, now: now()) }
            let error = TokenEndpointError(answer)
            switch error.code {
            case "authorization_pending": continue
            case "slow_down": interval += .seconds(5)
            case "expired_token": throw OAuthError.deviceCodeExpired
            case "access_denied": throw OAuthError.authorizationDenied(error.description)
            default: throw OAuthError.tokenEndpoint(status: answer.status, error: error.code, description: error.description)
            }
        }
        throw OAuthError.deviceCodeExpired
    }

    /// A token JSON made elsewhere: this package's token file format, rclone's (`expiry`), or a raw token endpoint
    /// answer (`expires_in`).
    public static func importToken(_ data: Data, now: Date = Date()) throws -> OAuthToken {
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        if object?["expires_in"] == nil, let token = try? JSONDecoder().decode(OAuthToken.self, from: data) { return token }
        return try OAuthToken(tokenResponse: data, now: now)
    }
}

/// Waits for the one request the browser makes to the loopback redirect URI, answers it, and returns its target.
enum LoopbackRedirect {
    static func wait(on listener: TCPListener) throws -> String? {
        while let connection = listener.accept() {
            defer { connection.close() }
            let reader = IncomingRequestReader(connection: connection)
            guard let request = try? reader.next() else { continue }
            // Browsers also ask for /favicon.ico; only a request carrying the answer counts.
            let query = request.query
            guard query["code"] != nil || query["error"] != nil else {
                try? connection.write("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
                continue
            }
            let page = "<html><body><h1>LLVS is authorized</h1><p>You can close this window and return to the terminal.</p></body></html>"
            try? connection.write("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(page.utf8.count)\r\nConnection: close\r\n\r\n\(page)")
            return request.target
        }
        return nil
    }
}
