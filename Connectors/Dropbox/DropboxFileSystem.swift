import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import Synchronization

/// A `CloudFileSystem` over Dropbox API v2 (docs/services/dropbox.md). Items are addressed by path (`/a/b`, the root
/// `""`), names compare without regard to case as Dropbox's do, and a file's parents are made by Dropbox itself when
/// it is written. Small files go up in one `files/upload`, larger ones through an upload session; every upload carries
/// the data's `content_hash`, which Dropbox checks against what it received, and the hash it answers is checked
/// against ours. Retries, pacing and the resumable engine are the shared layer's.
public final class DropboxFileSystem: RemovesByKind {
    public let configuration: DropboxConfiguration
    let api: DropboxAPI
    var client: ServiceClient { api.client }
    /// Dropbox refuses `\` (and `/`) in a name and a trailing space.
    public static let nameEncoding = NameEncoding(forbidden: ["\\"], trailingSpace: true)
    /// When the notify host asked for a pause (`backoff`) before the next long poll.
    let pollNotBefore = Mutex<ContinuousClock.Instant?>(nil)

    /// `authorizer` is normally an `OAuthTokenSource` over the remote's token file.
    public init(
        configuration: DropboxConfiguration = DropboxConfiguration(), http: HTTPClient = HTTPClient(),
        authorizer: (any HTTPAuthorizer)?
    ) {
        self.configuration = configuration
        api = DropboxAPI(
            client: ServiceClient(http: http, authorizer: authorizer, classifier: DropboxClassifier()),
            configuration: configuration)
    }

    public var capabilities: CloudCapabilities {
        var capabilities = CloudCapabilities(
            checksums: [.dropboxContentHash], caseInsensitiveNames: true, nameEncoding: Self.nameEncoding,
            simpleUploadLimit: configuration.simpleUploadLimit, chunkGranularity: DropboxConfiguration.blockSize)
        capabilities.exclusiveCreate = true
        return capabilities
    }

    /// The path as Dropbox names it: `""` for the root, else `/` and the encoded components.
    func dropboxPath(_ path: String) throws -> String {
        let components = try CloudPath.components(path).map(Self.nameEncoding.encode)
        return components.isEmpty ? "" : "/" + components.joined(separator: "/")
    }

    /// The item at `path`, nil when nothing is there. Dropbox has no metadata for the root: it is a folder.
    func item(_ path: String) async throws -> DropboxItem? {
        let target = try dropboxPath(path)
        if target.isEmpty { return DropboxItem(tag: "folder", name: "", path_lower: "") }
        let request = try api.rpc(
            "files/get_metadata", DropboxPathArgument(path: target), changes: false, safeToRepeat: true)
        guard let response = try await client.answerIfPresent(request, path: path) else { return nil }
        return try client.decode(DropboxItem.self, response, path: path)
    }

    // MARK: CloudFileSystem: reading

    public func exists(_ path: String) async throws -> Bool {
        try await item(path) != nil
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        guard let found = try await item(path) else { throw CloudFileSystemError.notFound(path: path) }
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

    private struct ListArgument: Encodable {
        var path: String
        var recursive = false
        var include_deleted = false
        var limit: Int
    }

    private struct ContinueArgument: Encodable { var cursor: String }

    /// Every item directly in a folder, page after page (`list_folder`, then `continue` while `has_more`). A cursor
    /// Dropbox lets go of mid-listing (`reset`) starts the listing over, a few times at most.
    private func children(_ folder: String) async throws -> [DropboxItem] {
        var resets = 0
        while true {
            do {
                return try await listing(folder)
            } catch ListingReset.reset where resets < 3 {
                resets += 1
            }
        }
    }

    private enum ListingReset: Error { case reset }

    private func listing(_ folder: String) async throws -> [DropboxItem] {
        var page = try await api.call(
            DropboxListPage.self, "files/list_folder",
            ListArgument(path: try dropboxPath(folder), limit: configuration.pageSize), changes: false,
            safeToRepeat: true, path: folder)
        var items = page.entries.filter { !$0.isDeleted }
        var pages = PageTokens(
            "Dropbox's listing of \(folder.isEmpty ? "the root" : folder)", maximumPages: configuration.maximumPages)
        while let cursor = try pages.next(page.has_more ? page.cursor : nil, items: page.entries.count) {
            let response = try await client.send(
                try api.rpc(
                    "files/list_folder/continue", ContinueArgument(cursor: cursor), changes: false, safeToRepeat: true))
            if response.status == 409, DropboxErrorBody(response).tags.first == "reset" { throw ListingReset.reset }
            page = try client.decode(DropboxListPage.self, response, path: folder)
            items += page.entries.filter { !$0.isDeleted }
        }
        return items
    }

    private func downloadRequest(_ path: String) throws -> HTTPRequest {
        try api.content(
            "files/download", DropboxPathArgument(path: try dropboxPath(path)), changes: false, safeToRepeat: true)
    }

    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await client.download(try downloadRequest(path), to: destination, path: path)
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await client.read(try downloadRequest(path), range: range, path: path)
    }

    // MARK: CloudFileSystem: writing

    private struct FolderArgument: Encodable {
        var path: String
        var autorename = false
    }

    /// `create_folder_v2` makes the missing folders above too. A folder already there is fine (a repeat after a lost
    /// answer meets its own folder); a file there is the wrong kind.
    public func makeFolder(_ path: String) async throws {
        let target = try dropboxPath(path)
        guard !target.isEmpty else { return }
        let request = try api.rpc(
            "files/create_folder_v2", FolderArgument(path: target), changes: true, safeToRepeat: true)
        let response = try await client.send(request)
        guard let failure = client.failure(of: response, path: path) else { return }
        guard case .alreadyExists = failure else { throw failure }
        guard let found = try await item(path) else { throw failure }
        guard found.isFolder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: true) }
    }

    /// Files are sent as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    /// `CommitInfo`: overwrite whatever file is at the path (so a repeat stores the same bytes again), never rename,
    /// and leave the user's desktop clients quiet about it.
    struct Commit: Encodable {
        var path: String
        var mode = "overwrite"
        var autorename = false
        var mute = true
        var strict_conflict = false
    }

    private struct UploadArgument: Encodable {
        var path: String
        var mode = "overwrite"
        var autorename = false
        var mute = true
        var strict_conflict = false
        var content_hash: String
    }

    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        let target = try dropboxPath(path)
        guard !target.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        let hash = try source.checksum(.dropboxContentHash)
        let create = mode == .create
        // A large create looks first; a small one is refused by Dropbox itself (`add` mode, no renaming).
        if create, source.size > configuration.simpleUploadLimit { try await refuseExisting(path, mode: mode) }
        let stored: DropboxItem
        do {
            stored = try await send(source, to: target, hash: hash, path: path, create: create)
        } catch CloudFileSystemError.alreadyExists {
            // A folder holds the name, or a file holds a name above it; or, for a create, a file is there: taken as
            // done when it holds our bytes (a first attempt whose answer was lost).
            if create { return try await settleRefusedCreate(path, source: source) }
            throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
        }
        guard !stored.isFolder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        if let size = stored.size, size != source.size {
            throw CloudFileSystemError.server(
                status: 200, message: "Dropbox stored \(size) bytes for \(path), not the \(source.size) sent")
        }
        guard let reported = stored.content_hash, ChecksumAlgorithm.dropboxContentHash.matches(reported, hash) else {
            throw CloudFileSystemError.server(
                status: 200, message: "Dropbox's content hash of \(path) does not match the data sent")
        }
    }

    private func send(
        _ source: UploadSource, to target: String, hash: String, path: String, create: Bool
    ) async throws
        -> DropboxItem
    {
        guard source.size > configuration.simpleUploadLimit else {
            // Overwriting with the same bytes is idempotent, so the shared policy may repeat it; a create repeated
            // meets its own file, which `upload` takes as done.
            var argument = UploadArgument(path: target, content_hash: hash)
            if create { argument.mode = "add" }
            let request = try api.content(
                "files/upload", argument, body: source.body, changes: true, safeToRepeat: true)
            return try await client.json(DropboxItem.self, request, path: path)
        }
        let uploader = ResumableUploader(
            chunkSize: configuration.chunkSize, granularity: DropboxConfiguration.blockSize,
            policy: client.retryPolicy)
        let session = DropboxUploadSession(api: api, commit: Commit(path: target), contentHash: hash, path: path)
        return try await uploader.upload(source, with: session, path: path)
    }

    // MARK: CloudFileSystem: removing

    /// Looks first (a delete of a folder takes everything in it, so the kind must be the one asked), then
    /// `delete_v2`. Something already gone is fine.
    public func remove(_ path: String, folder: Bool) async throws {
        guard let found = try await item(path) else { return }
        guard found.isFolder == folder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: folder) }
        let request = try api.rpc(
            "files/delete_v2", DropboxPathArgument(path: try dropboxPath(path)), changes: true, safeToRepeat: true)
        try await client.remove(request, path: path)
    }
}
