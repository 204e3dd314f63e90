import Foundation

/// An href as a server wrote it in a PROPFIND answer, read by hand rather than through Foundation's `URL`: nginx
/// writes `[ ] ( ) '` raw and escapes the rest, which `URL` refuses, and escaping the href again to please it turns
/// `%7B` into `%257B` (a `{` listed as `%7B`). The path is split at `/` and each segment percent-decoded on its own;
/// a segment whose escapes are malformed is kept as written. Nothing is ever escaped again.
struct Href: Equatable {
    /// Lowercased, for absolute hrefs; nil for a path.
    var scheme: String?
    var host: String?
    var port: Int?
    /// The decoded segments of the path (`..` kept, so a caller can refuse it).
    var segments: [String]

    /// `relativeTo`: the percent-encoded path of the listed collection, for an href that is neither absolute nor
    /// rooted (rare, but allowed).
    init(_ text: String, relativeTo base: String) {
        // URL syntax is read by bytes (its delimiters are ASCII), never by Characters: cheaper, and a delimiter
        // followed by a combining mark is still a delimiter.
        var rest = Substring(text)
        if let end = rest.utf8.firstIndex(where: { $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") }) {
            rest = rest[..<end]
        }
        var path: Substring
        if let schemeEnd = Self.schemeEnd(of: rest) {
            scheme = rest[..<schemeEnd].lowercased()
            let afterScheme = rest[rest.utf8.index(schemeEnd, offsetBy: 3)...]
            let slash = afterScheme.firstIndex(of: "/") ?? afterScheme.endIndex
            var authority = afterScheme[..<slash]
            if let at = authority.lastIndex(of: "@") { authority = authority[authority.index(after: at)...] }
            if authority.hasPrefix("["), let close = authority.firstIndex(of: "]") {
                host = String(authority[authority.index(after: authority.startIndex)..<close]).lowercased()
                let afterHost = authority[authority.index(after: close)...]
                if afterHost.hasPrefix(":") { port = Int(afterHost.dropFirst()) }
            } else if let colon = authority.lastIndex(of: ":") {
                host = authority[..<colon].lowercased()
                port = Int(authority[authority.index(after: colon)...])
            } else {
                host = authority.lowercased()
            }
            path = afterScheme[slash...]
        } else if rest.hasPrefix("/") {
            path = rest
        } else {
            path = Substring(base.hasSuffix("/") ? base + rest : base + "/" + rest)
        }
        segments = path.utf8.split(separator: UInt8(ascii: "/")).map { bytes in
            let segment = Substring(bytes)
            return Self.percentDecoded(segment) ?? String(segment)
        }
    }

    /// Where `://` ends a scheme (a letter, then letters, digits, `+`, `-` or `.`) at the start of `text`.
    private static func schemeEnd(of text: Substring) -> Substring.Index? {
        let bytes = text.utf8
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            let isLetter = (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z")
            if byte == UInt8(ascii: ":") {
                guard index != bytes.startIndex else { return nil }
                let after = bytes[bytes.index(after: index)...]
                return after.starts(with: "//".utf8) ? index : nil
            }
            let isDigitOrSign =
                (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9")) || byte == UInt8(ascii: "+")
                || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            guard isLetter || (index != bytes.startIndex && isDigitOrSign) else { return nil }
            index = bytes.index(after: index)
        }
        return nil
    }

    /// `removingPercentEncoding`, by bytes: nil when an escape is malformed or the bytes are not UTF-8. Foundation's
    /// goes through CFString and was most of the time of listing a 10,000-file folder.
    static func percentDecoded(_ segment: Substring) -> String? {
        let bytes = segment.utf8
        guard bytes.contains(UInt8(ascii: "%")) else { return String(segment) }
        func hexValue(_ byte: UInt8) -> UInt8? {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
            default: nil
            }
        }
        var decoded: [UInt8] = []
        decoded.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index != bytes.endIndex {
            let byte = bytes[index]
            index = bytes.index(after: index)
            guard byte == UInt8(ascii: "%") else {
                decoded.append(byte)
                continue
            }
            guard index != bytes.endIndex, let high = hexValue(bytes[index]) else { return nil }
            index = bytes.index(after: index)
            guard index != bytes.endIndex, let low = hexValue(bytes[index]) else { return nil }
            index = bytes.index(after: index)
            decoded.append(high << 4 | low)
        }
        return String(validating: decoded, as: UTF8.self)
    }

    /// The decoded path, `/`-separated, without a trailing `/`.
    var path: String { "/" + segments.joined(separator: "/") }

    /// Whether an absolute href names the same server as `url` (scheme, host, and port with defaults filled in).
    func isOnServer(of url: URL) -> Bool {
        guard let scheme else { return true }
        func defaultPort(_ scheme: String?) -> Int? { scheme == "https" ? 443 : scheme == "http" ? 80 : nil }
        return scheme == url.scheme?.lowercased() && host == url.host?.lowercased()
            && (port ?? defaultPort(scheme)) == (url.port ?? defaultPort(url.scheme?.lowercased()))
    }
}
