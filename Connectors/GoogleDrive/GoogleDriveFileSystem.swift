import Foundation
import LLVS
import LLVSHTTP
import Synchronization

/// A `CloudFileSystem` over the Google Drive API v3 as the real service behaves (shared/reference/google-drive.md).
/// Drive names files by ID, not by path, and lets one folder hold several items of the same name, so paths are
/// resolved one component at a time with a deterministic choice among duplicates; folder IDs are cached, and a
/// folder is created once however many uploads want it at the same moment.
public final class GoogleDriveFileSystem: CloudFileSystem {
    public let configuration: GoogleDriveConfiguration
    let http: HTTPClient
    let authorizer: (any HTTPAuthorizer)?
    /// IDs of paths seen: folders, reused for everything below them, and files, so a download after a listing costs
    /// one request. An entry Drive no longer knows (404) is dropped and the path resolved again.
    let ids = Mutex<[String: Entry]>([:])
    /// Folder creations in flight by path, so concurrent uploads into one new folder create it once.
    let creating = Mutex<[String: Task<String, any Error>]>([:])

    struct Entry: Sendable {
        var id: String
        var isFolder: Bool
    }

    /// `authorizer` is normally an `OAuthTokenSource` over the remote's token file.
    public init(configuration: GoogleDriveConfiguration = GoogleDriveConfiguration(), http: HTTPClient = HTTPClient(),
                authorizer: (any HTTPAuthorizer)?) {
        self.configuration = configuration
        self.http = http
        self.authorizer = authorizer
    }

    // MARK: Requests

    static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    func url(_ base: URL, _ path: String, _ query: [(String, String)] = []) -> URL {
        var text = base.absoluteString
        if text.hasSuffix("/") { text.removeLast() }
        text += path
        if !query.isEmpty { text += "?" + query.map { "\($0.0)=\(FormEncoding.escape($0.1))" }.joined(separator: "&") }
        return URL(string: text)!
    }

    func fileURL(_ id: String, _ query: [(String, String)] = []) -> URL {
        url(configuration.apiURL, "/files/" + (id.addingPercentEncoding(withAllowedCharacters: Self.unreserved) ?? id), query)
    }

    /// Sends through the shared client with the token source; Drive's rate-limit answers are retried by the shared
    /// policy even for creations, since Drive documents that a refused request was not carried out.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        var request = request
        request.repeatsAfterRefusal = true
        do {
            return try await http.send(request, authorizer: authorizer, isRetryable: Self.isRetryable)
        } catch {
            throw Self.failure(error)
        }
    }

    static func jsonRequest(_ method: String, _ url: URL, _ object: [String: Any], safeToRepeat: Bool) -> HTTPRequest {
        let body = (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys])) ?? Data("{}".utf8)
        return HTTPRequest(method: method, url: url, headers: ["Content-Type": "application/json; charset=UTF-8"],
                           body: .data(body), isSafeToRepeat: safeToRepeat)
    }

    func decode<T: Decodable>(_ type: T.Type, _ response: HTTPResponse, _ path: String) throws -> T {
        guard response.isSuccess else { throw Self.failure(response, path) }
        do {
            return try JSONDecoder().decode(type, from: response.body)
        } catch {
            throw CloudFileSystemError.server(status: response.status, message: "Google Drive's answer for \(path) is not the JSON expected: \(error)")
        }
    }

    // MARK: CloudFileSystem: reading

    public func exists(_ path: String) async throws -> Bool {
        try await find(path) != nil
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        guard let file = try await find(path) else { throw CloudFileSystemError.notFound(path: path) }
        return file.item
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        let components = try CloudPath.components(folder)
        guard let id = try await folderID(components, creating: false) else { throw CloudFileSystemError.notFound(path: folder) }
        return try await children(of: id, at: components, fields: DriveFile.fields).map(\.item)
    }

    /// Names only, with the few fields the ID cache needs: smaller pages than a full listing.
    public func listNames(_ folder: String) async throws -> [String] {
        let components = try CloudPath.components(folder)
        guard let id = try await folderID(components, creating: false) else { return [] }
        return try await children(of: id, at: components, fields: DriveFile.nameFields).map(\.name)
    }

    /// A folder's items, one per name (the chosen one among duplicates), each remembered by path.
    private func children(of id: String, at components: [String], fields: String) async throws -> [DriveFile] {
        let files = try await query(DriveQuery.children(of: id), path: Self.key(components), fields: fields)
        var byName: [String: [DriveFile]] = [:]
        for file in files { byName[file.name, default: []].append(file) }
        return byName.values.compactMap { duplicates in
            guard let file = DriveFile.chosen(duplicates) else { return nil }
            remember(Self.key(components + [file.name]), file)
            return file
        }
    }

    private func get(_ id: String, path: String, headers: HTTPHeaders = [:], destination: HTTPResponseDestination) async throws -> HTTPResponse {
        let response = try await send(HTTPRequest(url: fileURL(id, [("alt", "media")]), headers: headers, destination: destination))
        guard response.isSuccess else {
            if response.status == 403, DriveErrorBody(response).reasons.contains("fileNotDownloadable") {
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            }
            throw Self.failure(response, path)
        }
        return response
    }

    public func download(_ path: String) async throws -> Data {
        try await withFileID(path) { try await get($0, path: path, destination: .memory).body }
    }

    public func download(_ path: String, toFileAt destination: URL) async throws {
        do {
            _ = try await withFileID(path) { try await get($0, path: path, destination: .file(destination)) }
        } catch {
            try? FileManager.default.removeItem(at: destination)
            throw error
        }
    }

    public func read(_ path: String, range: ByteRange) async throws -> Data {
        try await withFileID(path) { id in
            let response = try await send(HTTPRequest(url: fileURL(id, [("alt", "media")]), headers: ["Range": range.httpValue]))
            switch response.status {
            case 206: return response.body
            case 200:
                guard let span = range.resolved(size: Int64(response.body.count)) else { return Data() }
                return response.body.subdata(in: Int(span.lowerBound)..<Int(span.upperBound))
            case 416: return Data()
            default: throw Self.failure(response, path)
            }
        }
    }

    // MARK: CloudFileSystem: writing

    public func makeFolder(_ path: String) async throws {
        _ = try await folderID(try CloudPath.components(path), creating: true)
    }

    public func upload(_ data: Data, to path: String) async throws {
        try await upload(.data(data), to: path)
    }

    public func upload(fileAt source: URL, to path: String) async throws {
        try await upload(try UploadSource(file: source), to: path)
    }

    /// Creates the file, or replaces the contents of the one there by its ID (never delete and re-create, which
    /// is not atomic), then checks that Drive holds the bytes sent.
    func upload(_ source: UploadSource, to path: String) async throws {
        let components = try CloudPath.components(path)
        guard let name = components.last else { throw CloudFileSystemError.invalidPath(path) }
        let parentKey = Self.key(components.dropLast())
        for attempt in 1...2 {
            guard let parentID = try await folderID(Array(components.dropLast()), creating: true) else { throw CloudFileSystemError.parentMissing(path: path) }
            let existing = try await items(named: name, in: parentID, path: path)
            let target = DriveFile.chosen(existing.filter { !$0.isFolder })
            if target == nil, !existing.isEmpty { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
            do {
                let file = if let target { try await replace(target.id, with: source, path: path) }
                           else { try await create(name, in: parentID, from: source, path: path) }
                try check(file, against: source, path: path)
                remember(Self.key(components), file)
                return
            } catch CloudFileSystemError.notFound where attempt == 1 {
                forget(parentKey) // the parent was removed since it was cached: find or make it again
            }
        }
        throw CloudFileSystemError.parentMissing(path: path)
    }

    private func create(_ name: String, in parentID: String, from source: UploadSource, path: String) async throws -> DriveFile {
        let metadata: [String: Any] = ["name": name, "parents": [parentID]]
        guard source.size <= Int64(configuration.multipartLimit) else {
            return try await resumableUpload(source, method: "POST", target: url(configuration.uploadURL, "/files"), metadata: metadata, path: path)
        }
        let multipart = MultipartRelated(parts: [
            .init(contentType: "application/json; charset=UTF-8", data: try JSONSerialization.data(withJSONObject: metadata)),
            .init(contentType: "application/octet-stream", data: try source.data()),
        ])
        let request = HTTPRequest(method: "POST", url: url(configuration.uploadURL, "/files", [("uploadType", "multipart"), ("fields", DriveFile.fields)]),
                                  headers: ["Content-Type": multipart.contentType], body: .data(multipart.body), isSafeToRepeat: false)
        return try await createOnce(request, path: path) {
            guard let landed = DriveFile.chosen(try await self.items(named: name, in: parentID, path: path).filter { !$0.isFolder }),
                  landed.byteCount == source.size else { return nil }
            return landed
        }
    }

    private func replace(_ id: String, with source: UploadSource, path: String) async throws -> DriveFile {
        guard source.size <= Int64(configuration.multipartLimit) else {
            return try await resumableUpload(source, method: "PATCH", target: url(configuration.uploadURL, "/files/\(id)"), metadata: [:], path: path)
        }
        // Replacing the whole contents is idempotent, so the shared policy may repeat it after a dropped answer.
        let request = HTTPRequest(method: "PATCH", url: url(configuration.uploadURL, "/files/\(id)", [("uploadType", "media"), ("fields", DriveFile.fields)]),
                                  headers: ["Content-Type": "application/octet-stream"], body: source.body, isSafeToRepeat: true)
        return try decode(DriveFile.self, try await send(request), path)
    }

    /// Drive's own account of what it stored must match what was sent: the size always, the MD5 when the data
    /// was in memory to hash.
    private func check(_ file: DriveFile, against source: UploadSource, path: String) throws {
        if let size = file.byteCount, size != source.size {
            throw CloudFileSystemError.server(status: 200, message: "Google Drive stored \(size) bytes for \(path), not the \(source.size) sent")
        }
        if case .data(let data) = source, let md5 = file.md5Checksum, md5.lowercased() != DigestStream.hex(data, .md5) {
            throw CloudFileSystemError.server(status: 200, message: "Google Drive's MD5 of \(path) does not match the data sent")
        }
    }

    // MARK: CloudFileSystem: removing

    public func removeFile(_ path: String) async throws {
        try await remove(path, folder: false)
    }

    public func removeFolder(_ path: String) async throws {
        guard try !CloudPath.components(path).isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        try await remove(path, folder: true)
    }

    /// Removes every item of that name and kind (duplicates too, or the next one would take its place). Drive
    /// removes a folder's contents with it.
    private func remove(_ path: String, folder: Bool) async throws {
        let components = try CloudPath.components(path)
        guard let name = components.last else { return }
        let parent: String?
        do { parent = try await folderID(Array(components.dropLast()), creating: false) } catch CloudFileSystemError.wrongKind { return }
        guard let parent else { return }
        let found = try await items(named: name, in: parent, path: path)
        let matching = found.filter { $0.isFolder == folder }
        if matching.isEmpty, !found.isEmpty { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: folder) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for file in matching { group.addTask { try await self.remove(id: file.id, path: path) } }
            try await group.waitForAll()
        }
        forget(Self.key(components))
    }

    private func remove(id: String, path: String) async throws {
        let response: HTTPResponse
        switch configuration.removal {
        case .trash:
            response = try await send(Self.jsonRequest("PATCH", fileURL(id, [("fields", "id")]), ["trashed": true], safeToRepeat: true))
        case .delete:
            response = try await send(HTTPRequest(method: "DELETE", url: fileURL(id)))
        }
        guard response.isSuccess || response.status == 404 else { throw Self.failure(response, path) }
    }
}
