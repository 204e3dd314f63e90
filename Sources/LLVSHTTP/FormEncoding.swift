import Foundation

/// `application/x-www-form-urlencoded`, as OAuth token endpoints take it.
public enum FormEncoding {
    public static func escape(_ text: String) -> String { URLEscaping.escape(text) }

    public static func encode(_ fields: [(String, String)]) -> Data { Data(URLEscaping.query(fields).utf8) }

    /// Parses a form or a query string; `+` is a space.
    public static func decode(_ text: String) -> [String: String] {
        var result: [String: String] = [:]
        for pair in text.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ")
            }
            guard let name = parts.first?.removingPercentEncoding else { continue }
            result[name] = parts.count > 1 ? (parts[1].removingPercentEncoding ?? parts[1]) : ""
        }
        return result
    }
}
