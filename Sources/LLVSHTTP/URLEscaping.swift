import Foundation

/// RFC 3986 percent-encoding, once for the whole package: everything but the unreserved characters is escaped, so
/// a path segment or a query value can hold any text (`/`, `?`, `#`, `%`, `+`, spaces, non-ASCII).
public enum URLEscaping {
    /// One path segment or one query name or value: its UTF-8 bytes, each unreserved one as it is and every other
    /// as `%XX`. Done on the bytes, as it runs for every segment of every request, and Foundation's goes through
    /// NSString and CharacterSet for each.
    public static func escape(_ text: String) -> String {
        let utf8 = text.utf8
        if utf8.allSatisfy(isUnreserved) { return text }
        let hex = Array("0123456789ABCDEF".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(utf8.count * 3)
        for byte in utf8 {
            if isUnreserved(byte) {
                out.append(byte)
            } else {
                out += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// RFC 3986's unreserved characters: ASCII letters and digits, `-`, `.`, `_` and `~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default: false
        }
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
