import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// A `CloudFileSystem` over OneDrive through Microsoft Graph v1.0 (docs/services/onedrive.md). Items are
/// addressed by path (`root:/a/b:`), names go through OneDrive's reversible name encoding (its forbidden
/// characters, leading and trailing spaces, trailing dots) and compare without regard to case; downloads and upload
/// sessions live on other hosts and never get the token. Retries, pacing, resumable uploads and known folders are
/// the shared layer's.
public final class OneDriveFileSystem: RemovesByKind {
    public let configuration: OneDriveConfiguration
    let client: ServiceClient
    let folders = KnownFolders(caseInsensitive: true, canonicallyEquivalentNamesCollide: true)
    /// OneDrive's rules: `" * : < > ? / \ |` refused, no leading or trailing space, no trailing dot.
    public static let nameEncoding = NameEncoding(
        forbidden: ["\"", "*", ":", "<", ">", "?", "\\", "|"],
        leadingSpace: true, trailingSpace: true, trailingDot: true)

    /// `authorizer` is normally an `OAuthTokenSource` over the remote's token file.
    public init(
        configuration: OneDriveConfiguration = OneDriveConfiguration(), http: HTTPClient = HTTPClient(),
        authorizer: (any HTTPAuthorizer)?
    ) {
        self.configuration = configuration
        client = ServiceClient(http: http, authorizer: authorizer, classifier: OneDriveClassifier())
    }

    /// OneDrive keeps a name in the normalization it was given but takes a composed and a decomposed spelling for one
    /// name (rclone's issue 8634 shows a rename between the two refused as the same path).
    public var capabilities: CloudCapabilities {
        var capabilities = CloudCapabilities(
            checksums: [.quickXor], caseInsensitiveNames: true, nameEncoding: Self.nameEncoding,
            simpleUploadLimit: configuration.simpleUploadLimit,
            chunkGranularity: OneDriveConfiguration.fragmentGranularity)
        capabilities.canonicallyEquivalentNamesCollide = true
        // `conflictBehavior=fail` refuses a simple upload where the name is taken.
        capabilities.exclusiveCreate = true
        return capabilities
    }

    /// The path's components as OneDrive stores them, refused before any request when the whole path is too long.
    func components(_ path: String) throws -> [String] {
        let stored = try CloudPath.components(path).map(Self.nameEncoding.encode)
        let length = stored.reduce(0) { $0 + $1.count + 1 }
        guard length <= OneDriveConfiguration.maximumPathLength else {
            throw CloudFileSystemError.server(
                status: 400,
                message:
                    "\(path) is \(length) characters as OneDrive stores it; OneDrive refuses paths over \(OneDriveConfiguration.maximumPathLength)"
            )
        }
        return stored
    }

    func item(_ components: [String], path: String) async throws -> OneDriveItem? {
        let request = HTTPRequest(url: try configuration.item(components, "", [("$select", OneDriveItem.select)]))
        guard let response = try await client.answerIfPresent(request, path: path) else { return nil }
        return try client.decode(OneDriveItem.self, response, path: path)
    }

    // MARK: CloudFileSystem: reading

    public func exists(_ path: String) async throws -> Bool {
        try await item(try components(path), path: path) != nil
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        guard let found = try await item(try components(path), path: path) else {
            throw CloudFileSystemError.notFound(path: path)
        }
        return found.item(Self.nameEncoding)
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        guard let items = try await children(folder, select: OneDriveItem.select) else {
            throw CloudFileSystemError.notFound(path: folder)
        }
        return items.map { $0.item(Self.nameEncoding) }
    }

    public func listNames(_ folder: String) async throws -> [String] {
        try await children(folder, select: "id,name,folder")?.map { Self.nameEncoding.decode($0.name) } ?? []
    }

    /// Every child of a folder, page after page; nil when the folder is missing.
    private func children(_ folder: String, select: String) async throws -> [OneDriveItem]? {
        let components = try components(folder)
        let first = try configuration.item(
            components, "children", [("$top", String(configuration.pageSize)), ("$select", select)])
        let pages = try await graphPages(
            from: first, what: "OneDrive's listing of \(folder.isEmpty ? "the root" : folder)"
        ) { (url, isFirst) -> OneDriveItemPage? in
            let response = try await client.send(HTTPRequest(url: url))
            if isFirst, let failure = client.failure(of: response, path: folder) {
                if case .notFound = failure { return nil }
                // Graph refuses the children of a file (400): say what is there instead.
                if let found = try await item(components, path: folder), !found.isFolder {
                    throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true)
                }
            }
            return try client.decode(OneDriveItemPage.self, response, path: folder)
        }
        guard let pages else { return nil }
        folders.remember(components)
        return pages.flatMap { $0.value }
    }

    /// A request for a file's contents, which answer a 302 to a pre-authenticated host (the shared client follows
    /// it without the token). OneDrive answers 400 for the contents of a folder: that is the wrong kind.
    private func withContent<T>(_ path: String, _ body: (HTTPRequest) async throws -> T) async throws -> T {
        let components = try components(path)
        do {
            return try await body(HTTPRequest(url: try configuration.item(components, "content")))
        } catch let error as CloudFileSystemError {
            if case .server(400, _) = error, (try? await item(components, path: path))?.isFolder == true {
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            }
            throw error
        }
    }

    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await withContent(path) { try await client.download($0, to: destination, path: path) }
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await withContent(path) { try await client.read($0, range: range, path: path) }
    }

    // MARK: CloudFileSystem: writing

    public func makeFolder(_ path: String) async throws {
        try await folders.ensure(try components(path), make: makeOneFolder)
    }

    /// Makes the last folder of `prefix`, whose parent exists: `fail` on a conflict, then the existing item used when
    /// it is a folder.
    @Sendable private func makeOneFolder(_ prefix: [String]) async throws {
        let shown = prefix.map(Self.nameEncoding.decode).joined(separator: "/")
        struct Folder: Encodable {
            var name: String
            var folder: [String: String] = [:]
            var behavior = "fail"
            enum CodingKeys: String, CodingKey { case name, folder, behavior = "@microsoft.graph.conflictBehavior" }
        }
        let request = ServiceClient.jsonRequest(
            "POST", try configuration.item(Array(prefix.dropLast()), "children"),
            Folder(name: prefix[prefix.count - 1]), safeToRepeat: true)
        let response = try await client.send(request)
        if response.isSuccess { return }
        let error = client.classifier.failure(response, path: shown)
        guard case .alreadyExists = error else { throw error }
        guard let existing = try await item(prefix, path: shown) else { throw error }
        guard existing.isFolder else { throw CloudFileSystemError.wrongKind(path: shown, expectedFolder: true) }
    }

    /// Files are sent as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        let components = try components(path)
        guard !components.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        let parent = Array(components.dropLast())
        let create = mode == .create
        // A large create looks first; a small one is refused by OneDrive itself (conflictBehavior=fail).
        if create, source.size > configuration.simpleUploadLimit { try await refuseExisting(path, mode: mode) }
        let stored: OneDriveItem
        do {
            stored = try await folders.intoFolder(parent, make: makeOneFolder) {
                try await send(source, to: components, path: path, create: create)
            }
        } catch let error as CloudFileSystemError {
            if case .alreadyExists = error {
                if create { return try await settleRefusedCreate(path, source: source) }
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            }
            throw error
        }
        try check(stored, against: source, path: path)
    }

    private func send(
        _ source: UploadSource, to components: [String], path: String, create: Bool
    ) async throws
        -> OneDriveItem
    {
        guard source.size > configuration.simpleUploadLimit else {
            // Replacing a whole file's contents is idempotent, so the shared policy may repeat it; a create repeated
            // meets its own file, which `upload` takes as done.
            let request = HTTPRequest(
                method: "PUT",
                url: try configuration.item(
                    components, "content", create ? [("@microsoft.graph.conflictBehavior", "fail")] : []),
                headers: ["Content-Type": "application/octet-stream"], body: source.body, isSafeToRepeat: true)
            return try await client.json(OneDriveItem.self, request, path: path)
        }
        let uploader = ResumableUploader(
            chunkSize: configuration.fragmentSize, granularity: OneDriveConfiguration.fragmentGranularity,
            policy: client.retryPolicy)
        let session = OneDriveUploadSession(
            client: client, create: try configuration.item(components, "createUploadSession"), path: path)
        return try await uploader.upload(source, with: session, path: path)
    }

    /// OneDrive's own account of what it stored must match what was sent: the size, the QuickXorHash every drive
    /// type reports, and the SHA-1 a personal drive reports too.
    private func check(_ item: OneDriveItem, against source: UploadSource, path: String) throws {
        try source.verify(
            storedSize: item.size,
            checksums: item.item(Self.nameEncoding).checksums.filter { [.quickXor, .sha1].contains($0.key) },
            service: "OneDrive", path: path)
    }

    // MARK: CloudFileSystem: removing

    /// Looks first (a DELETE of a folder takes everything in it), then deletes to the recycle bin.
    public func remove(_ path: String, folder: Bool) async throws {
        let components = try components(path)
        guard let found = try await item(components, path: path) else { return }
        guard found.isFolder == folder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: folder) }
        try await client.remove(HTTPRequest(method: "DELETE", url: try configuration.item(components)), path: path)
        if folder { folders.forget(components) }
    }
}
