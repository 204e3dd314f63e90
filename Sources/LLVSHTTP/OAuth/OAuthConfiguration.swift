import Foundation

/// A service's OAuth 2 endpoints and this application's client, as a connector describes them.
public struct OAuthConfiguration: Sendable {
    public enum ClientAuthentication: Sendable { case body, basic }

    public var authorizationURL: URL
    public var tokenURL: URL
    /// The device authorization endpoint (RFC 8628), where the service has one.
    public var deviceAuthorizationURL: URL?
    public var clientId: String
    public var clientSecret: String?
    public var scopes: [String]
    public var clientAuthentication: ClientAuthentication
    /// Extra parameters for the authorization URL (Google's `access_type=offline`, `prompt=consent`).
    public var extraAuthorizationParameters: [(String, String)]
    /// For a service that names the account's region in the redirect (pCloud's `hostname`): the token endpoint for
    /// the redirect's fields, or nil for `tokenURL`. It throws when the redirect names a host the service does not
    /// have, so a doctored redirect never receives the code and the client secret.
    public var regionalTokenURL: (@Sendable (_ redirectFields: [String: String]) throws -> URL?)?
    /// Redirect fields kept in the token's extras (pCloud's `hostname`, `locationid`), so the connector knows the
    /// account's region on every later run.
    public var keptRedirectFields: [String] = []
    /// The loopback port the redirect must use, for services that accept only the exact redirect URI registered
    /// (pCloud: `http://127.0.0.1:53682/`, as rclone registers); nil for any free port.
    public var loopbackPort: UInt16?
    /// Whether the service checks PKCE, which binds a code to the attempt that asked for it (Box and pCloud ignore
    /// it): where it does not, a pasted code is only taken inside its whole redirected address, whose state is checked.
    public var enforcesPKCE = true

    public init(
        authorizationURL: URL, tokenURL: URL, deviceAuthorizationURL: URL? = nil, clientId: String,
        clientSecret: String? = nil,
        scopes: [String] = [], clientAuthentication: ClientAuthentication = .body,
        extraAuthorizationParameters: [(String, String)] = []
    ) {
        self.authorizationURL = authorizationURL
        self.tokenURL = tokenURL
        self.deviceAuthorizationURL = deviceAuthorizationURL
        self.clientId = clientId
        self.clientSecret = clientSecret
        self.scopes = scopes
        self.clientAuthentication = clientAuthentication
        self.extraAuthorizationParameters = extraAuthorizationParameters
    }

    /// A form request to the token (or device) endpoint, carrying the client's credentials the way it wants them.
    func tokenRequest(_ url: URL, fields: [(String, String)], safeToRepeat: Bool) -> HTTPRequest {
        var fields = fields
        var request = HTTPRequest(
            method: "POST", url: url,
            headers: ["Content-Type": "application/x-www-form-urlencoded", "Accept": "application/json"])
        switch clientAuthentication {
        case .body:
            fields.append(("client_id", clientId))
            if let clientSecret { fields.append(("client_secret", clientSecret)) }
        case .basic:
            let pair = FormEncoding.escape(clientId) + ":" + FormEncoding.escape(clientSecret ?? "")
            request.headers["Authorization"] = "Basic " + Data(pair.utf8).base64EncodedString()
        }
        request.body = .data(FormEncoding.encode(fields))
        request.isSafeToRepeat = safeToRepeat
        request.isCredentialExchange = true
        return request
    }
}

/// Reads a token endpoint's error answer (`{"error": …, "error_description": …}`, or pCloud's
/// `{"result": N, "error": message}`).
struct TokenEndpointError {
    var code: String
    var description: String

    init(_ response: HTTPResponse) {
        let object = (try? JSONSerialization.jsonObject(with: response.body)) as? [String: Any]
        // What a server says reaches the terminal: without control characters.
        if let result = object?["result"] as? NSNumber, let message = object?["error"] as? String {
            code = "result \(result)"
            description = TerminalSafe.text(message)
            return
        }
        code = TerminalSafe.text(object?["error"] as? String ?? "http_\(response.status)")
        description = TerminalSafe.text(object?["error_description"] as? String ?? String(response.text.prefix(200)))
    }
}
