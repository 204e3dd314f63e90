import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import Synchronization

/// Box's chunked upload on the shared engine: a session says its `part_size`; every part but the last is exactly
/// that, sent with `Content-Range` and `Digest: sha=` (its SHA-1 in base64); after a failure the session's parts
/// are listed and the upload resumes after the parts Box holds without a gap; the commit carries every part and
/// the whole file's SHA-1 and may answer 202 + Retry-After while parts are processed; a failed upload is aborted.
struct BoxUploadSession: ResumableUploadProtocol {
    let client: ServiceClient
    let configuration: BoxConfiguration
    /// `/files/upload_sessions` for a new file, `/files/{id}/upload_sessions` for a new version.
    let create: URL
    let folderID: String?
    let name: String
    /// The whole file's SHA-1, base64, for the commit.
    let fileSHA1: String
    let path: String

    struct Part: Codable, Sendable {
        var part_id: String
        var offset: Int64
        var size: Int64
        var sha1: String?
    }

    /// A session and the parts Box acknowledged (from part answers, replaced by the parts listing after a failure).
    final class Session: Sendable {
        let id: String
        let partSize: Int64
        let uploadPart: URL
        let listParts: URL
        let commit: URL
        let abort: URL
        let parts = Mutex<[Int64: Part]>([:])

        init(id: String, partSize: Int64, uploadPart: URL, listParts: URL, commit: URL, abort: URL) {
            self.id = id
            self.partSize = partSize
            self.uploadPart = uploadPart
            self.listParts = listParts
            self.commit = commit
            self.abort = abort
        }

        /// Bytes held from 0 without a gap.
        var held: Int64 {
            parts.withLock { parts in
                var end: Int64 = 0
                while let part = parts[end], part.size > 0 { end += part.size }
                return end
            }
        }
    }

    private struct Created: Decodable {
        struct Endpoints: Decodable {
            var upload_part: String?
            var list_parts: String?
            var commit: String?
            var abort: String?
        }
        var id: String
        var part_size: Int64
        var session_endpoints: Endpoints?
    }

    private struct Creation: Encodable {
        var folder_id: String?
        var file_size: Int64
        var file_name: String?
    }

    private struct PartAnswer: Decodable { var part: Part }
    private struct PartList: Decodable {
        var entries: [Part]
        var total_count: Int?
    }
    private struct Commit: Encodable { var parts: [Part] }

    func pieceSize(of session: Session) -> Int64? { session.partSize }

    func open(size: Int64) async throws -> Session {
        // Opening a session twice only leaves an unused one behind, which expires.
        let body = Creation(folder_id: folderID, file_size: size, file_name: folderID == nil ? nil : name)
        let created = try await client.json(
            Created.self, ServiceClient.jsonRequest("POST", create, body, safeToRepeat: true), path: path)
        guard created.part_size > 0 else {
            throw CloudFileSystemError.server(status: 201, message: "Box's upload session for \(path) has no part size")
        }
        let base = try configuration.upload("/files/upload_sessions/\(URLEscaping.escape(created.id))")
        func endpoint(_ text: String?, _ fallback: URL) -> URL {
            text.flatMap { URL(string: $0) }.flatMap { $0.scheme == nil ? nil : $0 } ?? fallback
        }
        let endpoints = created.session_endpoints
        return Session(
            id: created.id, partSize: created.part_size, uploadPart: endpoint(endpoints?.upload_part, base),
            listParts: endpoint(endpoints?.list_parts, base.appendingPathComponent("parts")),
            commit: endpoint(endpoints?.commit, base.appendingPathComponent("commit")),
            abort: endpoint(endpoints?.abort, base))
    }

    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: Session
    ) async throws -> ResumableProgress<BoxItem> {
        let data = try piece.data(offset: offset, length: length)
        var request = HTTPRequest(method: "PUT", url: session.uploadPart, body: .data(data), isSafeToRepeat: false)
        request.maximumAttempts = 1
        request.headers["Content-Type"] = "application/octet-stream"
        request.headers["Content-Range"] = "bytes \(offset)-\(offset + length - 1)/\(total)"
        request.headers["Digest"] = "sha=" + ChecksumAlgorithm.sha1.base64(of: data)
        let response = try await client.send(request)
        switch response.status {
        case 200, 201:
            let part = try client.decode(PartAnswer.self, response, path: path).part
            guard part.offset == offset, part.size == length else {
                throw CloudFileSystemError.server(
                    status: response.status,
                    message:
                        "Box stored a part of \(path) at \(part.offset) (\(part.size) bytes), not the one sent at \(offset)"
                )
            }
            session.parts.withLock { $0[offset] = part }
            return .received(session.held)
        case 416, 412:
            // Out of step with the session (a repeat after a lost answer), or a part damaged on the way: ask it.
            return try await status(of: session, total: total)
        default:
            return try client.sessionFailure(response, path: path)
        }
    }

    /// The parts Box holds, listed page by page; the upload goes on after the last one without a gap.
    func status(of session: Session, total: Int64) async throws -> ResumableProgress<BoxItem> {
        var listed: [Part] = []
        var offset = 0
        // A session holds at most this many parts; a listing that says more (or repeats itself) is refused.
        let maximumParts = Int((total + session.partSize - 1) / max(1, session.partSize)) + 1
        while true {
            var request = HTTPRequest(
                url: try URLEscaping.url(session.listParts, "", [("offset", String(offset)), ("limit", "1000")]))
            request.maximumAttempts = 1
            let response = try await client.send(request)
            if case .notFound = client.failure(of: response, path: path) { return .expired }
            let page = try client.decode(PartList.self, response, path: path)
            listed += page.entries
            offset += page.entries.count
            guard listed.count <= maximumParts else {
                throw CloudFileSystemError.server(
                    status: response.status,
                    message:
                        "Box lists more parts for the upload session of \(path) than a file of \(total) bytes can have")
            }
            if page.entries.isEmpty || offset >= (page.total_count ?? offset) { break }
        }
        session.parts.withLock { parts in
            parts = Dictionary(listed.map { ($0.offset, $0) }, uniquingKeysWith: { a, _ in a })
        }
        return .received(session.held)
    }

    /// Commits every part with the whole file's SHA-1; 202 (parts still processing) is waited out for its
    /// Retry-After, and 400 `parts_mismatch` (the last part not yet counted) for a second, a bounded number of times.
    func finish(_ session: Session, total: Int64) async throws -> ResumableProgress<BoxItem> {
        let parts = session.parts.withLock { $0.values.sorted { $0.offset < $1.offset } }
        var waited = Duration.zero
        for _ in 0..<configuration.maximumCommitWaits where waited < configuration.maximumCommitWait {
            var request = ServiceClient.jsonRequest("POST", session.commit, Commit(parts: parts), safeToRepeat: false)
            request.maximumAttempts = 1
            request.headers["Digest"] = "sha=" + fileSHA1
            let response = try await client.send(request)
            switch response.status {
            case 200, 201:
                guard let file = try client.decode(BoxFiles.self, response, path: path).entries.first else {
                    throw CloudFileSystemError.server(
                        status: response.status, message: "Box's commit of \(path) names no file")
                }
                return .done(file)
            case 202:
                let wait = min(
                    ServiceFailure.retryAfter(response) ?? .seconds(1), .seconds(60),
                    configuration.maximumCommitWait - waited)
                try await client.retryPolicy.sleep(wait)
                waited += wait
            case 400 where BoxErrorBody(response).code == "parts_mismatch":
                // Box answers this to a commit sent right after the last part, before it has counted that part: the
                // parts are the ones it acknowledged, so the same commit is sent again after a moment.
                let wait = min(.seconds(1), configuration.maximumCommitWait - waited)
                try await client.retryPolicy.sleep(wait)
                waited += wait
            default:
                return try client.sessionFailure(response, path: path)
            }
        }
        throw CloudFileSystemError.transient("Box kept processing the parts of \(path); try again")
    }

    func abandon(_ session: Session) async {
        var request = HTTPRequest(method: "DELETE", url: session.abort)
        request.maximumAttempts = 1
        _ = try? await client.send(request)
    }
}
