import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// WebDAV answers in the shared vocabulary (RFC 4918 and the quirks of shared/reference/webdav.md): 409 is a
/// missing parent, 507 a full disk; 423 (locked), 425 and 509 (bandwidth) ask to wait and are paced and retried
/// like 429 and 503.
struct WebDAVClassifier: ServiceErrorClassifier {
    let host: String

    func isRefusal(_ response: HTTPResponse) -> Bool { [423, 425, 509].contains(response.status) }

    func failure(_ response: HTTPResponse, path: String) -> CloudFileSystemError {
        switch response.status {
        case 401: .unauthorized("the WebDAV server refused the credentials for \(host); check the remote's user and password")
        case 409: .parentMissing(path: path)
        case 423, 425, 509: .transient("the WebDAV server answered \(response.status) for \(path)")
        default: ServiceFailure.standard(response, path: path, service: "the WebDAV server", message: String(response.text.prefix(200)))
        }
    }
}
