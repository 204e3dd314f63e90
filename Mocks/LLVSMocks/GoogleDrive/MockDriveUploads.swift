import Foundation
import LLVSSupport
import LLVSHTTP

/// The upload endpoints: multipart (metadata and media in one request, up to the multipart limit), media (bytes
/// only), and resumable sessions (`Location` session URI, chunks that are multiples of 256 KiB, 308 with
/// `Range: bytes=0-N` for what is held, a status query with `Content-Range: bytes */total`, 404 once expired).
extension MockGoogleDriveServer {
    static let chunkGranularity: Int64 = 256 * 1024

    func upload(_ request: IncomingRequest, _ path: String, restricted: Bool) throws -> MockResponse {
        let query = request.query
        if let sessionID = query["upload_id"] { return try chunk(sessionID, request) }
        let parts = path.split(separator: "/").map(String.init)
        let target: String?
        switch (request.method, parts.count, parts.first) {
        case ("POST", 1, "files"): target = nil
        case ("PATCH", 2, "files"), ("PUT", 2, "files"): target = parts[1]
        default: return Self.error(404, "notFound", "Not Found")
        }
        if let target { _ = try state.withLock { try $0.item(target) } }
        switch query["uploadType"] {
        case "multipart":
            guard
                let parsed = MultipartRelated.parse(
                    request.bodyData, contentType: request.headers["Content-Type"] ?? ""), parsed.count == 2
            else {
                throw MockDriveError.badRequest("Malformed multipart body: expected a metadata part and a media part.")
            }
            guard parsed[1].data.count <= settings.multipartLimit else {
                throw MockDriveError.badRequest(
                    "Media larger than \(settings.multipartLimit) bytes must be sent by resumable upload.")
            }
            var metadata = try MockDriveMetadata(json: parsed[0].data)
            // Without a mimeType in the metadata, the media part's type is the file's.
            if metadata.mimeType == nil, target == nil { metadata.mimeType = parsed[1].contentType }
            try checkParents(metadata, restricted: restricted)
            return try store(
                .data(parsed[1].data), metadata: metadata, target: target, fields: query["fields"], request: request)
        case "media":
            return try store(
                try MockContent.keeping(request.body, in: storage), metadata: try MockDriveMetadata(json: Data()),
                target: target, fields: query["fields"],
                request: request)
        case "resumable":
            var metadata = try MockDriveMetadata(json: request.bodyData)
            if metadata.mimeType == nil, target == nil { metadata.mimeType = request.headers["X-Upload-Content-Type"] }
            try checkParents(metadata, restricted: restricted)
            let total = try request.headers["X-Upload-Content-Length"].map { text -> Int64 in
                guard let value = Int64(text), value >= 0 else {
                    throw MockDriveError.badRequest("Invalid X-Upload-Content-Length \(text)")
                }
                return value
            }
            let id = "ABdE" + MockDriveID.make() + MockDriveID.make()
            let upload = MockDriveUploadTarget(
                kind: target.map { .update(id: $0, metadata) } ?? .create(metadata), fields: query["fields"])
            state.withLock { _ = $0.sessions.open(upload, total: total, in: storage, id: id) }
            let location =
                endpoint.absoluteString + "/upload/drive/v3/files" + (target.map { "/" + $0 } ?? "")
                + "?uploadType=resumable&upload_id=" + id
            return .empty(200, headers: ["Location": location, "X-GUploader-UploadID": id, "Content-Length": "0"])
        default:
            throw MockDriveError.invalidParameter(
                location: "uploadType", message: "Invalid Value: uploadType must be multipart, media or resumable")
        }
    }

    /// Stores contents as a new file or as the new contents of `target`, after the quota check.
    private func store(
        _ content: MockContent, metadata: MockDriveMetadata, target: String?, fields: String?,
        request: IncomingRequest
    ) throws -> MockResponse {
        let md5 = Self.md5(content)
        let lag = target == nil && faults.fires("listing-lag", method: request.method, path: request.path)
        let item = try state.withLock { state -> MockDriveItem in
            let replaced = try target.map { try state.item($0).content?.size ?? 0 } ?? 0
            if let quota = settings.quotaBytes, state.usage - replaced + content.size > quota {
                throw MockDriveError.forbidden(
                    reason: "storageQuotaExceeded", message: "The user's Drive storage quota has been exceeded.")
            }
            if let target { return try state.update(target, metadata, content: content, md5: md5) }
            let created = try state.create(metadata, content: content, md5: md5)
            if lag { state.tree.lagInListings(created.id) }
            return created
        }
        return try fileAnswer(item, fields: fields)
    }

    /// The body as stored contents: small ones in memory, spooled ones moved into the mock's storage.
    static func md5(_ content: MockContent) -> String { content.checksums([.md5])[.md5] ?? "" }

    // MARK: Resumable sessions

    /// `bytes a-b/total`, `bytes */total` or `bytes a-b/*`.
    static func contentRange(_ header: String?) throws -> (range: ClosedRange<Int64>?, total: Int64?) {
        guard let header, header.hasPrefix("bytes ") else {
            throw MockDriveError.badRequest("Content-Range is missing or malformed")
        }
        let spec = header.dropFirst(6).split(separator: "/", maxSplits: 1).map(String.init)
        guard spec.count == 2 else { throw MockDriveError.badRequest("Content-Range \(header) is malformed") }
        let total = spec[1] == "*" ? nil : Int64(spec[1])
        if spec[1] != "*", total == nil { throw MockDriveError.badRequest("Content-Range \(header) is malformed") }
        if spec[0] == "*" { return (nil, total) }
        let bounds = spec[0].split(separator: "-").map { Int64($0) }
        guard bounds.count == 2, let a = bounds[0], let b = bounds[1], a <= b else {
            throw MockDriveError.badRequest("Content-Range \(header) is malformed")
        }
        return (a...b, total)
    }

    private func chunk(_ sessionID: String, _ request: IncomingRequest) throws -> MockResponse {
        guard var session = state.withLock({ $0.sessions[sessionID] }), !session.expired else {
            return Self.error(404, "notFound", "Upload session not found or expired; start a new upload.")
        }
        if let finished = session.finishedID {
            return try fileAnswer(try state.withLock { try $0.item(finished) }, fields: session.target.fields)
        }
        let (range, total) = try Self.contentRange(
            request.headers["Content-Range"] ?? (request.bodySize == 0 ? "bytes */*" : nil))
        if let total { session.total = total }
        let length = request.bodySize
        if let range {
            guard range.count == length else {
                throw MockDriveError.badRequest(
                    "Content-Range covers \(range.count) bytes but the request carries \(length)")
            }
            guard range.lowerBound <= session.received else {
                state.withLock { $0.sessions[sessionID]?.bytesSent += length }
                throw MockDriveError.badRequest(
                    "Invalid request. According to the Content-Range header, the upload offset is \(range.lowerBound) byte(s), which exceeds already uploaded size of \(session.received) byte(s)."
                )
            }
            let isLast = session.total.map { range.upperBound + 1 == $0 } ?? false
            if !isLast, length % Self.chunkGranularity != 0 {
                throw MockDriveError.badRequest(
                    "Invalid request. The number of bytes uploaded is required to be equal or greater than 262144, except for the final request (it's recommended to be the exact multiple of 262144). The received request contained \(length) bytes, which does not meet this requirement."
                )
            }
            // Bytes already held (a chunk sent again) are written over with the same bytes. Drive may keep only part of a
            // chunk (its 308 then names a shorter Range, and the client sends the rest again): a test can ask for that.
            let keep =
                isLast
                ? nil
                : state.withLock { state -> Int64? in
                    guard state.shortChunksToCome > 0, length >= 2 * Self.chunkGranularity else { return nil }
                    state.shortChunksToCome -= 1
                    return length / 2 / Self.chunkGranularity * Self.chunkGranularity
                }
            if let keep {
                try session.write(.data(request.bodyData.prefix(Int(keep))), at: range.lowerBound)
            } else {
                try session.write(request.body, at: range.lowerBound)
            }
        }
        if let total = session.total, session.received == total {
            let content = session.content(total: total)
            let answer: MockResponse
            do {
                switch session.target.kind {
                case .create(let metadata):
                    answer = try store(
                        content, metadata: metadata, target: nil, fields: session.target.fields, request: request)
                case .update(let id, let metadata):
                    answer = try store(
                        content, metadata: metadata, target: id, fields: session.target.fields, request: request)
                }
            } catch {
                state.withLock { $0.sessions[sessionID] = session }
                throw error
            }
            let finishedID =
                (try? JSONSerialization.jsonObject(with: answerData(answer)) as? [String: Any])?["id"] as? String
            session.finishedID = finishedID ?? state.withLock { $0.changes.last?.id }
            state.withLock { $0.sessions[sessionID] = session }
            return answer
        }
        state.withLock { state in
            state.sessions[sessionID] = session
            if range != nil { state.sessions.pieceStored() }
        }
        var headers: HTTPHeaders = ["Content-Length": "0", "X-GUploader-UploadID": sessionID]
        if session.received > 0 { headers["Range"] = "bytes=0-\(session.received - 1)" }
        return .empty(308, headers: headers)
    }

    private func answerData(_ answer: MockResponse) -> Data {
        if case .data(let data) = answer.body { return data }
        return Data()
    }
}
