import Foundation

/// Hides secrets in trace output: credentials in headers, tokens and passwords in URLs.
enum Redaction {
    static let secretHeaders: Set<String> = [
        "authorization", "proxy-authorization", "cookie", "set-cookie", "x-auth-token",
    ]
    static let secretParameters: Set<String> = [
        "access_token", "refresh_token", "token", "code", "client_secret",
        "password", "auth", "code_verifier", "device_code", "id_token",
    ]

    static func header(_ name: String, _ value: String) -> String {
        guard secretHeaders.contains(name.lowercased()) else { return value }
        let scheme = value.split(separator: " ").first.map(String.init)
        return scheme.map { $0.count < value.count ? "\($0) <redacted>" : "<redacted>" } ?? "<redacted>"
    }

    static func url(_ url: URL) -> String {
        guard var components = URLComponents(url: url, resolvingAgainstBaseURL: false) else { return "<url>" }
        if components.password != nil { components.password = "redacted" }
        components.queryItems = components.queryItems?.map { item in
            secretParameters.contains(item.name.lowercased()) ? URLQueryItem(name: item.name, value: "redacted") : item
        }
        return components.string ?? "<url>"
    }
}
