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
        var rest = Substring(text)
        if let end = rest.firstIndex(where: { $0 == "?" || $0 == "#" }) { rest = rest[..<end] }
        var path: Substring
        if let schemeEnd = rest.range(of: "://") {
            scheme = rest[..<schemeEnd.lowerBound].lowercased()
            let afterScheme = rest[schemeEnd.upperBound...]
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
        segments = path.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }
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
