import Foundation
import LLVSSupport
import LLVSHTTP

/// Box's upload host: direct multipart uploads and new versions, and chunked upload sessions.
extension MockBoxServer {
    /// Stores contents as a new file in a folder, or as a new version of a file.
    func store(
        _ content: MockContent, name: String?, folderID: String?, existing: String?, times: MockBoxContentTimes? = nil,
        state: inout MockBoxState
    ) throws -> MockBoxItem {
        let sha1 = content.checksums([.sha1])[.sha1] ?? ""
        let now = state.tree.tick()
        let versionID = state.newID()
        if let existing {
            let file = try liveFile(existing, state)
            guard state.tree.usage + content.size - file.size <= settings.quotaBytes else {
                throw MockBoxError(403, "storage_limit_exceeded", "Account storage limit reached")
            }
            if let name, name.lowercased() != file.name.lowercased(), let parent = file.parents.first,
                let other = state.child(named: name, of: parent)
            {
                throw nameInUse(other, asArray: false, in: state)
            }
            let updated = state.tree.update(file.id) { item in
                item.store(content, sha1: sha1, versionID: versionID, at: now)
                if let name { item.name = name }
                // A new version without times of its own was changed now.
                item.contentModified = nil
                if let times { item.apply(times) }
            }!
            state.log("ITEM_UPLOAD", updated.id)
            return updated
        }
        guard let name, let folderID else {
            throw MockBoxError(400, "bad_request", "attributes need name and parent.id")
        }
        guard MockBoxNames.isValid(name) else { throw MockBoxError(400, "item_name_invalid", "Item name invalid") }
        let parent = try liveFolder(folderID, state)
        if let other = state.child(named: name, of: parent.id) { throw nameInUse(other, asArray: false, in: state) }
        guard state.tree.usage + content.size <= settings.quotaBytes else {
            throw MockBoxError(403, "storage_limit_exceeded", "Account storage limit reached")
        }
        var file = MockBoxItem(id: state.newID(), name: name, parents: [parent.id], isFolder: false, created: now)
        file.store(content, sha1: sha1, versionID: versionID, at: now)
        if let times { file.apply(times) }
        state.tree.insert(file)
        state.log("ITEM_UPLOAD", file.id)
        return file
    }

    /// `POST /files/content` (new) or `/files/{id}/content` (new version): multipart with `attributes` before `file`.
    func uploadFile(_ request: IncomingRequest, existing: String?) throws -> MockResponse {
        let contentType = request.headers["Content-Type"] ?? ""
        guard contentType.lowercased().hasPrefix("multipart/form-data"),
            let parts = MultipartParts.parse(request.bodyData, contentType: contentType)
        else {
            throw MockBoxError(400, "bad_request", "The request is not multipart/form-data")
        }
        let attributesIndex = parts.firstIndex { $0.dispositionParameter("name") == "attributes" }
        guard let fileIndex = parts.firstIndex(where: { $0.dispositionParameter("filename") != nil }) else {
            throw MockBoxError(400, "bad_request", "No file part was sent")
        }
        if let attributesIndex, attributesIndex > fileIndex {
            throw MockBoxError(
                400, "metadata_after_file_contents", "Metadata must be sent before file contents in a multipart upload")
        }
        let attributes =
            attributesIndex.flatMap { try? JSONSerialization.jsonObject(with: parts[$0].data) as? [String: Any] } ?? [:]
        if existing == nil, attributesIndex == nil {
            throw MockBoxError(400, "bad_request", "The attributes part is required")
        }
        let data = parts[fileIndex].data
        guard Int64(data.count) <= settings.directUploadLimit else {
            throw MockBoxError(
                413, "file_size_limit_exceeded", "File is too big for a direct upload; use an upload session")
        }
        let raced = existing == nil && server.faults.fires("name-in-use", method: request.method, path: request.path)
        let lag = existing == nil && server.faults.fires("listing-lag", method: request.method, path: request.path)
        return try state.withLock { state in
            if raced, let name = attributes["name"] as? String, let folderID = Self.parentID(attributes),
                state.child(named: name, of: folderID) == nil
            {
                // Another client uploaded the same name (with the same bytes) a moment before this request arrived.
                _ = try? store(.data(data), name: name, folderID: folderID, existing: nil, state: &state)
            }
            let file = try store(
                .data(data), name: attributes["name"] as? String, folderID: Self.parentID(attributes),
                existing: existing,
                times: try MockBoxContentTimes(attributes), state: &state)
            if lag { state.tree.lagInListings(file.id) }
            return .json(201, ["total_count": 1, "entries": [render(file, fields: Self.fields(request), in: state)]])
        }
    }

    private func sessionJSON(_ id: String, _ upload: MockBoxUpload, received parts: Int) -> [String: Any] {
        let base = endpoint.appendingPathComponent("api/2.0/files/upload_sessions/\(id)").absoluteString
        return [
            "type": "upload_session", "id": id, "part_size": upload.partSize, "total_parts": upload.totalParts,
            "num_parts_processed": parts, "session_expires_at": MockBoxTime.format(upload.expires),
            "session_endpoints": [
                "upload_part": base, "commit": base + "/commit", "abort": base, "list_parts": base + "/parts",
                "status": base, "log_event": base + "/log",
            ],
        ]
    }

    /// `POST /files/upload_sessions` `{folder_id, file_size, file_name}` or `/files/{id}/upload_sessions` `{file_size}`.
    func openSession(_ request: IncomingRequest, existing: String?) throws -> MockResponse {
        let body = try Self.jsonBody(request)
        guard let size = (body["file_size"] as? NSNumber)?.int64Value, size >= 0 else {
            throw MockBoxError(400, "bad_request", "file_size is required")
        }
        guard size >= settings.minimumSessionSize else {
            throw MockBoxError(
                400, "file_size_too_small",
                "File size \(size) less than minimum allowed for this API: \(settings.minimumSessionSize)")
        }
        return try state.withLock { state in
            var upload = MockBoxUpload(
                folderID: nil, fileID: existing, name: "", fileSize: size, partSize: settings.partSize,
                expires: Date().addingTimeInterval(settings.sessionLifetime))
            if let existing {
                upload.name = try liveFile(existing, state).name
            } else {
                guard let folderID = body["folder_id"] as? String, let name = body["file_name"] as? String else {
                    throw MockBoxError(400, "bad_request", "folder_id and file_name are required")
                }
                guard MockBoxNames.isValid(name) else {
                    throw MockBoxError(400, "item_name_invalid", "Item name invalid")
                }
                let parent = try liveFolder(folderID, state)
                if let other = state.child(named: name, of: parent.id) {
                    throw nameInUse(other, asArray: false, in: state)
                }
                upload.folderID = folderID
                upload.name = name
            }
            guard state.tree.usage + size <= settings.quotaBytes else {
                throw MockBoxError(403, "storage_limit_exceeded", "Account storage limit reached")
            }
            upload.processingCommits = state.processingCommits
            let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").uppercased()
            _ = state.sessions.open(upload, total: size, in: storage, id: id)
            return .json(201, sessionJSON(id, upload, received: 0))
        }
    }

    private func liveSession(_ id: String, _ state: MockBoxState) throws -> MockUploadSession<MockBoxUpload> {
        guard let session = state.sessions[id], !session.expired, session.target.expires > Date() else {
            throw MockBoxError.notFound
        }
        return session
    }

    /// One part: `Content-Range` on a part boundary, exactly `part_size` unless it is the last, and a `Digest`
    /// with the part's SHA-1.
    func uploadPart(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        guard let range = request.headers["Content-Range"], range.hasPrefix("bytes ") else {
            throw MockBoxError(400, "bad_request", "Content-Range is required")
        }
        let spec = range.dropFirst(6).split(separator: "/")
        let bounds = spec.first?.split(separator: "-").compactMap { Int64($0) } ?? []
        guard spec.count == 2, bounds.count == 2, let total = Int64(spec[1]) else {
            throw MockBoxError(416, "requested_range_not_satisfiable", "Content-Range \(range) is malformed")
        }
        let data = request.bodyData
        let digest = request.headers["Digest"] ?? ""
        guard digest.lowercased().hasPrefix("sha=") else {
            throw MockBoxError(400, "bad_request", "Digest: sha=<base64 SHA-1> is required")
        }
        guard String(digest.dropFirst(4)) == ChecksumAlgorithm.sha1.base64(of: data) else {
            throw MockBoxError(412, "sha1_mismatch", "The digest of the part does not match its contents")
        }
        return try state.withLock { state in
            var session = try liveSession(id, state)
            let upload = session.target
            let (start, end) = (bounds[0], bounds[1])
            let isLast = end == upload.fileSize - 1
            guard total == upload.fileSize, start <= end, end < total, start % upload.partSize == 0,
                end - start + 1 == (isLast ? total - start : upload.partSize), Int64(data.count) == end - start + 1
            else {
                throw MockBoxError(
                    416, "requested_range_not_satisfiable", "Content-Range \(range) is not a part of this session")
            }
            let sha1 = ChecksumAlgorithm.sha1.text(of: data)
            if let held = upload.parts[start], held.sha1 != sha1 {
                throw MockBoxError(416, "range_overlaps_existing_part", "Part overlaps a part already uploaded")
            }
            try session.write(.data(data), at: start)
            let part =
                upload.parts[start]
                ?? MockBoxUpload.Part(
                    id: String(format: "%08X", UInt32.random(in: 0...UInt32.max)), offset: start, size: end - start + 1,
                    sha1: sha1)
            session.target.parts[start] = part
            state.sessions[id] = session
            state.sessions.pieceStored()
            return .json(
                200, ["part": ["part_id": part.id, "offset": part.offset, "size": part.size, "sha1": part.sha1]])
        }
    }

    func sessionStatus(_ id: String) throws -> MockResponse {
        try state.withLock { state in
            let session = try liveSession(id, state)
            return .json(200, sessionJSON(id, session.target, received: session.target.parts.count))
        }
    }

    func listParts(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        let offset = max(0, Int(request.query["offset"] ?? "") ?? 0)
        let limit = min(1000, max(1, Int(request.query["limit"] ?? "") ?? 100))
        return try state.withLock { state in
            let parts = try liveSession(id, state).target.parts.values.sorted { $0.offset < $1.offset }
            let page = parts.dropFirst(offset).prefix(limit).map {
                ["part_id": $0.id, "offset": $0.offset, "size": $0.size, "sha1": $0.sha1] as [String: Any]
            }
            return .json(200, ["entries": page, "offset": offset, "limit": limit, "total_count": parts.count])
        }
    }

    /// The commit: every part listed as Box acknowledged it, and the whole file's SHA-1 in `Digest`; 202 +
    /// Retry-After while the mock is told to be processing; a repeat after success gives the same file.
    func commit(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        let body = try Self.jsonBody(request)
        let sent = (body["parts"] as? [[String: Any]] ?? []).compactMap { $0["part_id"] as? String }
        let digest = request.headers["Digest"] ?? ""
        return try state.withLock { state in
            var session = try liveSession(id, state)
            if let done = session.finishedID, let file = state.tree[done] {
                return .json(
                    201, ["total_count": 1, "entries": [render(file, fields: Self.fields(request), in: state)]])
            }
            let parts = session.target.parts.values.sorted { $0.offset < $1.offset }
            guard sent == parts.map(\.id), session.received == session.target.fileSize else {
                throw MockBoxError(
                    400, "bad_request", "The parts do not cover the file or differ from the parts uploaded")
            }
            let spooled = MockContent.spooled(session.spool, size: session.target.fileSize)
            guard digest.lowercased().hasPrefix("sha="),
                ChecksumAlgorithm.base64(hex: spooled.checksums([.sha1])[.sha1] ?? "") == String(digest.dropFirst(4))
            else {
                throw MockBoxError(422, "invalid_digest", "The digest of the file does not match its contents")
            }
            if session.target.processingCommits > 0 {
                session.target.processingCommits -= 1
                state.sessions[id] = session
                return .empty(202, headers: ["Retry-After": "1"])
            }
            let file = try store(
                session.content(total: session.target.fileSize),
                name: session.target.fileID == nil ? session.target.name : nil, folderID: session.target.folderID,
                existing: session.target.fileID,
                times: try (body["attributes"] as? [String: Any]).flatMap(MockBoxContentTimes.init),
                state: &state)
            if session.target.fileID == nil,
                server.faults.fires("listing-lag", method: request.method, path: request.path)
            {
                state.tree.lagInListings(file.id)
            }
            session.finishedID = file.id
            state.sessions[id] = session
            return .json(201, ["total_count": 1, "entries": [render(file, fields: Self.fields(request), in: state)]])
        }
    }

    func abort(_ id: String) throws -> MockResponse {
        try state.withLock { state in
            var session = try liveSession(id, state)
            session.expired = true
            try? FileManager.default.removeItem(at: session.spool)
            state.sessions[id] = session
            return .empty(204)
        }
    }
}
