import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// WebDAV answers in the shared vocabulary (RFC 4918 and the quirks of docs/services/webdav.md): 409 is a
/// missing parent, 507 a full disk, 413 a body limit; 423 (locked), 425 and 509 (bandwidth) ask to wait and are paced and retried
/// like 429 and 503.
struct WebDAVClassifier: ServiceErrorClassifier {
    let host: String

    func isRefusal(_ response: HTTPResponse) -> Bool { [423, 425, 509].contains(response.status) }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        switch response.status {
        case 401:
            .unauthorized("the WebDAV server refused the credentials for \(host); check the remote's user and password")
        case 409: .parentMissing(path: path)
        case 423, 425, 509: .transient("the WebDAV server answered \(response.status) for \(path)")
        case 507:
            .quotaExceeded("the WebDAV server answered 507 \(Self.explanation(response)) for \(path): it has no room")
        // Most often a proxy in front of the server (nginx's client_max_body_size, a tunnel's limit), not the server.
        case 413:
            .server(
                status: 413,
                message: "the WebDAV server (or a proxy in front of it) refused \(path) as too large "
                    + "(413 \(Self.explanation(response))): raise its request body limit")
        default:
            ServiceFailure.standard(
                response, path: path, service: "the WebDAV server", message: Self.explanation(response))
        }
    }

    /// The reason phrase of the status, and what the server said when it said it for a client: Sabre's (Nextcloud,
    /// ownCloud) XML error carries `<s:message>`. Never an HTML error page (Apache's, nginx's): those are for a
    /// browser, and whole pages made errors unreadable; `LLVS_HTTP_TRACE` shows every body.
    static func explanation(_ response: HTTPResponse) -> String {
        let reason = HTTPStatus.reason(response.status)
        let text = response.text
        guard let start = text.range(of: "<s:message>"),
            let end = text.range(of: "</s:message>", range: start.upperBound..<text.endIndex)
        else {
            return reason
        }
        let message = text[start.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
        return message.isEmpty ? reason : reason + " (" + String(message.prefix(200)) + ")"
    }
}
