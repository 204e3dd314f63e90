import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Drive's resumable upload on the shared engine: a session is opened with the file's metadata and length, the
/// contents go up in chunks that are multiples of 256 KiB, each intermediate chunk answered 308 with the `Range`
/// Drive holds; `Content-Range: bytes */total` asks a session what it has; a forgotten session (404, 410) expires.
struct GoogleDriveUploadSession: ResumableUploadProtocol {
    let client: ServiceClient
    /// `POST …/files` for a new file, `PATCH …/files/{id}` for new contents of an existing one.
    let method: String
    let target: URL
    let metadata: GoogleDriveItem.Creation
    let path: String

    func open(size: Int64) async throws -> URL {
        let url = try URLEscaping.url(target, "", [("uploadType", "resumable"), ("fields", GoogleDriveItem.fields)])
        // Opening a session twice only leaves an unused session behind, so it may be repeated.
        var request = ServiceClient.jsonRequest(method, url, metadata, safeToRepeat: true)
        request.headers["X-Upload-Content-Type"] = "application/octet-stream"
        request.headers["X-Upload-Content-Length"] = String(size)
        let response = try await client.checked(request, path: path)
        guard let location = response.headers["Location"],
            let session = URL(string: location, relativeTo: target)?.absoluteURL
        else {
            throw CloudFileSystemError.server(
                status: response.status, message: "Google Drive opened no upload session for \(path) (no Location)")
        }
        return session
    }

    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: URL
    ) async throws -> ResumableProgress<GoogleDriveItem> {
        var request = HTTPRequest(
            method: "PUT", url: session, body: piece.body(offset: offset, length: length), isSafeToRepeat: false)
        request.maximumAttempts = 1
        request.headers["Content-Range"] =
            length > 0 ? "bytes \(offset)-\(offset + length - 1)/\(total)" : "bytes */\(total)"
        return try answer(try await client.send(request))
    }

    func status(of session: URL, total: Int64) async throws -> ResumableProgress<GoogleDriveItem> {
        var request = HTTPRequest(method: "PUT", url: session, isSafeToRepeat: true)
        request.maximumAttempts = 1
        request.headers["Content-Range"] = "bytes */\(total)"
        return try answer(try await client.send(request))
    }

    private func answer(_ response: HTTPResponse) throws -> ResumableProgress<GoogleDriveItem> {
        switch response.status {
        case 200, 201:
            return .done(try client.decode(GoogleDriveItem.self, response, path: path))
        case 308:
            guard let range = response.headers["Range"] else { return .received(0) }
            guard range.hasPrefix("bytes=0-"), let last = Int64(range.dropFirst("bytes=0-".count)) else {
                throw CloudFileSystemError.server(
                    status: 308,
                    message: "Google Drive's upload session for \(path) answered the range \(range.prefix(80))")
            }
            return .received(last + 1)
        default:
            return try client.sessionFailure(response, path: path)
        }
    }
}
