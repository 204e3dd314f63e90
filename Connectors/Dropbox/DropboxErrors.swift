import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Dropbox's error body, read once here: `{"error_summary": "path/not_found/..", "error": {".tag": …}}`. The summary
/// is the chain of union tags joined by `/`, with a tail that varies (`/`, `/.`, `/..`), so it is matched by tag,
/// never as a whole. A 400 answers plain text; a 429 `{"error": {"reason": {".tag": …}, "retry_after": N}}`.
struct DropboxErrorBody {
    /// The summary's tags in order (`["path", "not_found"]`).
    var tags: [String]
    var summary: String
    /// `correct_offset` of an `incorrect_offset`, wherever it sits in the error (an append's or a finish's).
    var correctOffset: Int64?

    private struct Shape: Decodable {
        var error_summary: String?
    }

    init(_ response: HTTPResponse) {
        let body = ServiceErrorBody<Shape>(response)
        summary = body.shape?.error_summary ?? body.text
        tags = (body.shape?.error_summary ?? "").split(separator: "/").map(String.init).filter {
            !$0.isEmpty && $0.contains { $0 != "." }
        }
        correctOffset = Self.number(named: "correct_offset", in: try? JSONSerialization.jsonObject(with: response.body))
        if tags.isEmpty, response.status == 429 { tags = [Self.rateLimitReason(response) ?? "too_many_requests"] }
    }

    func has(_ tag: String) -> Bool { tags.contains(tag) }

    /// The first value of a member `name` anywhere in the JSON, as a number.
    private static func number(named name: String, in value: Any?) -> Int64? {
        if let object = value as? [String: Any] {
            if let number = object[name] as? NSNumber { return number.int64Value }
            for member in object.values { if let found = number(named: name, in: member) { return found } }
        }
        return nil
    }

    private static func rateLimitReason(_ response: HTTPResponse) -> String? {
        guard let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any],
            let error = object["error"] as? [String: Any], let reason = error["reason"] as? [String: Any]
        else { return nil }
        return reason[".tag"] as? String
    }
}

/// Dropbox's answers in the shared vocabulary. 429 (with Retry-After) is paced by the shared client; a 409
/// `too_many_write_operations` (another write to the same namespace holds its lock) is a refusal too, and a refused
/// request was not carried out, so even a non-repeatable one is sent again after the wait.
struct DropboxClassifier: ServiceErrorClassifier {
    var refusalsAreNotActedOn: Bool { true }

    func isRefusal(_ response: HTTPResponse) -> Bool {
        response.status == 409 && DropboxErrorBody(response).has("too_many_write_operations")
    }

    /// `list_folder/continue` refuses a cursor it let go (`reset`), or whose folder is gone (`path`).
    func isExpiredFeedPosition(_ response: HTTPResponse) -> Bool {
        guard response.status == 409 else { return false }
        let tags = DropboxErrorBody(response).tags
        return tags.first == "reset" || tags.first == "path"
    }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        let body = DropboxErrorBody(response)
        switch response.status {
        case 409:
            if body.has("not_found") { return .notFound(path: path) }
            if body.has("insufficient_space") { return .quotaExceeded("Dropbox has no room for \(path)") }
            if body.has("too_many_write_operations") {
                return .rateLimited(retryAfter: ServiceFailure.retryAfter(response))
            }
            if body.has("not_file") { return .wrongKind(path: path, expectedFolder: false) }
            if body.has("not_folder") { return .wrongKind(path: path, expectedFolder: true) }
            if body.has("conflict") { return .alreadyExists(path: path) }
            if body.has("malformed_path") || body.has("disallowed_name") { return .invalidPath(path) }
            return .server(status: 409, message: "Dropbox refused \(path): \(body.summary)")
        case 401:
            let reason = body.has("expired_access_token") ? "the access token expired" : body.summary
            return .unauthorized("Dropbox refused the access token for \(path) (\(reason)); authorize the remote again")
        case 400:
            return .server(status: 400, message: "Dropbox refused the request for \(path): \(body.summary)")
        default:
            return ServiceFailure.standard(response, path: path, service: "Dropbox", message: body.summary)
        }
    }
}
