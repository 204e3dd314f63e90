import Foundation

/// RFC 3986 percent-encoding, once for the whole package: everything but the unreserved characters is escaped, so
/// a path segment or a query value can hold any text (`/`, `?`, `#`, `%`, `+`, spaces, non-ASCII).
public enum URLEscaping {
    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// One path segment or one query name or value.
    public static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? text
    }

    /// A query string from its items in order.
    public static func query(_ items: [(String, String)]) -> String {
        items.map { "\(escape($0.0))=\(escape($0.1))" }.joined(separator: "&")
    }

    /// `base` + `path` (already escaped where needed) + `?query`, refused with a clear error rather than a crash
    /// when the result is not a URL.
    public static func url(_ base: URL, _ path: String, _ query: [(String, String)] = []) throws -> URL {
        var text = base.absoluteString
        if text.hasSuffix("/"), path.hasPrefix("/") { text.removeLast() }
        text += path
        if !query.isEmpty { text += (text.contains("?") ? "&" : "?") + self.query(query) }
        guard let url = URL(string: text) else { throw HTTPError.invalidURL(text) }
        return url
    }
}
