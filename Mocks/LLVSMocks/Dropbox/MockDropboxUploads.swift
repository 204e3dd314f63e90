import Foundation
import LLVSSupport
import LLVSHTTP

/// The content host's routes: `files/upload`, upload sessions (`start`, `append_v2`, `finish`) and `files/download`.
extension MockDropboxServer {
    private func checkSize(_ request: IncomingRequest) throws {
        guard request.bodySize <= settings.requestLimit else {
            throw MockDropboxError.route(["payload_too_large"])
        }
    }

    /// A session route's `content_hash` is of the bytes of that one call (the body), not of the whole file.
    private func checkCallHash(_ request: IncomingRequest, _ argument: [String: Any]) throws {
        guard let sent = argument["content_hash"] as? String else { return }
        let stream = ChecksumStream(.dropboxContentHash)
        switch request.body {
        case .data(let data): stream.update(data)
        case .file(let url, _):
            if let handle = try? FileHandle(forReadingFrom: url) {
                while let piece = try? handle.read(upToCount: 1 << 20), !piece.isEmpty { stream.update(piece) }
                try? handle.close()
            }
        }
        if stream.finalize() != sent.lowercased() { throw MockDropboxError.route(["content_hash_mismatch"]) }
    }

    /// An upload's write error: `{".tag": "path", "reason": <WriteError>, "upload_session_id": …}`.
    static func uploadError(_ tags: [String]) -> MockDropboxError {
        MockDropboxError.route(
            summary: ["path"] + tags,
            error: [
                ".tag": "path", "reason": MockDropboxError.nested(tags), "upload_session_id": "pid_upload_session:",
            ])
    }

    func upload(_ request: IncomingRequest, _ argument: [String: Any]) throws -> MockResponse {
        try checkSize(request)
        let lag = server.faults.fires("listing-lag", method: request.method, path: request.path)
        return try write(
            try MockContent.keeping(request.body, in: storage), commit: argument,
            contentHash: argument["content_hash"] as? String, wrap: Self.uploadError, lag: lag)
    }

    func startSession(_ request: IncomingRequest, _ argument: [String: Any]) throws -> MockResponse {
        try checkSize(request)
        if let type = argument["session_type"] as? String ?? (argument["session_type"] as? [String: Any])?[".tag"]
            as? String, type == "concurrent", request.bodySize > 0
        {
            throw MockDropboxError.route(["concurrent_session_data_not_allowed"])
        }
        return try state.withLock { state in
            let id = "pid_upload_session:" + UUID().uuidString.replacingOccurrences(of: "-", with: "")
            var session = state.sessions.open(MockDropboxUpload(), total: nil, in: storage, id: id)
            try session.write(request.body, at: 0)
            session.target.closed = argument["close"] as? Bool ?? false
            state.sessions[id] = session
            return .json(200, ["session_id": id])
        }
    }

    /// The session a cursor names, or the lookup error a client meets (`tag` wraps it, as `finish` does).
    private func session(
        _ cursor: Any?, body: IncomingRequest.Body, size: Int64, wrap: [String], state: inout MockDropboxState,
        closing: Bool
    ) throws -> MockUploadSession<MockDropboxUpload> {
        guard let cursor = cursor as? [String: Any], let id = cursor["session_id"] as? String,
            let offset = (cursor["offset"] as? NSNumber)?.int64Value
        else { throw MockDropboxError.text(400, "request body: cursor: missing required field") }
        guard var session = state.sessions[id], !session.expired, session.finishedID == nil else {
            throw MockDropboxError.route(wrap + ["not_found"])
        }
        guard offset == session.received else {
            throw MockDropboxError.route(wrap + ["incorrect_offset"], leaf: ["correct_offset": session.received])
        }
        if session.target.closed, size > 0 { throw MockDropboxError.route(wrap + ["closed"]) }
        try session.write(body, at: offset)
        if closing { session.target.closed = true }
        state.sessions[id] = session
        if size > 0 { state.sessions.pieceStored() }
        return session
    }

    func appendSession(_ request: IncomingRequest, _ argument: [String: Any]) throws -> MockResponse {
        try checkSize(request)
        try checkCallHash(request, argument)
        return try state.withLock { state in
            _ = try session(
                argument["cursor"], body: request.body, size: request.bodySize, wrap: [], state: &state,
                closing: argument["close"] as? Bool ?? false)
            return .json(200, NSNull())
        }
    }

    func finishSession(_ request: IncomingRequest, _ argument: [String: Any]) throws -> MockResponse {
        try checkSize(request)
        guard let commit = argument["commit"] as? [String: Any] else {
            throw MockDropboxError.text(400, "request body: missing required field 'commit'")
        }
        try checkCallHash(request, argument)
        let finished = try state.withLock { state in
            let session = try session(
                argument["cursor"], body: request.body, size: request.bodySize, wrap: ["lookup_failed"],
                state: &state, closing: true)
            var finished = session
            finished.finishedID = "committed"  // gone for the client; kept for the bytes a test counts
            state.sessions[session.id] = finished
            return session
        }
        let lag = server.faults.fires("listing-lag", method: request.method, path: request.path)
        return try write(
            finished.content(total: finished.received), commit: commit, contentHash: nil,
            wrap: { MockDropboxError.route(["path"] + $0) }, lag: lag)
    }

    /// The file's bytes (whole, or the Range asked), its metadata in `Dropbox-API-Result`, written header-safe.
    func download(_ request: IncomingRequest, _ argument: [String: Any]) throws -> MockResponse {
        let address = try MockDropboxAddress(argument["path"], tag: "path")
        let (content, metadata) = try state.withLock { state -> (MockContent, MockDropboxMetadata) in
            guard let item = resolve(address, in: state) else { throw MockDropboxError.route(["path", "not_found"]) }
            guard !item.isFolder, let content = item.content else {
                throw MockDropboxError.route(["path", "not_file"])
            }
            return (content, state.metadata(item))
        }
        let result = String(decoding: MockJSON.data(metadata.json) ?? Data(), as: UTF8.self)
        return content.response(
            range: request.headers["Range"],
            headers: [
                "Content-Type": "application/octet-stream", "Dropbox-API-Result": HeaderSafeJSON.escape(result),
                "ETag": "W/\"\(metadata.rev)\"",
            ])
    }
}
