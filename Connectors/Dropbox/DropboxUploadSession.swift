import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import Synchronization

/// Dropbox's upload session on the shared engine: `upload_session/start` opens it (no data), `append_v2` sends each
/// piece at its offset, `finish` commits it (a session call's `content_hash` covers that call's bytes only, so the
/// whole file's hash is checked against the one Dropbox answers). Dropbox has no "what do you hold"
/// call: an empty `append_v2` at the offset last acknowledged asks it, and Dropbox answers `incorrect_offset` with the
/// `correct_offset` when it holds more (a piece whose answer was lost). A finish whose answer was lost meets a session
/// that is gone: the file at the path is then looked at, and taken when its content hash is the data's.
struct DropboxUploadSession: ResumableUploadProtocol {
    let api: DropboxAPI
    let commit: DropboxFileSystem.Commit
    let contentHash: String
    let path: String
    var client: ServiceClient { api.client }

    final class Session: Sendable {
        let id: String
        /// Bytes Dropbox acknowledged, from 0.
        let acknowledged = Mutex<Int64>(0)
        init(id: String) { self.id = id }
    }

    private struct Start: Encodable { var close = false }
    private struct Started: Decodable { var session_id: String }
    private struct Cursor: Encodable {
        var session_id: String
        var offset: Int64
    }
    private struct Append: Encodable {
        var cursor: Cursor
        var close = false
    }
    private struct Finish: Encodable {
        var cursor: Cursor
        var commit: DropboxFileSystem.Commit
    }

    func open(size: Int64) async throws -> Session {
        // Opening a session twice only leaves an unused one behind, which expires.
        let request = try api.content("files/upload_session/start", Start(), changes: true, safeToRepeat: true)
        return Session(id: try await client.json(Started.self, request, path: path).session_id)
    }

    func send(
        _ piece: UploadSource, offset: Int64, length: Int64, total: Int64, to session: Session
    ) async throws -> ResumableProgress<DropboxItem> {
        try await append(piece.body(offset: offset, length: length), at: offset, length: length, to: session)
    }

    /// An empty append at the offset acknowledged last: accepted when Dropbox holds just that, else its correction.
    func status(of session: Session, total: Int64) async throws -> ResumableProgress<DropboxItem> {
        try await append(.data(Data()), at: session.acknowledged.withLock { $0 }, length: 0, to: session)
    }

    private func append(
        _ body: HTTPRequestBody, at offset: Int64, length: Int64, to session: Session
    ) async throws -> ResumableProgress<DropboxItem> {
        var request = try api.content(
            "files/upload_session/append_v2", Append(cursor: Cursor(session_id: session.id, offset: offset)),
            body: body, changes: true, safeToRepeat: false)
        request.maximumAttempts = 1
        let response = try await client.send(request)
        if response.isSuccess { return .received(acknowledge(offset + length, in: session)) }
        if let correct = DropboxErrorBody(response).correctOffset {
            return .received(acknowledge(correct, in: session))
        }
        return try client.sessionFailure(response, path: path)
    }

    private func acknowledge(_ held: Int64, in session: Session) -> Int64 {
        session.acknowledged.withLock { $0 = held }
        return held
    }

    func finish(_ session: Session, total: Int64) async throws -> ResumableProgress<DropboxItem> {
        var request = try api.content(
            "files/upload_session/finish",
            Finish(cursor: Cursor(session_id: session.id, offset: total), commit: commit),
            changes: true, safeToRepeat: false)
        request.maximumAttempts = 1
        let response = try await client.send(request)
        if response.isSuccess { return .done(try client.decode(DropboxItem.self, response, path: path)) }
        let body = DropboxErrorBody(response)
        if let correct = body.correctOffset { return .received(acknowledge(correct, in: session)) }
        if body.has("lookup_failed"), body.has("not_found") || body.has("closed") {
            // Gone: finished by a finish whose answer was lost (the file is there, with this data), or expired.
            let request = try api.rpc(
                "files/get_metadata", DropboxPathArgument(path: commit.path), changes: false, safeToRepeat: true)
            if let answer = try await client.answerIfPresent(request, path: path) {
                let stored = try client.decode(DropboxItem.self, answer, path: path)
                if let hash = stored.content_hash, ChecksumAlgorithm.dropboxContentHash.matches(hash, contentHash) {
                    return .done(stored)
                }
            }
            return .expired
        }
        return try client.sessionFailure(response, path: path)
    }
}
