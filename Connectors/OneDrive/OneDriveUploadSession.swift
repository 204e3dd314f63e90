import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Graph's upload session on the shared engine: `createUploadSession` gives an absolute `uploadUrl` on another host,
/// called without the token; fragments answer 202 with `nextExpectedRanges` until the last, which answers the item;
/// a GET of the URL says what the session holds, a DELETE cancels it, 404 means it expired. A fragment answered 416
/// (it did not start where the session stands, after a lost answer) is settled by asking the session.
struct OneDriveUploadSession: ResumableUploadProtocol {
    let client: ServiceClient
    let create: URL
    let path: String

    private struct Created: Decodable {
        var uploadUrl: String
    }

    private struct Status: Decodable {
        var nextExpectedRanges: [String]?
    }

    private struct Conflict: Encodable {
        var behavior = "replace"
        enum CodingKeys: String, CodingKey { case behavior = "@microsoft.graph.conflictBehavior" }
    }

    private struct Body: Encodable { var item = Conflict() }

    func open(size: Int64) async throws -> URL {
        let answer = try await client.json(
            Created.self, ServiceClient.jsonRequest("POST", create, Body(), safeToRepeat: true), path: path)
        guard let url = URL(string: answer.uploadUrl), url.scheme != nil else {
            throw CloudFileSystemError.server(
                status: 200, message: "OneDrive's upload session for \(path) has no usable uploadUrl")
        }
        return url
    }

    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: URL
    ) async throws -> ResumableProgress<OneDriveItem> {
        var request = HTTPRequest(
            method: "PUT", url: session, body: piece.body(offset: offset, length: length), isSafeToRepeat: false)
        request.maximumAttempts = 1
        request.headers["Content-Range"] = "bytes \(offset)-\(offset + length - 1)/\(total)"
        let response = try await client.send(request, authorization: .none)
        if response.status == 416 { return try await status(of: session, total: total) }
        return try answer(response)
    }

    func status(of session: URL, total: Int64) async throws -> ResumableProgress<OneDriveItem> {
        var request = HTTPRequest(url: session)
        request.maximumAttempts = 1
        return try answer(try await client.send(request, authorization: .none))
    }

    func abandon(_ session: URL) async {
        var request = HTTPRequest(method: "DELETE", url: session)
        request.maximumAttempts = 1
        _ = try? await client.send(request, authorization: .none)
    }

    private func answer(_ response: HTTPResponse) throws -> ResumableProgress<OneDriveItem> {
        switch response.status {
        case 200, 201:
            // The last fragment answers the item; a status GET answers the session (no `id`).
            if let item = try? JSONDecoder().decode(OneDriveItem.self, from: response.body) { return .done(item) }
            return .received(try held(response))
        case 202:
            return .received(try held(response))
        default:
            return try client.sessionFailure(response, path: path)
        }
    }

    /// The start of the first of `nextExpectedRanges` (`"N-"` or `"N-M"`): what the session holds without a gap.
    private func held(_ response: HTTPResponse) throws -> Int64 {
        let status = try? JSONDecoder().decode(Status.self, from: response.body)
        guard let first = status?.nextExpectedRanges?.first, let start = Int64(first.prefix { $0 != "-" }) else {
            throw CloudFileSystemError.server(
                status: response.status, message: "OneDrive's upload session for \(path) gave no nextExpectedRanges")
        }
        return start
    }
}
