import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A mock OAuth 2 authorization server, mounted by each service mock: an authorize endpoint that redirects to the
/// loopback redirect URI with a code and the state; a token endpoint for `authorization_code` (checking PKCE),
/// `refresh_token` and the device code grant, taking client credentials in the body or as Basic; and the token
/// policies real services have (lifetime, rotation, Box's single-use refresh tokens, revocation).
public final class MockOAuthServer: Sendable {
    public struct Settings: Sendable {
        public var clientId = "llvs-test-client"
        public var clientSecret: String? = "llvs-test-secret"
        public var accessTokenLifetime: TimeInterval = 3600
        /// A refresh returns a new refresh token (OneDrive, Box).
        public var rotatesRefreshTokens = false
        /// A refresh token works once (Box); using it again answers invalid_grant.
        public var singleUseRefreshTokens = false
        /// Whether refresh tokens are issued at all (pCloud issues none, and its tokens do not expire).
        public var issuesRefreshTokens = true
        public var supportsDeviceFlow = true
        /// The scopes the device endpoint grants (Google: only `drive.file` and `drive.appdata` of Drive's, plus the
        /// sign-in scopes); others answer 400 invalid_scope. Nil: any scope.
        public var deviceScopes: Set<String>?
        /// Whether the authorize endpoint requires an S256 PKCE challenge (pCloud has no PKCE and ignores one).
        public var requiresPKCE = true
        /// Whether the code exchange must repeat the redirect URI; nil: as PKCE (Box and pCloud do not ask for it).
        public var exchangeNeedsRedirectURI: Bool?
        /// Google: a refresh token only for an authorization asked with `access_type=offline`.
        public var refreshTokenNeedsOfflineAccess = false
        /// The authorize parameter that asks for offline access (Google's `access_type`, Dropbox's
        /// `token_access_type`).
        public var offlineAccessParameter = "access_type"
        /// Extra fields in the redirect back to the client (pCloud's `hostname` and `locationid`).
        public var extraRedirectFields: [(String, String)] = []
        public var deviceInterval = 1
        /// Extra fields in every token answer (pCloud's `hostname`).
        public var extraTokenFields: [String: String] = [:]
        public var pathPrefix = "/oauth"
        /// Each endpoint's path, where a service does not put them under one prefix (Google: `/o/oauth2/v2/auth`,
        /// `/token`, `/device/code`); nil means under `pathPrefix`.
        public var authorizePath: String?
        public var tokenPath: String?
        public var devicePath: String?
        /// `token_type` as the service writes it (Google `Bearer`, others `bearer`).
        public var tokenType = "bearer"
        /// The scope granted, echoed in token answers.
        public var scope = "files"
        /// The description of an `invalid_grant` for a dead refresh token, in the service's words.
        public var invalidGrantDescription = "the refresh token is invalid, revoked or used already"
        /// The name of the verification address in a device code answer (Google writes `verification_url`).
        public var deviceVerificationField = "verification_uri"
        /// The 401 answer the service's API gives a missing, expired or revoked access token.
        public var unauthorizedBody =
            #"{"error":"invalid_token","error_description":"The access token expired or is invalid"}"#
        /// How long an authorization code may wait before it is exchanged (Box: 30 s); nil: until used.
        public var codeLifetime: TimeInterval?
        /// Whether a client secret sent by a public client (one registered without a secret) is refused, as the
        /// Microsoft identity platform refuses it (AADSTS700025); otherwise a secret a public client sends is ignored.
        public var refusesSecretFromPublicClient = false
        /// Where the OpenID Connect discovery document is served (Microsoft: `/{tenant}/v2.0/.well-known/openid-configuration`).
        public var openIDConfigurationPath: String?
        /// Whether a grant that asked for `openid` answers an `id_token` (and, when asked with `client_info=1`,
        /// Microsoft's `client_info`), as OpenID Connect providers do; libraries such as msal find the account by them.
        public var issuesIDTokens = false
        /// The page a device-flow user opens to enter the code (served here: a form, and the approval).
        public var deviceApprovalPath = "/device"
        /// Device codes are approved as soon as they are issued, so a script can finish a device flow unattended.
        public var approvesDevicesAtOnce = false

        public init() {}
    }

    public let settings: Settings
    private let now: @Sendable () -> Date
    private let state = Mutex(State())

    struct State {
        var codes:
            [String: (
                challenge: String, redirectURI: String, offline: Bool, scope: String?, issued: Date, nonce: String?
            )] = [:]
        /// The scope granted with each access and refresh token, where the client asked for one (tokens a test
        /// issues directly have none: everything is granted).
        var grantedScopes: [String: String] = [:]
        var accessTokens: [String: Date] = [:]
        var refreshTokens: Set<String> = []
        var devices: [String: (userCode: String, approved: Bool, lastPoll: Date?, scope: String?)] = [:]
        var refreshCount = 0
        /// When the last refresh was answered (wall clock), to measure how long a client takes to keep its answer.
        var lastRefreshAnswered: Date?
        var invalidGrantCount = 0
        var counter = 0
    }

    public init(settings: Settings = Settings(), now: @escaping @Sendable () -> Date = { Date() }) {
        self.settings = settings
        self.now = now
    }

    public var authorizePath: String { settings.authorizePath ?? settings.pathPrefix + "/authorize" }
    public var tokenPath: String { settings.tokenPath ?? settings.pathPrefix + "/token" }
    public var devicePath: String { settings.devicePath ?? settings.pathPrefix + "/device/code" }

    /// The client configuration that talks to this server at `baseURL`.
    public func configuration(
        baseURL: URL, clientAuthentication: OAuthConfiguration.ClientAuthentication = .body
    ) -> OAuthConfiguration {
        OAuthConfiguration(
            authorizationURL: baseURL.appendingPathComponent(authorizePath),
            tokenURL: baseURL.appendingPathComponent(tokenPath),
            deviceAuthorizationURL: settings.supportsDeviceFlow ? baseURL.appendingPathComponent(devicePath) : nil,
            clientId: settings.clientId, clientSecret: settings.clientSecret, scopes: [settings.scope],
            clientAuthentication: clientAuthentication)
    }

    // MARK: For tests

    /// Issues a token directly, as if the user had authorized.
    public func issueToken() -> OAuthToken {
        state.withLock { state in
            let (access, refresh, expires) = mint(&state)
            return OAuthToken(
                accessToken: access, refreshToken: refresh, tokenType: settings.tokenType, expiresAt: expires,
                scope: settings.scope,
                extras: settings.extraTokenFields)
        }
    }

    /// Makes every access token issued so far expired, as time passing would.
    public func expireAccessTokens() {
        state.withLock { state in for key in state.accessTokens.keys { state.accessTokens[key] = .distantPast } }
    }
    /// Revokes every refresh token, so the next refresh answers invalid_grant.
    public func revokeRefreshTokens() { state.withLock { $0.refreshTokens = [] } }
    /// Approves a pending device code, as the user would on another device.
    public func approveDevice(userCode: String) {
        state.withLock { state in
            for (code, device) in state.devices where device.userCode == userCode {
                state.devices[code]?.approved = true
            }
        }
    }
    public var refreshCount: Int { state.withLock { $0.refreshCount } }
    /// When the last refresh was answered.
    public var lastRefreshAnswered: Date? { state.withLock { $0.lastRefreshAnswered } }
    /// Whether a refresh token would still be accepted (Box's are spent by their one use).
    public func isLiveRefreshToken(_ token: String) -> Bool { state.withLock { $0.refreshTokens.contains(token) } }

    /// The live tokens, so a mock restarted with `--state` still accepts what it issued before.
    public struct Tokens: Codable, Sendable {
        public var access: [String: Date]
        public var refresh: [String]
        /// The scopes granted with them (absent in states saved before scopes were kept).
        public var scopes: [String: String]?
    }

    public var tokens: Tokens {
        get {
            state.withLock {
                Tokens(access: $0.accessTokens, refresh: Array($0.refreshTokens), scopes: $0.grantedScopes)
            }
        }
    }

    public func restore(_ tokens: Tokens) {
        state.withLock { state in
            state.accessTokens.merge(tokens.access) { _, saved in saved }
            state.refreshTokens.formUnion(tokens.refresh)
            state.grantedScopes.merge(tokens.scopes ?? [:]) { _, saved in saved }
        }
    }
    public var invalidGrantCount: Int { state.withLock { $0.invalidGrantCount } }

    /// True when an `Authorization: Bearer` header carries a live access token.
    public func isAuthorized(_ header: String?) -> Bool {
        guard let header, header.hasPrefix("Bearer ") else { return false }
        let token = String(header.dropFirst(7))
        return state.withLock { state in state.accessTokens[token].map { $0 > now() } ?? false }
    }

    /// The scopes granted with the access token in an `Authorization: Bearer` header; nil when none were asked for
    /// (a token a test issued directly: everything is granted).
    public func grantedScopes(_ header: String?) -> Set<String>? {
        guard let header, header.hasPrefix("Bearer ") else { return nil }
        let token = String(header.dropFirst(7))
        return state.withLock { $0.grantedScopes[token] }.map { Set($0.split(separator: " ").map(String.init)) }
    }

    /// The 401 answer a service gives a missing, expired or revoked token.
    public func unauthorizedResponse() -> MockResponse {
        MockResponse(
            status: 401,
            headers: ["WWW-Authenticate": #"Bearer error="invalid_token""#, "Content-Type": "application/json"],
            body: .data(Data(settings.unauthorizedBody.utf8)))
    }

    /// Trades a code for a new access token where a service's token endpoint is its own (pCloud's `oauth2_token`
    /// answers in its result envelope and checks no PKCE): nil when the code is unknown or was used already.
    public func redeem(code: String) -> String? {
        state.withLock { state in
            guard state.codes.removeValue(forKey: code) != nil else {
                state.invalidGrantCount += 1
                return nil
            }
            return mint(&state).0
        }
    }

    /// Whether `token` is a live access token, however the request carried it.
    public func isLive(_ token: String) -> Bool {
        state.withLock { state in state.accessTokens[token].map { $0 > now() } ?? false }
    }

    /// Revokes every access token, as a user removing the app's access would.
    public func revokeAccessTokens() { state.withLock { $0.accessTokens = [:] } }

    private func mint(_ state: inout State, scope: String? = nil) -> (String, String?, Date?) {
        state.counter += 1
        let access = "access-\(state.counter)-" + PKCE.base64URL(PKCE.randomBytes(9))
        if let scope { state.grantedScopes[access] = scope }
        let expires = settings.issuesRefreshTokens ? now().addingTimeInterval(settings.accessTokenLifetime) : nil
        state.accessTokens[access] = expires ?? .distantFuture
        var refresh: String?
        if settings.issuesRefreshTokens {
            refresh = "refresh-\(state.counter)-" + PKCE.base64URL(PKCE.randomBytes(9))
            state.refreshTokens.insert(refresh!)
            if let scope { state.grantedScopes[refresh!] = scope }
        }
        return (access, refresh, expires)
    }

    /// `nonce`: the authorize request's, which the `id_token` of its code carries (OpenID Connect Core 3.1.3.7).
    private func tokenAnswer(
        _ access: String, _ refresh: String?, scope: String? = nil, form: [String: String] = [:], nonce: String? = nil
    ) -> MockResponse {
        var object: [String: Any] = ["access_token": access, "token_type": settings.tokenType, "scope": settings.scope]
        if settings.issuesRefreshTokens { object["expires_in"] = Int(settings.accessTokenLifetime) }
        if let refresh { object["refresh_token"] = refresh }
        if settings.issuesIDTokens, let scope, scope.split(separator: " ").contains("openid") {
            object["id_token"] = MockIDToken.make(
                issuer: "https://login.microsoftonline.com/\(MockIDToken.tenant)/v2.0", audience: settings.clientId,
                issuedAt: now(), lifetime: settings.accessTokenLifetime, nonce: nonce)
            if form["client_info"] == "1" { object["client_info"] = MockIDToken.clientInfo }
        }
        for (key, value) in settings.extraTokenFields { object[key] = value }
        return Self.uncached(.json(200, object))
    }

    /// Token endpoint answers carry `Cache-Control: no-store` and `Pragma: no-cache` (RFC 6749 5.1), errors too.
    private func error(_ status: Int, _ code: String, _ description: String) -> MockResponse {
        Self.uncached(.json(status, ["error": code, "error_description": description]))
    }

    private static func uncached(_ response: MockResponse) -> MockResponse {
        var response = response
        response.headers["Cache-Control"] = "no-store"
        response.headers["Pragma"] = "no-cache"
        return response
    }

    // MARK: Serving

    /// Answers the OAuth endpoints; nil for any other path.
    public func handle(_ request: IncomingRequest) -> MockResponse? {
        switch (request.method, request.path) {
        case ("GET", authorizePath): return authorize(request)
        case ("POST", tokenPath): return token(request)
        case ("POST", devicePath) where settings.supportsDeviceFlow: return deviceCode(request)
        case ("GET", settings.deviceApprovalPath) where settings.supportsDeviceFlow,
            ("POST", settings.deviceApprovalPath) where settings.supportsDeviceFlow:
            return deviceApproval(request)
        case ("GET", let path) where path == settings.openIDConfigurationPath: return openIDConfiguration(request)
        case ("GET", Self.keySetPath) where settings.issuesIDTokens: return .json(200, MockSigningKey.shared.keySet)
        default: return nil
        }
    }

    /// The origin as the client addressed this server, for the absolute URLs of a discovery document and a device
    /// flow: its Host header, and `https` when a TLS-terminating proxy in front says so (`X-Forwarded-Proto`), as
    /// clients that speak only https to an identity provider (msal) need.
    private static func origin(_ request: IncomingRequest) -> String {
        let scheme = request.headers["X-Forwarded-Proto"]?.lowercased() == "https" ? "https" : "http"
        return scheme + "://" + (request.headers["Host"] ?? "127.0.0.1")
    }

    /// Where the keys that sign `id_token`s are published (Microsoft's path).
    static let keySetPath = "/discovery/v2.0/keys"

    /// The OpenID Connect discovery document: where to authorize, exchange, start a device flow.
    private func openIDConfiguration(_ request: IncomingRequest) -> MockResponse {
        let base = Self.origin(request)
        return .json(
            200,
            [
                "issuer": "https://login.microsoftonline.com/\(MockIDToken.tenant)/v2.0",
                "authorization_endpoint": base + authorizePath, "token_endpoint": base + tokenPath,
                "device_authorization_endpoint": base + devicePath, "jwks_uri": base + Self.keySetPath,
                "response_types_supported": ["code", "id_token", "code id_token", "id_token token"],
                "scopes_supported": ["openid", "profile", "email", "offline_access"],
                "token_endpoint_auth_methods_supported": [
                    "client_secret_post", "private_key_jwt", "client_secret_basic",
                ],
                "subject_types_supported": ["pairwise"], "id_token_signing_alg_values_supported": ["RS256"],
                "request_uri_parameter_supported": false, "tenant_region_scope": NSNull(),
                "cloud_instance_name": "microsoftonline.com",
            ])
    }

    /// The page a person opens to finish a device flow: a form for the code, and the approval of the code it sends
    /// (`?user_code=` or a posted form), so a device flow can be finished from outside the mock's process.
    private func deviceApproval(_ request: IncomingRequest) -> MockResponse {
        let form =
            request.method == "POST"
            ? FormEncoding.decode(String(decoding: request.bodyData, as: UTF8.self)) : request.query
        guard let userCode = form["user_code"] ?? form["otc"], !userCode.isEmpty else {
            let page =
                #"<!DOCTYPE html><html><body><h1>Enter code</h1><form method="post"><input name="user_code"><button>Next</button></form></body></html>"#
            return MockResponse(
                status: 200, headers: ["Content-Type": "text/html; charset=utf-8"], body: .data(Data(page.utf8)))
        }
        let approved = state.withLock { state -> Bool in
            let pending = state.devices.filter { $0.value.userCode == userCode.uppercased() }.map(\.key)
            for code in pending { state.devices[code]?.approved = true }
            return !pending.isEmpty
        }
        guard approved else {
            return MockResponse(
                status: 404, headers: ["Content-Type": "text/html; charset=utf-8"],
                body: .data(Data("<!DOCTYPE html><html><body><h1>That code is not pending</h1></body></html>".utf8)))
        }
        return MockResponse(
            status: 200, headers: ["Content-Type": "text/html; charset=utf-8"],
            body: .data(
                Data(
                    "<!DOCTYPE html><html><body><h1>Approved</h1><p>You can return to your device.</p></body></html>"
                        .utf8)))
    }

    private func authorize(_ request: IncomingRequest) -> MockResponse {
        let query = request.query
        guard query["client_id"] == settings.clientId else { return error(400, "invalid_client", "unknown client_id") }
        let challenge = query["code_challenge_method"] == "S256" ? query["code_challenge"] : nil
        guard query["response_type"] == "code", let redirect = query["redirect_uri"],
            challenge != nil || !settings.requiresPKCE
        else {
            return error(
                400, "invalid_request", "response_type=code, redirect_uri and an S256 code_challenge are required")
        }
        // Loopback redirects on any port are registered for installed apps (IPv4, IPv6 and localhost); others are not.
        guard ["http://127.0.0.1:", "http://[::1]:", "http://localhost:"].contains(where: redirect.hasPrefix) else {
            return error(
                400, "redirect_uri_mismatch",
                "The redirect URI in the request, \(redirect), does not match the ones registered")
        }
        let code = "code-" + PKCE.base64URL(PKCE.randomBytes(12))
        let offline =
            !settings.refreshTokenNeedsOfflineAccess || query[settings.offlineAccessParameter] == "offline"
        let issued = now()
        state.withLock { $0.codes[code] = (challenge ?? "", redirect, offline, query["scope"], issued, query["nonce"]) }
        var location = redirect + (redirect.contains("?") ? "&" : "?") + "code=\(code)"
        if let stateValue = query["state"] { location += "&state=" + FormEncoding.escape(stateValue) }
        for (name, value) in settings.extraRedirectFields {
            location += "&\(FormEncoding.escape(name))=\(FormEncoding.escape(value))"
        }
        return .empty(302, headers: ["Location": location])
    }

    /// The client's credentials from the body or a Basic header.
    private func authenticateClient(_ request: IncomingRequest, _ form: [String: String]) -> Bool {
        var id = form["client_id"], secret = form["client_secret"]
        if let header = request.headers["Authorization"], header.hasPrefix("Basic "),
            let decoded = Data(base64Encoded: String(header.dropFirst(6))).map({ String(decoding: $0, as: UTF8.self) }),
            let colon = decoded.firstIndex(of: ":")
        {
            id = String(decoded[..<colon]).removingPercentEncoding
            secret = String(decoded[decoded.index(after: colon)...]).removingPercentEncoding
        }
        return id == settings.clientId && (settings.clientSecret == nil || secret == settings.clientSecret)
    }

    /// The refusal of a secret a public client sent, where the service refuses one.
    private func publicClientSentSecret(_ request: IncomingRequest, _ form: [String: String]) -> MockResponse? {
        guard settings.refusesSecretFromPublicClient, settings.clientSecret == nil,
            form["client_secret"] != nil || request.headers["Authorization"]?.hasPrefix("Basic ") == true
        else { return nil }
        return error(
            401, "invalid_client",
            "AADSTS700025: Client is public so neither 'client_assertion' nor 'client_secret' should be presented.")
    }

    private func token(_ request: IncomingRequest) -> MockResponse {
        let form = FormEncoding.decode(String(decoding: request.bodyData, as: UTF8.self))
        if let refused = publicClientSentSecret(request, form) { return refused }
        guard authenticateClient(request, form) else {
            return error(401, "invalid_client", "client authentication failed")
        }
        switch form["grant_type"] {
        case "authorization_code":
            return state.withLock { state -> MockResponse in
                guard let code = form["code"], let issued = state.codes.removeValue(forKey: code) else {
                    state.invalidGrantCount += 1
                    return error(400, "invalid_grant", "the code is unknown or was used already")
                }
                if let lifetime = settings.codeLifetime, now().timeIntervalSince(issued.issued) > lifetime {
                    state.invalidGrantCount += 1
                    return error(400, "invalid_grant", "The authorization code has expired")
                }
                // Box and pCloud do not ask for the redirect URI again; when it is sent it must match.
                guard
                    form["redirect_uri"].map({ $0 == issued.redirectURI })
                        ?? !(settings.exchangeNeedsRedirectURI ?? settings.requiresPKCE)
                else {
                    return error(400, "invalid_grant", "redirect_uri does not match")
                }
                // Services without PKCE (Box, pCloud) issued the code without a challenge; a verifier then proves nothing.
                guard
                    issued.challenge.isEmpty
                        || form["code_verifier"].map({ PKCE(verifier: $0).challenge == issued.challenge }) == true
                else {
                    return error(400, "invalid_grant", "the PKCE code_verifier does not match the challenge")
                }
                let (access, refresh, _) = mint(&state, scope: issued.scope)
                return tokenAnswer(
                    access, issued.offline ? refresh : nil, scope: issued.scope, form: form, nonce: issued.nonce)
            }
        case "refresh_token":
            return state.withLock { state -> MockResponse in
                guard let refresh = form["refresh_token"], state.refreshTokens.contains(refresh) else {
                    state.invalidGrantCount += 1
                    return error(400, "invalid_grant", settings.invalidGrantDescription)
                }
                state.refreshCount += 1
                if settings.singleUseRefreshTokens { state.refreshTokens.remove(refresh) }
                let (access, newRefresh, _) = mint(&state, scope: state.grantedScopes[refresh])
                if !settings.rotatesRefreshTokens, let newRefresh { state.refreshTokens.remove(newRefresh) }
                state.lastRefreshAnswered = now()
                return tokenAnswer(
                    access, settings.rotatesRefreshTokens ? newRefresh : nil,
                    scope: form["scope"] ?? state.grantedScopes[refresh], form: form)
            }
        case "urn:ietf:params:oauth:grant-type:device_code":
            return state.withLock { state -> MockResponse in
                guard let code = form["device_code"], let device = state.devices[code] else {
                    return error(400, "expired_token", "unknown device code")
                }
                if let last = device.lastPoll, now().timeIntervalSince(last) < Double(settings.deviceInterval) - 0.05 {
                    state.devices[code]?.lastPoll = now()
                    return error(400, "slow_down", "polling too fast")
                }
                state.devices[code]?.lastPoll = now()
                guard device.approved else {
                    return error(400, "authorization_pending", "the user has not approved yet")
                }
                state.devices[code] = nil
                let (access, refresh, _) = mint(&state, scope: device.scope)
                return tokenAnswer(access, refresh, scope: device.scope, form: form)
            }
        default:
            return error(400, "unsupported_grant_type", "grant_type \(form["grant_type"] ?? "(none)") is not supported")
        }
    }

    private func deviceCode(_ request: IncomingRequest) -> MockResponse {
        let form = FormEncoding.decode(String(decoding: request.bodyData, as: UTF8.self))
        guard authenticateClient(request, form) else {
            return error(401, "invalid_client", "client authentication failed")
        }
        if let allowed = settings.deviceScopes,
            let refused = (form["scope"] ?? "").split(separator: " ").first(where: { !allowed.contains(String($0)) })
        {
            return error(400, "invalid_scope", "Invalid device flow scope: \(refused)")
        }
        let deviceCode = "device-" + PKCE.base64URL(PKCE.randomBytes(12))
        let userCode = String(PKCE.base64URL(PKCE.randomBytes(6)).uppercased().prefix(8))
        state.withLock { $0.devices[deviceCode] = (userCode, settings.approvesDevicesAtOnce, nil, form["scope"]) }
        let page = Self.origin(request) + settings.deviceApprovalPath
        return .json(
            200,
            [
                "device_code": deviceCode, "user_code": userCode, settings.deviceVerificationField: page,
                "expires_in": 900, "interval": settings.deviceInterval,
                "message":
                    "To sign in, use a web browser to open the page \(page) and enter the code \(userCode) to authenticate.",
            ])
    }
}
