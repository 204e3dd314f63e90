import Foundation
import LLVSSupport
import LLVSHTTP

/// An answer Dropbox refuses with: a 409 route error (`error_summary`, the chain of union tags joined by `/` with a
/// trailing `/..`, and `error`, the tagged union itself), a 401 auth error, a 429, or plain text (400: bad input).
struct MockDropboxError: Error {
    var status: Int
    var body: Data
    var headers: HTTPHeaders

    var response: MockResponse {
        var headers = headers
        if headers["Content-Type"] == nil { headers["Content-Type"] = "application/json" }
        return MockResponse(status: status, headers: headers, body: .data(body))
    }

    static func text(_ status: Int, _ message: String) -> MockDropboxError {
        MockDropboxError(
            status: status, body: Data(message.utf8), headers: ["Content-Type": "text/plain; charset=utf-8"])
    }

    /// A route error whose union nests as `tags` says: `["path", "not_found"]` is
    /// `{".tag": "path", "path": {".tag": "not_found"}}`; `leaf` adds members to the innermost value
    /// (`correct_offset`).
    static func route(_ tags: [String], leaf: [String: Any] = [:], status: Int = 409) -> MockDropboxError {
        route(summary: tags, error: nested(tags, leaf: leaf), status: status)
    }

    /// A route error whose `error` is given whole (a struct member, as an upload's `path` with its `reason`).
    static func route(summary tags: [String], error: [String: Any], status: Int = 409) -> MockDropboxError {
        let object: [String: Any] = ["error_summary": tags.joined(separator: "/") + "/..", "error": error]
        return MockDropboxError(status: status, body: MockJSON.data(object) ?? Data(), headers: [:])
    }

    static func nested(_ tags: [String], leaf: [String: Any] = [:]) -> [String: Any] {
        guard let last = tags.last else { return leaf }
        var value: [String: Any] = leaf
        value[".tag"] = last
        for tag in tags.dropLast().reversed() { value = [".tag": tag, tag: value] }
        return value
    }

    static func auth(_ tag: String) -> MockDropboxError {
        var error = route(summary: [tag], error: [".tag": tag], status: 401)
        error.headers["WWW-Authenticate"] = #"Bearer realm="Dropbox-API""#
        return error
    }

    static func rateLimited(_ reason: String, retryAfter: Int) -> MockDropboxError {
        var error = route(
            summary: [reason], error: ["reason": [".tag": reason], "retry_after": retryAfter], status: 429)
        error.headers["Retry-After"] = String(retryAfter)
        return error
    }
}

/// A request's `path`: the root (`""`), components from a `/…` path, or an item by `id:`.
enum MockDropboxAddress {
    case components([String])
    case id(String)

    /// Parses a path as Dropbox does: `""`, `/a/b` (no empty component, no trailing `/`), or `id:…`; anything else
    /// is bad input (400), and a path Dropbox cannot store is `malformed_path` under `tag`.
    init(_ value: Any?, tag: String) throws {
        guard let text = value as? String else {
            throw MockDropboxError.text(
                400, "Error in call to API function: request body: missing required field 'path'")
        }
        if text.isEmpty {
            self = .components([])
        } else if text.hasPrefix("id:") {
            self = .id(text)
        } else if text.hasPrefix("/") {
            let names = text.dropFirst().split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            guard names.allSatisfy({ !$0.isEmpty && $0 != "." && $0 != ".." && $0.count <= 255 }) else {
                throw MockDropboxError.route([tag, "malformed_path"])
            }
            self = .components(names)
        } else {
            throw MockDropboxError.text(
                400,
                "Error in call to API function: request body: path: '\(text)' did not match pattern '(/(.|[\\r\\n])*)|(ns:[0-9]+(/.*)?)|(id:.*)'"
            )
        }
    }
}
