import Foundation

/// An OAuth 2 token as kept in a remote's token file: `{access_token, refresh_token, token_type, expires_at
/// (RFC 3339), scope, …}` plus any service extras (pCloud's `hostname`), which are kept as they are.
public struct OAuthToken: Sendable, Equatable {
    public var accessToken: String
    public var refreshToken: String?
    public var tokenType: String
    public var expiresAt: Date?
    public var scope: String?
    /// Other string fields, such as pCloud's `hostname`, kept so nothing a service sent is lost.
    public var extras: [String: String]

    public init(
        accessToken: String, refreshToken: String? = nil, tokenType: String = "Bearer", expiresAt: Date? = nil,
        scope: String? = nil, extras: [String: String] = [:]
    ) {
        self.accessToken = accessToken
        self.refreshToken = refreshToken
        self.tokenType = tokenType
        self.expiresAt = expiresAt
        self.scope = scope
        self.extras = extras
    }

    /// True when the token expires within `margin` seconds of `now` (never, for tokens without an expiry).
    public func expires(within margin: TimeInterval, now: Date) -> Bool {
        guard let expiresAt else { return false }
        return expiresAt.timeIntervalSince(now) < margin
    }

    /// Reads a token endpoint's answer (`expires_in` seconds from `now`). A refresh answer without a refresh token
    /// keeps the previous one, as services that do not rotate expect.
    public init(tokenResponse data: Data, now: Date, previous: OAuthToken? = nil) throws {
        guard let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any],
            let access = object["access_token"] as? String, !access.isEmpty
        else {
            throw OAuthError.malformedToken("the token endpoint's answer has no access_token")
        }
        accessToken = access
        refreshToken = (object["refresh_token"] as? String) ?? previous?.refreshToken
        tokenType = (object["token_type"] as? String) ?? "Bearer"
        let lifetime =
            (object["expires_in"] as? NSNumber)?.doubleValue ?? (object["expires_in"] as? String).flatMap(Double.init)
        expiresAt = lifetime.map { now.addingTimeInterval($0) }
        scope = (object["scope"] as? String) ?? previous?.scope
        var extras = previous?.extras ?? [:]
        for (key, value) in object where !Self.knownKeys.contains(key) {
            if let text = value as? String {
                extras[key] = text
            } else if let number = value as? NSNumber {
                extras[key] = number.stringValue
            }
        }
        extras["expires_in"] = nil
        self.extras = extras
    }

    static let knownKeys: Set<String> = [
        "access_token", "refresh_token", "token_type", "expires_at", "expires_in", "scope", "expiry",
    ]
}

extension OAuthToken: Codable {
    struct Key: CodingKey {
        var stringValue: String
        var intValue: Int? { nil }
        init(_ string: String) { stringValue = string }
        init?(stringValue: String) { self.stringValue = stringValue }
        init?(intValue: Int) { nil }
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: Key.self)
        accessToken = try container.decode(String.self, forKey: Key("access_token"))
        refreshToken = try container.decodeIfPresent(String.self, forKey: Key("refresh_token"))
        tokenType = try container.decodeIfPresent(String.self, forKey: Key("token_type")) ?? "Bearer"
        scope = try container.decodeIfPresent(String.self, forKey: Key("scope"))
        // `expires_at` is ours; `expiry` is what rclone writes. Both are RFC 3339.
        let expiry =
            try container.decodeIfPresent(String.self, forKey: Key("expires_at"))
            ?? container.decodeIfPresent(String.self, forKey: Key("expiry"))
        if let expiry {
            guard let date = RFC3339.date(expiry) else {
                throw DecodingError.dataCorruptedError(
                    forKey: Key("expires_at"), in: container, debugDescription: "\(expiry) is not an RFC 3339 date")
            }
            expiresAt = date
        } else {
            expiresAt = nil
        }
        var extras: [String: String] = [:]
        for key in container.allKeys where !Self.knownKeys.contains(key.stringValue) {
            if let text = try? container.decode(String.self, forKey: key) { extras[key.stringValue] = text }
        }
        self.extras = extras
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: Key.self)
        try container.encode(accessToken, forKey: Key("access_token"))
        try container.encodeIfPresent(refreshToken, forKey: Key("refresh_token"))
        try container.encode(tokenType, forKey: Key("token_type"))
        try container.encodeIfPresent(expiresAt.map(RFC3339.string), forKey: Key("expires_at"))
        try container.encodeIfPresent(scope, forKey: Key("scope"))
        for (key, value) in extras where !Self.knownKeys.contains(key) { try container.encode(value, forKey: Key(key)) }
    }
}

/// RFC 3339 dates, with or without fractional seconds.
enum RFC3339 {
    static func string(_ date: Date) -> String { date.formatted(.iso8601) }

    static func date(_ text: String) -> Date? {
        if let date = try? Date(text, strategy: .iso8601) { return date }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}
