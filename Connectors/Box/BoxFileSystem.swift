import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP

/// A `CloudFileSystem` over Box API 2.0 (docs/services/box.md). Items are IDs (root "0") resolved through the
/// shared ID path cache; names are unique in a folder without regard to case, as Box's are. Small files go up as
/// multipart (attributes, then the file, streamed) to the upload host, as a new file or a new version; from 20 MB
/// through chunked upload sessions; Box's SHA-1 of every upload is checked against the data sent. Downloads follow
/// Box's 302 to its download host without the token.
public final class BoxFileSystem: RemovesByKind {
    public let configuration: BoxConfiguration
    let client: ServiceClient
    let paths: IDPathCache<BoxDirectory>
    /// Box refuses `\` (and `/`) in a name and a trailing space.
    public static let nameEncoding = NameEncoding(forbidden: ["\\"], trailingSpace: true)

    /// `authorizer` is normally an `OAuthTokenSource` over the remote's token file.
    public init(
        configuration: BoxConfiguration = BoxConfiguration(), http: HTTPClient = HTTPClient(),
        authorizer: (any HTTPAuthorizer)?
    ) {
        self.configuration = configuration
        client = ServiceClient(http: http, authorizer: authorizer, classifier: BoxClassifier())
        paths = IDPathCache(BoxDirectory(client: client, configuration: configuration), caseInsensitive: true)
    }

    public var capabilities: CloudCapabilities {
        var capabilities = CloudCapabilities(
            checksums: [.sha1], caseInsensitiveNames: true, nameEncoding: Self.nameEncoding,
            simpleUploadLimit: configuration.chunkedUploadMinimum - 1)
        // A new file's upload is refused (409) where the name is taken.
        capabilities.exclusiveCreate = true
        return capabilities
    }

    /// The path's components as Box stores them.
    func components(_ path: String) throws -> [String] {
        try CloudPath.components(path).map(Self.nameEncoding.encode)
    }

    private func find(_ components: [String]) async throws -> BoxItem? {
        components.isEmpty ? BoxItem(type: "folder", id: "0", name: "") : try await paths.find(components)
    }

    // MARK: CloudFileSystem: reading

    public func exists(_ path: String) async throws -> Bool {
        try await find(try components(path)) != nil
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        guard let found = try await find(try components(path)) else { throw CloudFileSystemError.notFound(path: path) }
        return found.item(Self.nameEncoding)
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        try await children(folder).map { $0.item(Self.nameEncoding) }
    }

    public func listNames(_ folder: String) async throws -> [String] {
        do {
            return try await children(folder).map { Self.nameEncoding.decode($0.name) }
        } catch CloudFileSystemError.notFound {
            return []
        }
    }

    /// A folder's items, from one listing that the ID cache keeps.
    private func children(_ folder: String) async throws -> [BoxItem] {
        try await paths.children(of: try self.components(folder), path: folder)
    }

    /// `GET /files/{id}/content` answers 302 to the download host (followed without the token by the shared
    /// client) or 202 + Retry-After while the file is not ready (waited out as a refusal).
    private func content(_ id: String) throws -> HTTPRequest {
        HTTPRequest(url: try configuration.api("/files/\(URLEscaping.escape(id))/content"))
    }

    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await paths.withFileID(try components(path)) {
            try await client.download(try content($0), to: destination, path: path)
        }
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await paths.withFileID(try components(path)) {
            try await client.read(try content($0), range: range, path: path)
        }
    }

    // MARK: CloudFileSystem: writing

    public func makeFolder(_ path: String) async throws {
        _ = try await paths.folderID(try components(path), creating: true)
    }

    /// A new file, or a new version of the one there (found in the cache, or by a preflight that costs one small
    /// request instead of listing the folder); then Box's size and SHA-1 are checked against the source. A small file
    /// goes up without a preflight: should the name be taken, Box's 409 names the file and it goes up again as a new
    /// version, which costs less than asking first every time (a sync's version files are nearly always new).
    /// Files are sent as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        let components = try self.components(path)
        let (parent, name) = try CloudPath.folderAndName(components, of: path)
        let create = mode == .create
        // A create sends a new file, which Box refuses (409) where the name is taken; a large one looks first.
        if create, source.size >= configuration.chunkedUploadMinimum { try await refuseExisting(path, mode: mode) }
        try await paths.intoFolder(parent, for: path) { folderID in
            var existing = paths.cached(components).flatMap { $0.isFolder ? nil : $0.id }
            if existing == nil, source.size >= configuration.preflightMinimum {
                existing = try await preflight(name, in: folderID, size: source.size, path: path)
            }
            if create, existing != nil { return try await settleRefusedCreate(path, source: source) }
            let stored: BoxItem
            do {
                stored = try await send(
                    source, name: name, folderID: folderID, existing: existing, path: path, create: create)
            } catch CloudFileSystemError.alreadyExists where create {
                return try await settleRefusedCreate(path, source: source)
            } catch CloudFileSystemError.notFound where existing != nil {
                // The cached file went: upload it as new.
                paths.forget(components)
                stored = try await send(
                    source, name: name, folderID: folderID,
                    existing: try await preflight(name, in: folderID, size: source.size, path: path), path: path)
            }
            try source.verify(
                storedSize: stored.size, checksums: stored.sha1.map { [.sha1: $0] } ?? [:], service: "Box", path: path)
            paths.remember(components, stored)
        }
    }

    /// `OPTIONS /files/content`: nil when the name is free, the file's ID when one holds it; a folder holding it
    /// is the wrong kind.
    private func preflight(_ name: String, in folderID: String, size: Int64, path: String) async throws -> String? {
        let request = ServiceClient.jsonRequest(
            "OPTIONS", try configuration.api("/files/content"),
            BoxPlacement(name: name, parent: .init(id: folderID), size: size), safeToRepeat: true)
        let response = try await client.send(request)
        if response.isSuccess { return nil }
        return try conflictingFile(response, path: path)
    }

    /// The file a 409 `item_name_in_use` names; any other answer is the classifier's error.
    private func conflictingFile(_ response: HTTPResponse, path: String) throws -> String {
        let error = client.classifier.failure(response, path: path)
        guard case .alreadyExists = error, let conflict = BoxErrorBody(response).conflicts.first else { throw error }
        guard !conflict.isFolder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        return conflict.id
    }

    private func send(
        _ source: UploadSource, name: String, folderID: String, existing: String?, path: String, create: Bool = false
    ) async throws -> BoxItem {
        guard source.size < configuration.chunkedUploadMinimum else {
            let create =
                try existing.map { try configuration.upload("/files/\(URLEscaping.escape($0))/upload_sessions") }
                ?? configuration.upload("/files/upload_sessions")
            let session = BoxUploadSession(
                client: client, configuration: configuration, create: create,
                folderID: existing == nil ? folderID : nil,
                name: name, fileSHA1: ChecksumAlgorithm.base64(hex: try source.checksum(.sha1)) ?? "", path: path)
            return try await ResumableUploader(chunkSize: 8 * 1024 * 1024, policy: client.retryPolicy).upload(
                source, with: session, path: path)
        }
        // Attributes first, then the file, streamed by libcurl; Box refuses the other order. A new version sends no
        // attributes: a name there would rename the file (to another case of the same name, say).
        var form: [FormPart] = [source.formPart(name: "file", filename: name)]
        if existing == nil {
            let attributes = try JSONEncoder().encode(BoxPlacement(name: name, parent: .init(id: folderID)))
            form.insert(
                FormPart(name: "attributes", filename: nil, contentType: nil, content: .data(attributes)), at: 0)
        }
        let target =
            try existing.map {
                try configuration.upload("/files/\(URLEscaping.escape($0))/content", [("fields", BoxItem.fields)])
            }
            ?? configuration.upload("/files/content", [("fields", BoxItem.fields)])
        // Safe to repeat: a new file sent again meets itself as a 409 and goes up as a version; a version sent again
        // is the same contents once more.
        let response = try await client.send(
            HTTPRequest(method: "POST", url: target, body: .form(form), isSafeToRepeat: true))
        if existing == nil, case .alreadyExists = client.failure(of: response, path: path) {
            if create { throw CloudFileSystemError.alreadyExists(path: path) }
            return try await send(
                source, name: name, folderID: folderID, existing: try conflictingFile(response, path: path), path: path)
        }
        guard let file = try client.decode(BoxFiles.self, response, path: path).entries.first else {
            throw CloudFileSystemError.server(
                status: response.status, message: "Box's answer to the upload of \(path) names no file")
        }
        return file
    }

    // MARK: CloudFileSystem: removing

    /// To the trash: a file, or a folder with everything in it (`recursive=true`). Something already gone is fine.
    public func remove(_ path: String, folder: Bool) async throws {
        let components = try self.components(path)
        guard let found = try await find(components) else { return }
        guard found.isFolder == folder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: folder) }
        let url =
            folder
            ? try configuration.api("/folders/\(URLEscaping.escape(found.id))", [("recursive", "true")])
            : try configuration.api("/files/\(URLEscaping.escape(found.id))")
        try await client.remove(HTTPRequest(method: "DELETE", url: url), path: path)
        paths.forget(components)
    }
}
