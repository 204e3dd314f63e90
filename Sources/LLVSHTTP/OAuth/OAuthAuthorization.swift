import Foundation
import LLVSSupport
import Synchronization

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
        items += [
            URLQueryItem(name: "response_type", value: "code"),
            URLQueryItem(name: "client_id", value: configuration.clientId),
            URLQueryItem(name: "redirect_uri", value: redirectURI), URLQueryItem(name: "state", value: state),
            URLQueryItem(name: "code_challenge", value: pkce.challenge),
            URLQueryItem(name: "code_challenge_method", value: "S256"),
        ]
        if !configuration.scopes.isEmpty {
            items.append(URLQueryItem(name: "scope", value: configuration.scopes.joined(separator: " ")))
        }
        items += configuration.extraAuthorizationParameters.map { URLQueryItem(name: $0.0, value: $0.1) }
        components.percentEncodedQuery = items.map {
            "\(FormEncoding.escape($0.name))=\(FormEncoding.escape($0.value ?? ""))"
        }.joined(separator: "&")
        return Attempt(url: components.url!, state: state, pkce: pkce, redirectURI: redirectURI)
    }

    /// Reads `code` and `state` from a redirect URL or a query string, checks the state (before anything else in it,
    /// an error included), and trades the code for a token. A bare code (nothing but the code's own characters) is
    /// accepted where the service checks PKCE, which binds a code to this attempt; where it does not (Box, pCloud),
    /// only the whole redirected address is, whose state is checked.
    public func finish(_ attempt: Attempt, answer: String) async throws -> OAuthToken {
        let text = answer.trimmingCharacters(in: .whitespacesAndNewlines)
        let code: String
        var fields: [String: String] = [:]
        if text.contains(where: { "?&=/#:".contains($0) }) {
            let query = text.split(separator: "?", maxSplits: 1).last.map(String.init) ?? text
            fields = FormEncoding.decode(query.split(separator: "#").first.map(String.init) ?? query)
            guard let state = fields["state"], PKCE.constantTimeEquals(state, attempt.state) else {
                throw OAuthError.stateMismatch
            }
            if let error = fields["error"] {
                throw OAuthError.authorizationDenied(TerminalSafe.text(fields["error_description"] ?? error))
            }
            guard let found = fields["code"], !found.isEmpty else { throw OAuthError.missingCode("the redirect") }
            code = found
        } else {
            guard !text.isEmpty else { throw OAuthError.missingCode("the pasted text") }
            guard configuration.enforcesPKCE else { throw OAuthError.wholeAddressNeeded }
            code = text
        }
        return try await exchange(code: code, attempt: attempt, redirectFields: fields)
    }

    /// Trades an authorization code for a token. The code is single-use, so this request is never repeated. A
    /// service with regions exchanges it at the region the redirect named, and the fields it needs later are kept.
    func exchange(code: String, attempt: Attempt, redirectFields: [String: String] = [:]) async throws -> OAuthToken {
        let tokenURL = try configuration.regionalTokenURL?(redirectFields) ?? configuration.tokenURL
        let request = configuration.tokenRequest(
            tokenURL,
            fields: [
                ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", attempt.redirectURI),
                ("code_verifier", attempt.pkce.verifier),
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
    public func authorizeWithLoopback(
        timeout: Duration = .seconds(300), open: @Sendable (URL) async throws -> Void
    ) async throws -> OAuthToken {
        let listener = try TCPListener(port: configuration.loopbackPort ?? 0)
        defer { listener.close() }
        let attempt = makeAttempt(redirectURI: "http://127.0.0.1:\(listener.port)/")
        let loopback = LoopbackRedirect(listener: listener, state: attempt.state)
        let redirect = BlockingWork { loopback.wait() }
        let watchdog = Task.detached {
            try await Task.sleep(for: timeout)
            loopback.stop()
        }
        defer { watchdog.cancel() }
        try await open(attempt.url)
        guard let answer = try await redirect.value else {
            throw OAuthError.missingCode("the browser's answer (none arrived within \(timeout))")
        }
        return try await finish(attempt, answer: answer)
    }

    /// The fastest a device flow polls, whatever the service asks: RFC 8628's default interval.
    static let minimumDevicePollInterval = 5.0
    /// The longest a device code is waited for, whatever the service says it lives (RFC 8628 suggests minutes).
    static let maximumDeviceCodeLife = 1800.0

    /// Device authorization grant (RFC 8628): `show` is given the code and the address where the user enters it;
    /// the token endpoint is then polled at the interval the service asks for, but never faster than every 5 s, and
    /// never past the code's life (at most 30 minutes) or `timeout`, whichever ends first.
    public func authorizeWithDevice(
        timeout: Duration? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        show: @Sendable (_ userCode: String, _ verificationURI: String, _ completeURI: String?) async throws -> Void
    ) async throws -> OAuthToken {
        guard let endpoint = configuration.deviceAuthorizationURL else {
            throw OAuthError.tokenEndpoint(
                status: 0, error: "unsupported", description: "this service has no device authorization")
        }
        var fields: [(String, String)] = []
        if !configuration.scopes.isEmpty { fields.append(("scope", configuration.scopes.joined(separator: " "))) }
        let response = try await http.send(configuration.tokenRequest(endpoint, fields: fields, safeToRepeat: false))
        guard response.isSuccess, let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let deviceCode = object["device_code"] as? String, let userCode = object["user_code"] as? String,
            let verification = (object["verification_uri"] ?? object["verification_url"]) as? String
        else {
            let error = TokenEndpointError(response)
            throw OAuthError.tokenEndpoint(status: response.status, error: error.code, description: error.description)
        }
        var interval = max(
            Self.minimumDevicePollInterval,
            (object["interval"] as? NSNumber)?.doubleValue ?? Self.minimumDevicePollInterval)
        let life = min(Self.maximumDeviceCodeLife, max(0, (object["expires_in"] as? NSNumber)?.doubleValue ?? 900))
        var deadline = now().addingTimeInterval(life)
        if let timeout { deadline = min(deadline, now().addingTimeInterval(Double(timeout.components.seconds))) }
        try await show(
            TerminalSafe.text(userCode), TerminalSafe.text(verification),
            (object["verification_uri_complete"] as? String).map(TerminalSafe.text))
        while now() < deadline {
            // Never asleep past the deadline: the last poll comes at it, not an interval after it.
            let left = deadline.timeIntervalSince(now())
            try await sleep(.milliseconds(Int64(min(interval, max(0, left)) * 1000)))
            let poll = configuration.tokenRequest(
                configuration.tokenURL,
                fields: [
                    ("grant_type", "urn:ietf:params:oauth:grant-type:device_code"), ("device_code", deviceCode),
                ], safeToRepeat: true)
            let answer = try await http.send(poll)
            if answer.isSuccess { return try OAuthToken(tokenResponse: answer.body, now: now()) }
            let error = TokenEndpointError(answer)
            switch error.code {
            case "authorization_pending": continue
            case "slow_down": interval += 5
            case "expired_token": throw OAuthError.deviceCodeExpired
            case "access_denied": throw OAuthError.authorizationDenied(error.description)
            default:
                throw OAuthError.tokenEndpoint(status: answer.status, error: error.code, description: error.description)
            }
        }
        throw OAuthError.deviceCodeExpired
    }

    /// A token JSON made elsewhere: this package's token file format, rclone's (`expiry`), or a raw token endpoint
    /// answer (`expires_in`).
    public static func importToken(_ data: Data, now: Date = Date()) throws -> OAuthToken {
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any]
        if object?["expires_in"] == nil, let token = try? JSONDecoder().decode(OAuthToken.self, from: data) {
            return token
        }
        return try OAuthToken(tokenResponse: data, now: now)
    }
}

/// The loopback redirect listener: takes the one request that answers this attempt (a GET of the redirect path whose
/// `state` is this attempt's) and answers every other with 400, going on listening: a browser's spare connection, a
/// favicon, a stray POST or another flow's redirect never ends a sign-in. Each connection is served on a thread of its
/// own with a read timeout, so one that sends nothing holds up nothing; `stop` (the overall timeout) closes the
/// listener and every connection still open.
final class LoopbackRedirect: Sendable {
    private struct State {
        var open: [ObjectIdentifier: TCPConnection] = [:]
        var answer: String?
        var finished = false
    }

    private let listener: TCPListener
    private let state: String
    private let shared = Mutex(State())
    private let done = DispatchSemaphore(value: 0)
    /// How long a connection may take to send its request.
    static let readTimeout: Int = 10

    init(listener: TCPListener, state: String) {
        self.listener = listener
        self.state = state
    }

    /// The redirect's target (path and query), or nil once stopped without one. Blocking.
    func wait() -> String? {
        Thread { self.acceptLoop() }.start()
        done.wait()
        return shared.withLock { $0.answer }
    }

    func stop() { finish(with: nil) }

    /// The first call ends the wait; later ones (the watchdog after an answer, the accept loop after a stop) do nothing.
    private func finish(with target: String?) {
        let connections: [TCPConnection]? = shared.withLock { shared in
            guard !shared.finished else { return nil }
            shared.finished = true
            shared.answer = target
            return Array(shared.open.values)
        }
        guard let connections else { return }
        listener.close()
        for connection in connections { connection.close() }
        done.signal()
    }

    private func acceptLoop() {
        while let connection = listener.accept() {
            connection.setReceiveTimeout(seconds: Self.readTimeout)
            let admitted = shared.withLock { shared -> Bool in
                guard !shared.finished else { return false }
                shared.open[ObjectIdentifier(connection)] = connection
                return true
            }
            guard admitted else { connection.close(); break }
            Thread { self.serve(connection) }.start()
        }
        finish(with: nil)
    }

    private func serve(_ connection: TCPConnection) {
        defer {
            shared.withLock { _ = $0.open.removeValue(forKey: ObjectIdentifier(connection)) }
            connection.close()
        }
        // A body is refused before a byte of it is read: the redirect is a GET.
        let reader = IncomingRequestReader(connection: connection)
        let request: IncomingRequest
        do {
            guard
                let read = try reader.next(beforeBody: { request in
                    let length = request.headers["Content-Length"].flatMap(Int64.init) ?? 0
                    if length > 0 || request.headers["Transfer-Encoding"] != nil {
                        throw IncomingRequestReader.Malformed(description: "a body")
                    }
                })
            else { return }
            request = read
        } catch {
            return Self.refuse(connection)
        }
        let query = request.query
        guard request.method == "GET", request.rawPath == "/", let state = query["state"],
            PKCE.constantTimeEquals(state, self.state),
            query["code"].map({ !$0.isEmpty }) == true || query["error"] != nil
        else {
            return Self.refuse(connection)
        }
        if query["error"] != nil {
            Self.answer(
                connection, status: "200 OK",
                page: Self.page(
                    "LLVS was not authorized",
                    "The sign-in was declined. You can close this window; the terminal says more."))
        } else {
            Self.answer(
                connection, status: "200 OK",
                page: Self.page("LLVS is authorized", "You can close this window and return to the terminal."))
        }
        finish(with: request.target)
    }

    /// What anything but this sign-in's redirect gets: 400, and the listener goes on.
    static func refuse(_ connection: TCPConnection) {
        answer(
            connection, status: "400 Bad Request",
            page: page("Not an answer to this sign-in", "This address only takes the sign-in's redirect."))
    }

    static func page(_ title: String, _ text: String) -> String {
        "<html><body><h1>\(title)</h1><p>\(text)</p></body></html>"
    }

    static func answer(_ connection: TCPConnection, status: String, page: String) {
        try? connection.write(
            "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: \(page.utf8.count)\r\nConnection: close\r\n\r\n\(page)"
        )
    }
}

/// What a server says, made safe to print: control characters (escape sequences that could move the cursor, clear
/// the screen or retitle the terminal) become spaces.
public enum TerminalSafe {
    public static func text(_ text: String) -> String {
        String(
            String.UnicodeScalarView(
                text.unicodeScalars.map { scalar in
                    (scalar.value < 0x20 || (0x7F...0x9F).contains(scalar.value)) ? " " : scalar
                }))
    }
}
