import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// A `CloudFileSystem` over the Google Drive API v3 as the real service behaves (docs/services/google-drive.md).
/// Drive names files by ID, not by path, and lets one folder hold several items of the same name: paths go through
/// the shared ID path cache with a deterministic choice among duplicates (the oldest, then the lowest ID).
/// Requests, retries, pacing, creations that must not land twice and resumable uploads are the shared layer's;
/// this file says only what Drive's requests and answers are.
public final class GoogleDriveFileSystem: RemovesByKind {
    public let configuration: GoogleDriveConfiguration
    let client: ServiceClient
    let paths: IDPathCache<GoogleDriveDirectory>

    /// `authorizer` is normally an `OAuthTokenSource` over the remote's token file; `pacer` spaces every request
    /// of this remote (a test gives one on its own clock).
    public init(
        configuration: GoogleDriveConfiguration = GoogleDriveConfiguration(), http: HTTPClient = HTTPClient(),
        authorizer: (any HTTPAuthorizer)?, pacer: RequestPacer = RequestPacer()
    ) {
        self.configuration = configuration
        client = ServiceClient(http: http, authorizer: authorizer, classifier: GoogleDriveClassifier(), pacer: pacer)
        paths = IDPathCache(GoogleDriveDirectory(client: client, configuration: configuration))
    }

    public var capabilities: CloudCapabilities {
        CloudCapabilities(
            checksums: [.md5], simpleUploadLimit: Int64(configuration.multipartLimit),
            chunkGranularity: Int64(GoogleDriveConfiguration.chunkGranularity))
    }

    static let rootItem = GoogleDriveItem(id: "", name: "", mimeType: GoogleDriveConfiguration.folderMimeType)

    func find(_ path: String) async throws -> GoogleDriveItem? {
        let components = try CloudPath.components(path)
        return components.isEmpty ? Self.rootItem : try await paths.find(components)
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
        guard let id = try await paths.folderID(components, creating: false) else {
            throw CloudFileSystemError.notFound(path: folder)
        }
        return try await children(of: id, at: components, fields: GoogleDriveItem.fields).map(\.item)
    }

    /// Names only, with the few fields the ID cache needs: smaller pages than a full listing.
    public func listNames(_ folder: String) async throws -> [String] {
        let components = try CloudPath.components(folder)
        guard let id = try await paths.folderID(components, creating: false) else { return [] }
        return try await children(of: id, at: components, fields: GoogleDriveItem.nameFields).map(\.name)
    }

    /// A folder's items, one per name (the chosen one among duplicates), each remembered by path.
    private func children(of id: String, at components: [String], fields: String) async throws -> [GoogleDriveItem] {
        let files = try await paths.directory.query(
            GoogleDriveQuery.children(of: id), path: components.joined(separator: "/"), fields: fields)
        // Grouped by the name's bytes: `String` keys would take a composed and a decomposed spelling for one name.
        return Dictionary(grouping: files, by: { GoogleDriveDirectory.names.key(CollectionOfOne($0.name)) }).values
            .compactMap { duplicates in
                guard let file = GoogleDriveItem.chosen(duplicates) else { return nil }
                paths.remember(components + [file.name], file)
                return file
            }
    }

    private func media(_ id: String) throws -> HTTPRequest {
        HTTPRequest(url: try configuration.file(id, [("alt", "media")]))
    }

    /// The shared client removes a partial file when a download fails.
    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await paths.withFileID(try CloudPath.components(path)) {
            try await client.download(try media($0), to: destination, path: path)
        }
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await paths.withFileID(try CloudPath.components(path)) {
            try await client.read(try media($0), range: range, path: path)
        }
    }

    // MARK: CloudFileSystem: writing

    public func makeFolder(_ path: String) async throws {
        _ = try await paths.folderID(try CloudPath.components(path), creating: true)
    }

    /// Files are sent as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    /// Creates the file, or replaces the contents of the one there by its ID (never delete and re-create, which
    /// is not atomic), then checks that Drive holds the bytes sent. A `.newName` is created without looking for a
    /// file to replace: Drive would need a query for it, and a version's two files are always new.
    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        let components = try CloudPath.components(path)
        let (parent, name) = try CloudPath.folderAndName(components, of: path)
        try await paths.intoFolder(parent, for: path) { parentID in
            let existing =
                mode == .newName ? [] : try await paths.directory.items(named: name, in: parentID, path: path)
            let target = GoogleDriveItem.chosen(existing.filter { !$0.isFolder })
            if target == nil, !existing.isEmpty {
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            }
            // Drive has no create-only request (it keeps two files of one name): a create looks, as here.
            if mode == .create, target != nil { return try await settleRefusedCreate(path, source: source) }
            let file =
                if let target {
                    try await replace(target.id, with: source, path: path)
                } else if mode == .replace, let remembered = try await replaceRemembered(components, source, path) {
                    remembered
                } else {
                    try await create(name, in: parentID, from: source, path: path)
                }
            try check(file, against: source, path: path)
            paths.remember(components, file)
        }
    }

    /// Drive's queries are eventually consistent: one just after this connector made a file may not find it yet, and
    /// creating it again would leave two files of one name. So when a query finds nothing, the ID remembered for the
    /// path is replaced instead; nil when there is none, or its file is gone or was trashed meanwhile.
    private func replaceRemembered(
        _ components: [String], _ source: UploadSource, _ path: String
    ) async throws -> GoogleDriveItem? {
        guard let known = paths.cached(components), !known.isFolder else { return nil }
        do {
            let file = try await replace(known.id, with: source, path: path)
            return file.trashed == true ? nil : file
        } catch CloudFileSystemError.notFound {
            return nil
        }
    }

    private func resumable(
        _ method: String, _ target: URL, _ metadata: GoogleDriveItem.Creation, _ source: UploadSource, path: String
    ) async throws -> GoogleDriveItem {
        let uploader = ResumableUploader(
            chunkSize: Int64(configuration.chunkSize), granularity: Int64(GoogleDriveConfiguration.chunkGranularity),
            policy: client.retryPolicy)
        return try await uploader.upload(
            source,
            with: GoogleDriveUploadSession(
                client: client, method: method, target: target, metadata: metadata, path: path), path: path)
    }

    private func create(
        _ name: String, in parentID: String, from source: UploadSource, path: String
    ) async throws -> GoogleDriveItem {
        let metadata = GoogleDriveItem.Creation(name: name, parents: [parentID])
        guard source.size <= Int64(configuration.multipartLimit) else {
            return try await resumable("POST", try configuration.upload("/files"), metadata, source, path: path)
        }
        let multipart = MultipartRelated(parts: [
            .init(contentType: "application/json; charset=UTF-8", data: try JSONEncoder().encode(metadata)),
            .init(contentType: "application/octet-stream", data: try source.data()),
        ])
        let request = HTTPRequest(
            method: "POST",
            url: try configuration.upload("/files", [("uploadType", "multipart"), ("fields", GoogleDriveItem.fields)]),
            headers: ["Content-Type": multipart.contentType], body: .data(multipart.body), isSafeToRepeat: false)
        return try await client.createOnce(
            request, path: path, decode: { try client.decode(GoogleDriveItem.self, $0, path: path) }
        ) {
            guard
                let landed = GoogleDriveItem.chosen(
                    try await paths.directory.items(named: name, in: parentID, path: path).filter { !$0.isFolder }),
                landed.byteCount == source.size
            else { return nil }
            return landed
        }
    }

    private func replace(_ id: String, with source: UploadSource, path: String) async throws -> GoogleDriveItem {
        guard source.size <= Int64(configuration.multipartLimit) else {
            return try await resumable(
                "PATCH", try configuration.upload("/files/" + URLEscaping.escape(id)), GoogleDriveItem.Creation(),
                source, path: path)
        }
        // Replacing the whole contents is idempotent, so the shared policy may repeat it after a dropped answer.
        let request = HTTPRequest(
            method: "PATCH",
            url: try configuration.upload(
                "/files/" + URLEscaping.escape(id), [("uploadType", "media"), ("fields", GoogleDriveItem.fields)]),
            headers: ["Content-Type": "application/octet-stream"], body: source.body, isSafeToRepeat: true)
        return try await client.json(GoogleDriveItem.self, request, path: path)
    }

    /// Drive's own account of what it stored must match what was sent: the size and the MD5.
    private func check(_ file: GoogleDriveItem, against source: UploadSource, path: String) throws {
        try source.verify(
            storedSize: file.byteCount, checksums: file.md5Checksum.map { [.md5: $0] } ?? [:], service: "Google Drive",
            path: path)
    }

    // MARK: CloudFileSystem: removing

    /// Removes every item of that name and kind (duplicates too, or the next one would take its place). Drive
    /// removes a folder's contents with it.
    public func remove(_ path: String, folder: Bool) async throws {
        let components = try CloudPath.components(path)
        guard let name = components.last else { return }
        let parent: String?
        do {
            parent = try await paths.folderID(Array(components.dropLast()), creating: false)
        } catch CloudFileSystemError.wrongKind { return }
        guard let parent else { return }
        let found = try await paths.directory.items(named: name, in: parent, path: path)
        let matching = found.filter { $0.isFolder == folder }
        if matching.isEmpty, !found.isEmpty { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: folder) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for file in matching { group.addTask { try await self.remove(id: file.id, path: path) } }
            try await group.waitForAll()
        }
        paths.forget(components)
    }

    private struct Trash: Encodable { var trashed = true }

    private func remove(id: String, path: String) async throws {
        let request =
            switch configuration.removal {
            case .trash:
                ServiceClient.jsonRequest(
                    "PATCH", try configuration.file(id, [("fields", "id")]), Trash(), safeToRepeat: true)
            case .delete: HTTPRequest(method: "DELETE", url: try configuration.file(id))
            }
        try await client.remove(request, path: path)
    }
}
