import Foundation
import LLVSSupport

/// AWS Signature Version 4 in the header form S3 takes: a canonical request (method, the path as sent, the query
/// sorted, the signed headers, the payload's hash), the string to sign over its hash and the day's scope, and a
/// signing key derived by chained HMAC-SHA256 from the secret. The same functions sign a connector's requests and
/// let a mock check them.
public struct SigV4: Sendable {
    public var accessKeyID: String
    public var secretAccessKey: String
    /// Temporary credentials' token, sent as `X-Amz-Security-Token`.
    public var sessionToken: String?
    public var region: String
    public var service = "s3"

    /// The payload hash of an empty body, and the value that says the payload is not signed.
    public static let emptyPayload = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
    public static let unsignedPayload = "UNSIGNED-PAYLOAD"

    public init(accessKeyID: String, secretAccessKey: String, sessionToken: String? = nil, region: String) {
        self.accessKeyID = accessKeyID
        self.secretAccessKey = secretAccessKey
        self.sessionToken = sessionToken
        self.region = region
    }

    /// `YYYYMMDDTHHMMSSZ`, UTC.
    public static func timestamp(_ date: Date) -> String {
        var time = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&time, &parts)
        return String(
            format: "%04d%02d%02dT%02d%02d%02dZ", Int(parts.tm_year) + 1900, Int(parts.tm_mon) + 1, Int(parts.tm_mday),
            Int(parts.tm_hour), Int(parts.tm_min), Int(parts.tm_sec))
    }

    /// The query as SigV4 wants it: each name and value decoded and encoded again RFC 3986-style, sorted by name then
    /// value, `name=value` joined by `&` (a name without a value gets `=`).
    public static func canonicalQuery(_ rawQuery: String?) -> String {
        guard let rawQuery, !rawQuery.isEmpty else { return "" }
        let pairs = rawQuery.split(separator: "&").map { item -> (String, String) in
            let parts = item.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let decode = { (text: Substring) in String(text).removingPercentEncoding ?? String(text) }
            return (
                URLEscaping.escape(decode(parts[0])), parts.count > 1 ? URLEscaping.escape(decode(parts[1])) : ""
            )
        }
        return pairs.sorted { $0.0 != $1.0 ? $0.0 < $1.0 : $0.1 < $1.1 }.map { "\($0.0)=\($0.1)" }.joined(
            separator: "&")
    }

    /// The canonical request. `headers` are the signed ones, names lower-cased; values are trimmed and inner runs of
    /// spaces folded to one.
    public static func canonicalRequest(
        method: String, rawPath: String, rawQuery: String?, headers: [(String, String)], payloadHash: String
    ) -> String {
        let sorted = headers.map { ($0.0.lowercased(), fold($0.1)) }.sorted { $0.0 < $1.0 }
        return [
            method, rawPath.isEmpty ? "/" : rawPath, canonicalQuery(rawQuery),
            sorted.map { "\($0.0):\($0.1)\n" }.joined(), sorted.map(\.0).joined(separator: ";"), payloadHash,
        ].joined(separator: "\n")
    }

    private static func fold(_ value: String) -> String {
        value.trimmingCharacters(in: .whitespaces).split(separator: " ", omittingEmptySubsequences: true).joined(
            separator: " ")
    }

    /// `<yyyymmdd>/<region>/<service>/aws4_request`.
    public func scope(_ timestamp: String) -> String {
        "\(timestamp.prefix(8))/\(region)/\(service)/aws4_request"
    }

    /// The hex signature of a canonical request made at `timestamp`.
    public func signature(canonicalRequest: String, timestamp: String) -> String {
        let stringToSign = [
            "AWS4-HMAC-SHA256", timestamp, scope(timestamp),
            DigestStream.hex(Data(canonicalRequest.utf8), .sha256),
        ].joined(separator: "\n")
        var key = HMACSHA256.mac(key: Array(("AWS4" + secretAccessKey).utf8), String(timestamp.prefix(8)))
        for part in [region, service, "aws4_request"] { key = HMACSHA256.mac(key: key, part) }
        return SHA256.hexString(HMACSHA256.mac(key: key, stringToSign))
    }

    /// `Host` as libcurl sends it: the host, and the port when it is not the scheme's own.
    public static func hostHeader(_ url: URL) -> String {
        let host = url.host ?? ""
        guard let port = url.port, port != (url.scheme == "https" ? 443 : 80) else { return host }
        return "\(host):\(port)"
    }

    /// Signs `request` at `date`: sets `X-Amz-Date`, `X-Amz-Content-Sha256` (as given by the caller, else the hash
    /// of an in-memory body, else unsigned), the session token, and `Authorization` over `host`, every `x-amz-*`
    /// header and `content-md5`.
    public func sign(_ request: inout HTTPRequest, at date: Date = Date()) {
        let timestamp = Self.timestamp(date)
        request.headers["X-Amz-Date"] = timestamp
        if let sessionToken { request.headers["X-Amz-Security-Token"] = sessionToken }
        if request.headers["X-Amz-Content-Sha256"] == nil {
            switch request.body {
            case .none: request.headers["X-Amz-Content-Sha256"] = Self.emptyPayload
            case .data(let data): request.headers["X-Amz-Content-Sha256"] = DigestStream.hex(data, .sha256)
            default: request.headers["X-Amz-Content-Sha256"] = Self.unsignedPayload
            }
        }
        var signed: [(String, String)] = [("host", Self.hostHeader(request.url))]
        for field in request.headers {
            let name = field.name.lowercased()
            if name.hasPrefix("x-amz-") || name == "content-md5" { signed.append((name, field.value)) }
        }
        let components = URLComponents(url: request.url, resolvingAgainstBaseURL: false)
        let canonical = Self.canonicalRequest(
            method: request.method, rawPath: components?.percentEncodedPath ?? "/",
            rawQuery: components?.percentEncodedQuery, headers: signed,
            payloadHash: request.headers["X-Amz-Content-Sha256"] ?? Self.unsignedPayload)
        let names = signed.map(\.0).sorted().joined(separator: ";")
        request.headers["Authorization"] =
            "AWS4-HMAC-SHA256 Credential=\(accessKeyID)/\(scope(timestamp)), SignedHeaders=\(names), Signature=\(signature(canonicalRequest: canonical, timestamp: timestamp))"
    }
}

extension SigV4: HTTPAuthorizer {
    public func authorize(_ request: inout HTTPRequest) async throws { sign(&request) }
    /// Keys do not expire the way tokens do: a refusal is final.
    public func renew(after response: HTTPResponse, to request: HTTPRequest) async throws -> Bool { false }
}
