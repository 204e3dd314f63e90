import Foundation
import LLVSSupport
import LLVSHTTP

/// Upload sessions: `createUploadSession` on the API gives an absolute `uploadUrl` on the content host, which takes
/// fragments (multiples of 320 KiB but the last, at most 60 MiB) with `Content-Range`, answers 202 with
/// `nextExpectedRanges` until the last and then the item, 416 to a fragment that does not start where the session
/// stands, its status to a GET, and cancels on DELETE. The host refuses an Authorization header.
extension MockOneDriveServer {
    static let maximumFragment: Int64 = 60 * 1024 * 1024
    static let sessionLifetime: TimeInterval = 7 * 24 * 3600

    func createUploadSession(_ request: IncomingRequest, _ address: MockGraphAddress) throws -> MockResponse {
        let body = (try? JSONSerialization.jsonObject(with: request.bodyData)) as? [String: Any]
        let item = body?["item"] as? [String: Any]
        let behavior = Self.conflictBehavior(item) ?? "replace"
        let (parentID, name, replaceID) = try target(of: address)
        let finalName = (item?["name"] as? String) ?? name ?? ""
        let info = try MockFileSystemInfo(item?["fileSystemInfo"])
        let expires = Date().addingTimeInterval(Self.sessionLifetime)
        let id = try state.withLock { state -> String in
            if replaceID == nil {
                try checkName(finalName, in: parentID, state)
                if behavior == "fail", state.child(named: finalName, of: parentID) != nil {
                    throw MockGraphError(409, "nameAlreadyExists", "The specified item name already exists.")
                }
            }
            let upload = MockOneDriveUpload(
                parentID: parentID, name: finalName, replaceID: replaceID, conflictBehavior: behavior, expires: expires,
                fileSystemInfo: info)
            return state.sessions.open(upload, total: nil, in: storage).id
        }
        return .json(
            200,
            [
                "uploadUrl": uploadURL(id), "expirationDateTime": MockGraphTime.format(expires),
                "nextExpectedRanges": ["0-"],
            ])
    }

    func uploadURL(_ id: String) -> String { contentHost.baseURL.absoluteString + "/upload/" + id }

    static func sessionStatus(_ session: MockUploadSession<MockOneDriveUpload>) -> [String: Any] {
        [
            "expirationDateTime": MockGraphTime.format(session.target.expires),
            "nextExpectedRanges": ["\(session.received)-"],
        ]
    }

    /// The content host's upload URLs; nil for anything else (published downloads).
    /// The upload host's answer, with the drive written to its state folder after a fragment that stored a file.
    func answerUploadHost(_ request: IncomingRequest) -> MockResponse? {
        let answer = handleUploadHost(request)
        if let answer, request.method == "PUT", [200, 201].contains(answer.status) { persist() }
        return answer
    }

    func handleUploadHost(_ request: IncomingRequest) -> MockResponse? {
        let parts = request.path.split(separator: "/")
        if parts.count == 2, parts[0] == "monitor" {
            guard request.method == "GET" else {
                return Self.error(405, "invalidRequest", "The method is not allowed on a monitor.")
            }
            return copyStatus(String(parts[1]))
        }
        guard parts.count == 2, parts[0] == "upload" else { return nil }
        let id = String(parts[1])
        do {
            guard let session = state.withLock({ $0.sessions[id] }), !session.expired else {
                throw MockGraphError(404, "itemNotFound", "The upload session was not found or has expired.")
            }
            switch request.method {
            case "GET":
                return .json(200, Self.sessionStatus(session))
            case "DELETE":
                state.withLock { $0.sessions[id] = nil }
                try? FileManager.default.removeItem(at: session.spool)
                return .empty(204)
            case "PUT":
                return try fragment(request, session)
            default:
                throw MockGraphError(405, "invalidRequest", "The method is not allowed on an upload session.")
            }
        } catch let failure as MockGraphError {
            return Self.error(failure.status, failure.code, failure.message)
        } catch {
            return Self.error(500, "generalException", "\(error)")
        }
    }

    private func fragment(
        _ request: IncomingRequest, _ session: MockUploadSession<MockOneDriveUpload>
    ) throws -> MockResponse {
        var session = session
        guard let header = request.headers["Content-Range"], header.hasPrefix("bytes ") else {
            throw MockGraphError(400, "invalidRequest", "Content-Range is required.")
        }
        let spec = header.dropFirst(6).split(separator: "/")
        let bounds = spec.first?.split(separator: "-").compactMap { Int64($0) } ?? []
        guard spec.count == 2, bounds.count == 2, let total = Int64(spec[1]), bounds[0] <= bounds[1], bounds[1] < total
        else {
            throw MockGraphError(400, "invalidRequest", "Content-Range \(header) is malformed.")
        }
        let (start, end) = (bounds[0], bounds[1])
        let length = end - start + 1
        guard length == request.bodySize else {
            throw MockGraphError(
                400, "invalidRequest", "Content-Range covers \(length) bytes but the body has \(request.bodySize).")
        }
        if let known = session.total, known != total {
            throw MockGraphError(400, "invalidRequest", "The total size changed from \(known) to \(total).")
        }
        guard start == session.received else {
            throw MockGraphError(
                416, "invalidRange",
                "The uploaded fragment overlaps with data that has already been received (the session expects \(session.received)-)."
            )
        }
        guard length <= Self.maximumFragment else {
            throw MockGraphError(400, "invalidRequest", "A fragment may not exceed 60 MiB.")
        }
        let last = end + 1 == total
        guard last || length % Self.fragmentGranularity == 0 else {
            throw MockGraphError(
                400, "invalidRequest", "Fragments must be multiples of 320 KiB (327,680 bytes), except the last.")
        }
        session.total = total
        try session.write(request.body, at: start)
        guard last else {
            state.withLock { state in
                state.sessions[session.id] = session
                state.sessions.pieceStored()
            }
            return .json(202, Self.sessionStatus(session))
        }
        let content = session.content(total: total)
        let upload = session.target
        state.withLock { $0.sessions[session.id] = nil }
        let (item, created) = try storeFile(
            named: upload.name, in: upload.parentID, replacing: upload.replaceID,
            behavior: upload.conflictBehavior, content: content, fileSystemInfo: upload.fileSystemInfo)
        lagIfAsked(created ? item.id : nil, request)
        return .json(created ? 201 : 200, json(item))
    }
}
