import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP
import Synchronization

/// A `CloudFileSystem` over WebDAV (RFC 4918) as real servers behave (docs/services/webdav.md): PROPFIND with an
/// explicit Depth for listings and metadata, MKCOL only for folders not yet known to exist, PUT and GET streamed,
/// DELETE after checking what is being deleted. Every quirk in the reference's table is absorbed here.
public final class WebDAVFileSystem: RemovesByKind {
    public let configuration: WebDAVConfiguration
    let client: ServiceClient
    /// Folders known to exist (created or seen); each missing one made with one MKCOL however many uploads want it.
    private let folders = KnownFolders()
    /// The remote's own collection (the URL's path) and any missing parent of it, made once when a first write finds
    /// it missing: a new remote's folder need not exist before the first push.
    private let rootCollection = SingleFlight<Void>()
    /// Uploads to one path go one at a time (see `OneAtATimePerKey`).
    private let uploadsByPath = OneAtATimePerKey()
    private let rootCollectionMade = Atomic<Bool>(false)
    /// The folder of large bodies' temporaries, made and cleared once (`WebDAVTemporaryUploads.swift`).
    let temporaryUploadsReady = SingleFlight<Void>()
    let temporaryUploadsPrepared = Atomic<Bool>(false)
    /// The chunk size of Nextcloud uploads: the configuration's, halved for good by each 413 a chunk meets.
    let nextcloudChunkSize: Atomic<Int64>
    /// Nextcloud's layout when the URL is a Nextcloud files URL, recognized once.
    let nextcloud: NextcloudLayout?

    public init(configuration: WebDAVConfiguration, http: HTTPClient = HTTPClient()) {
        self.configuration = configuration
        nextcloudChunkSize = Atomic(max(Self.smallestChunk, configuration.nextcloudChunkSize))
        nextcloud = configuration.nextcloud
        let authorizer: PasswordAuthorizer? =
            switch configuration.authentication {
            case .none: nil
            case .basic(let user, let password): PasswordAuthorizer(.basic(user: user, password: password))
            case .digest(let user, let password): PasswordAuthorizer(.digest(user: user, password: password))
            case .bearer(let token): PasswordAuthorizer(.bearer(token: token))
            }
        client = ServiceClient(
            http: http, authorizer: authorizer, classifier: WebDAVClassifier(host: configuration.url.host ?? "it"))
    }

    // MARK: Requests

    /// The URL of a path under the root; folders end in `/`.
    func url(_ path: String, folder: Bool) throws -> URL {
        let components = try CloudPath.components(path)
        var text = configuration.url.absoluteString
        if !text.hasSuffix("/") { text += "/" }
        text += components.map(URLEscaping.escape).joined(separator: "/")
        if folder, !components.isEmpty { text += "/" }
        guard let url = URL(string: text) else { throw CloudFileSystemError.invalidPath(path) }
        return url
    }

    func request(
        _ method: String, _ url: URL, headers: HTTPHeaders = [:], body: HTTPRequestBody = .none,
        destination: HTTPResponseDestination = .memory
    ) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url, headers: headers, body: body, destination: destination)
        if method == "MKCOL" { request.isSafeToRepeat = true }  // a repeat answers 405, which means "exists"
        return request
    }

    /// Sends through the shared client: its retries, pacing, sign-in (`PasswordAuthorizer`) and error mapping.
    func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        try await client.send(request)
    }

    func failure(_ response: HTTPResponse, _ path: String) -> CloudFileSystemError {
        client.classifier.failure(response, path: path)
    }

    // MARK: PROPFIND

    static let propfindBody = Data(
        #"<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getetag/></d:prop></d:propfind>"#
            .utf8)

    /// The same with the checksums Nextcloud keeps for what was uploaded with `OC-Checksum`.
    static let nextcloudPropfindBody = Data(
        #"<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getetag/><oc:checksums/></d:prop></d:propfind>"#
            .utf8)

    /// Nextcloud reports the SHA-1 this connector sends with every upload; other servers report no checksum.
    public var capabilities: CloudCapabilities {
        nextcloud == nil ? .plain : CloudCapabilities(checksums: [.sha1])
    }

    /// Only the resource type: what a listing of names needs, and less for the server to gather.
    static let namesPropfindBody = Data(
        #"<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/></d:prop></d:propfind>"#
            .utf8)

    /// PROPFIND with an explicit Depth (0 or 1); nil when the resource is missing.
    func propfind(
        _ path: String, folder: Bool, depth: Int, body: Data? = nil
    ) async throws -> (url: URL, entries: [PropfindEntry])? {
        let target = try url(path, folder: folder)
        let body = body ?? (nextcloud == nil ? Self.propfindBody : Self.nextcloudPropfindBody)
        let response = try await send(
            request(
                "PROPFIND", target,
                headers: ["Depth": String(depth), "Content-Type": "application/xml; charset=utf-8"],
                body: .data(body), destination: .memory(limit: configuration.maximumListingBytes)))
        switch WebDAVAnswer.propfind(response) {
        case .listed: break
        case .absent: return nil
        case .failed: throw failure(response, path)
        }
        do {
            return (response.url, try PropfindParser.parse(response.body))
        } catch let error as PropfindParser.Failure {
            throw CloudFileSystemError.server(
                status: 207, message: "the PROPFIND answer for \(path) is unusable: \(error.description)")
        }
    }

    /// Splits a PROPFIND answer into the listed resource itself and its children by name, refusing any href that
    /// leaves the listed collection (another host, `..`, another base path).
    func resolve(
        _ entries: [PropfindEntry], listed: URL, path: String
    ) throws -> (this: PropfindEntry?, children: [(String, PropfindEntry)]) {
        let listedPath = listed.path(percentEncoded: true)
        let base = Href(listedPath, relativeTo: "/").path
        let basePrefix = base + "/"
        var this: PropfindEntry?
        var children: [(String, PropfindEntry)] = []
        for entry in entries {
            let href = entry.href, parsed = Href(href, relativeTo: listedPath)
            guard parsed.isOnServer(of: listed) else { throw hostile(href, path, "it points to another host") }
            guard !parsed.segments.contains("..") else {
                throw hostile(href, path, "it is outside the listed collection")
            }
            let full = parsed.path
            if full == base { this = entry; continue }
            guard full.hasPrefix(basePrefix) else { throw hostile(href, path, "it is outside the listed collection") }
            let name = String(full.dropFirst(base.count + 1))
            guard !name.isEmpty, name != ".", name != ".." else {
                throw hostile(href, path, "it names no item below the collection")
            }
            // Deeper than asked; Depth: 1 answers should not have it.
            if name.utf8.contains(UInt8(ascii: "/")) { continue }
            children.append((name, entry))
        }
        return (this, children)
    }

    private func hostile(_ href: String, _ path: String, _ reason: String) -> CloudFileSystemError {
        .server(
            status: 207,
            message: "the PROPFIND answer for \(path) has the href \(href.prefix(200)), which is refused: \(reason)")
    }

    func item(named name: String, _ entry: PropfindEntry) -> CloudItem {
        CloudItem(
            name: name, isFolder: entry.isCollection, size: entry.isCollection ? nil : entry.contentLength,
            modified: entry.lastModified,
            checksums: entry.checksums)
    }

    // MARK: CloudFileSystem

    public func metadata(_ path: String) async throws -> CloudItem {
        guard let (listed, entries) = try await propfind(path, folder: false, depth: 0) else {
            throw CloudFileSystemError.notFound(path: path)
        }
        let this = try resolve(entries, listed: listed, path: path).this ?? entries.first
        guard let this, this.isPresent else { throw CloudFileSystemError.notFound(path: path) }
        if this.isCollection { remember(path) }
        return item(named: try CloudPath.name(path), this)
    }

    public func exists(_ path: String) async throws -> Bool {
        do { _ = try await metadata(path); return true } catch CloudFileSystemError.notFound { return false }
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        let answer: (url: URL, entries: [PropfindEntry])?
        do {
            answer = try await propfind(folder, folder: true, depth: 1)
        } catch CloudFileSystemError.server(let status, let message) where status != 207 {
            // Apache answers 400 to a file's path with a trailing slash: say what it really is.
            if (try? await metadata(folder))?.isFolder == false {
                throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true)
            }
            throw CloudFileSystemError.server(status: status, message: message)
        }
        guard let (listed, entries) = answer else { throw CloudFileSystemError.notFound(path: folder) }
        let (this, children) = try resolve(entries, listed: listed, path: folder)
        if let this, !this.isCollection { throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true) }
        remember(folder)
        return children.filter { $0.1.isPresent }.map { item(named: $0.0, $0.1) }
    }

    public func listNames(_ folder: String) async throws -> [String] {
        guard let (listed, entries) = try await propfind(folder, folder: true, depth: 1, body: Self.namesPropfindBody)
        else { return [] }
        let (this, children) = try resolve(entries, listed: listed, path: folder)
        if let this, !this.isCollection { throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true) }
        remember(folder)
        return children.filter { $0.1.isPresent }.map(\.0)
    }

    /// Records a folder seen to exist, and so every folder above it.
    private func remember(_ folder: String) {
        guard let components = try? CloudPath.components(folder) else { return }
        folders.remember(components)
    }

    /// Bodies up to this size are sent before making sure the parent exists: in a remote in use it does, and a
    /// missing parent costs one refused small request. Larger bodies wait for the folders, so none goes up twice.
    static let optimisticPutLimit: Int64 = 256 * 1024

    public func makeFolder(_ path: String) async throws {
        try await folders.ensure(try CloudPath.components(path)) {
            try await self.createFolder($0.joined(separator: "/"))
        }
    }

    /// One MKCOL for a folder whose parent exists. A 409 (parent missing) for a folder at the top of the remote means
    /// the remote's own collection is not there yet: it is made, then the folder.
    private func createFolder(_ prefix: String) async throws {
        var response = try await send(request("MKCOL", try url(prefix, folder: true)))
        if WebDAVAnswer.mkcol(response) == .parentMissing, try CloudPath.components(prefix).count == 1 {
            try await makeRootCollection()
            response = try await send(request("MKCOL", try url(prefix, folder: true)))
        }
        switch WebDAVAnswer.mkcol(response) {
        case .made:
            break
        case .parentMissing:
            throw CloudFileSystemError.parentMissing(path: prefix)
        case .taken, .perhapsTaken:
            // By a folder (fine) or by a file (not).
            guard let item = try? await metadata(prefix) else { throw failure(response, prefix) }
            guard item.isFolder else { throw CloudFileSystemError.wrongKind(path: prefix, expectedFolder: true) }
        case .failed:
            throw failure(response, prefix)
        }
    }

    /// Makes the collection the remote's URL names, and each missing collection above it, from the nearest one that
    /// exists down (MKCOL; a 409 means its parent is missing too). Refused anywhere, the error names that folder.
    private func makeRootCollection() async throws {
        try await rootCollection.run("") {
            let segments = self.configuration.url.path(percentEncoded: true).split(separator: "/").map(String.init)
            try await self.makeCollection(segments, depth: segments.count)
            self.rootCollectionMade.store(true, ordering: .relaxed)
        }
    }

    /// MKCOL of the first `depth` segments of the remote's URL path, making its parent first when the server says it
    /// is missing.
    private func makeCollection(_ segments: [String], depth: Int) async throws {
        guard depth > 0 else { return }
        var target = URLComponents(url: configuration.url, resolvingAgainstBaseURL: false)
        target?.percentEncodedPath = "/" + segments.prefix(depth).joined(separator: "/") + "/"
        guard let url = target?.url else { throw CloudFileSystemError.invalidPath(configuration.url.absoluteString) }
        let shown = url.path(percentEncoded: false)
        var response = try await send(request("MKCOL", url))
        if WebDAVAnswer.mkcol(response) == .parentMissing {
            try await makeCollection(segments, depth: depth - 1)
            response = try await send(request("MKCOL", url))
        }
        switch WebDAVAnswer.mkcol(response) {
        case .made, .taken: return
        case .parentMissing, .perhapsTaken, .failed:
            let error = failure(response, shown)
            throw CloudFileSystemError.server(
                status: response.status,
                message: "the server refused to make the folder \(shown) for the remote: \(error)")
        }
    }

    /// Stores `source` at `path`: small bodies straight away (making the parent when the server says it is missing),
    /// large ones once the parent is made sure of, through a temporary name.
    /// Files are sent as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    /// `.create` looks first (not every server honours a condition on PUT: nginx and rclone do not), then sends
    /// `If-None-Match: *` with a body sent in one PUT, which Apache and SabreDAV refuse with 412 where a file is.
    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        try await uploadsByPath.run(path) {
            try await self.refuseExisting(path, mode: mode)
            try await self.uploadNow(source, to: path, create: mode == .create)
        }
    }

    private func uploadNow(_ source: UploadSource, to path: String, create: Bool) async throws {
        let components = try CloudPath.components(path)
        guard !components.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        let parent = try CloudPath.parent(path)
        let parentComponents = Array(components.dropLast())
        // A Nextcloud keeps the SHA-1 sent with each upload and lists it; a large file goes up in chunks.
        let layout = nextcloud
        let checksum = try layout.map { _ in try source.checksum(.sha1) }
        if let layout, let checksum, source.size > nextcloudChunkSize.load(ordering: .relaxed) {
            if parentComponents.isEmpty, !rootCollectionMade.load(ordering: .relaxed) { try await makeRootCollection() }
            try await makeFolder(parent)
            try await uploadInChunks(source, to: path, layout: layout, checksum: checksum)
            return
        }
        if source.size > Self.optimisticPutLimit {
            // A large body is not sent to find out: the remote's own folder is made sure of first (once).
            if parentComponents.isEmpty, !rootCollectionMade.load(ordering: .relaxed) { try await makeRootCollection() }
            try await makeFolder(parent)
            do {
                try await putThroughTemporary(source.body, to: path, parent: parent, checksum: checksum)
            } catch let error as CloudFileSystemError {
                guard case .server(413, _) = error, let layout, let checksum else { throw error }
                try await uploadInChunksAfterBodyLimit(source, to: path, layout: layout, checksum: checksum)
            }
            return
        }
        // Into a folder not seen yet, servers say "no such folder" with 409 (Apache), 404 (rclone) or 500 (nginx):
        // those come back at once to be answered by making the folder, not retried with backoff first.
        var put = request("PUT", try url(path, folder: false), body: source.body)
        if let checksum { put.headers["OC-Checksum"] = "SHA1:" + checksum }
        if create { put.headers["If-None-Match"] = "*" }
        var first = put
        if !folders.contains(parentComponents) { first.finalStatuses = WebDAVAnswer.parentMissingStatuses }
        var response = try await send(first)
        if WebDAVAnswer.put(response) == .parentMissing {
            // The parent is missing, or vanished since it was known: make it (the remote's own folder too), once.
            forgetFolders(under: parent)
            if parentComponents.isEmpty { try await makeRootCollection() } else { try await makeFolder(parent) }
            response = try await send(put)
        }
        do {
            try await finishPut(response, path: path, parent: parent)
        } catch CloudFileSystemError.alreadyExists where create {
            // Refused by the condition: another writer's file, or this PUT's own first attempt, whose answer was lost.
            try await settleRefusedCreate(path, source: source)
        }
    }

    /// A Nextcloud's proxy refused a body smaller than the chunk size (413): the file goes in chunks smaller than
    /// that body, and than any chunk before. (A body small enough for one PUT is no larger than the smallest chunk,
    /// so its 413 stays the error that names the body limit.)
    private func uploadInChunksAfterBodyLimit(
        _ source: UploadSource, to path: String, layout: NextcloudLayout, checksum: String
    ) async throws {
        let limit = max(Self.smallestChunk, min(nextcloudChunkSize.load(ordering: .relaxed), source.size / 2))
        nextcloudChunkSize.store(limit, ordering: .relaxed)
        try await uploadInChunks(source, to: path, layout: layout, checksum: checksum)
    }

    /// A large body goes to a temporary name and is moved over the file: some servers (rclone serve webdav) write a
    /// PUT straight into place, so an upload cut short would leave part of a file, or part of the new one over the
    /// old, where readers look. A failed upload's temporary is removed; a killed one's, by a later process
    /// (`temporaryUploadPath`).
    private func putThroughTemporary(
        _ body: HTTPRequestBody, to path: String, parent: String, checksum: String?
    ) async throws {
        let temporary = try await temporaryUploadPath(for: path)
        do {
            var put = request("PUT", try url(temporary, folder: false), body: body)
            if let checksum { put.headers["OC-Checksum"] = "SHA1:" + checksum }
            try await finishPut(try await send(put), path: path, parent: parent)
            var move = request("MOVE", try url(temporary, folder: false))
            move.headers["Destination"] = try url(path, folder: false).absoluteString
            move.headers["Overwrite"] = "T"
            // Safe to repeat: the temporary's name is this upload's alone, and a MOVE sent again after one that was
            // done but whose answer was lost finds no temporary (404), which is recognised below as done.
            move.isSafeToRepeat = true
            let response = try await send(move)
            switch WebDAVAnswer.move(response) {
            case .moved: break
            case .sourceGone:
                // Moved, and the answer was lost; or the temporary went some other way.
                guard try await exists(path), try await !exists(temporary) else { throw failure(response, path) }
            case .failed: throw failure(response, path)
            }
        } catch {
            _ = try? await send(request("DELETE", try url(temporary, folder: false)))
            throw error
        }
    }

    private func finishPut(_ response: HTTPResponse, path: String, parent: String) async throws {
        switch WebDAVAnswer.finishedPut(response) {
        case .stored:
            remember(parent)  // the file landed, so its folder exists
        case .refused:
            if (try? await metadata(path))?.isFolder == true {
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            }
            throw failure(response, path)
        case .somethingThere:
            throw CloudFileSystemError.alreadyExists(path: path)
        case .parentMissing, .failed:
            throw failure(response, path)
        }
    }

    /// A GET's answer checked: a folder's URL answered with a redirect, 403 or 405, or (rclone) with an HTML listing,
    /// is `wrongKind`, not a file.
    private func checkedGet(_ response: HTTPResponse, path: String) async throws {
        if !response.isSuccess {
            if WebDAVAnswer.mayBeAFolder(response), (try? await metadata(path))?.isFolder == true {
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            }
            throw failure(response, path)
        }
        if response.headers["Content-Type"]?.lowercased().hasPrefix("text/html") == true,
            (try? await metadata(path))?.isFolder == true
        {
            throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
        }
    }

    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await client.download(request("GET", try url(path, folder: false)), to: destination, path: path) {
            try await self.checkedGet($0, path: path)
        }
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await client.read(request("GET", try url(path, folder: false)), range: range, path: path) {
            try await self.checkedGet($0, path: path)
        }
    }

    /// A DELETE of a folder takes everything in it, so what is there is looked at first; nothing there is fine.
    public func remove(_ path: String, folder: Bool) async throws {
        guard let item = try? await metadata(path) else { return }
        guard item.isFolder == folder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: folder) }
        let response = try await send(request("DELETE", try url(path, folder: folder)))
        switch WebDAVAnswer.delete(response) {
        case .removed: break
        case .partly: throw CloudFileSystemError.server(status: 207, message: "the server removed only part of \(path)")
        case .failed: throw failure(response, path)
        }
        if folder { forgetFolders(under: path) }
    }

    private func forgetFolders(under path: String) {
        guard let components = try? CloudPath.components(path) else { return }
        folders.forget(components)
    }
}
