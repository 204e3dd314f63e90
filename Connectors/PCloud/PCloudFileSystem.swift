import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP

/// A `CloudFileSystem` over pCloud's HTTP JSON API (docs/services/pcloud.md). Every answer is HTTP 200 with a
/// `result` code, checked on every call; items are IDs (root folder 0) resolved through the shared ID path cache;
/// names are case-sensitive. Files go up with `uploadfile` (a PUT of the raw bytes, overwriting in place) or, when
/// large, an upload session; downloads go through `getfilelink` to content hosts that never get the token. What
/// pCloud stored is checked against what was sent by its own SHA-1 (and MD5 or SHA-256, by region).
public final class PCloudFileSystem: RemovesByKind {
    public let configuration: PCloudConfiguration
    let api: PCloudAPI
    /// For the content hosts: the same connections and pacer, no token, answers read by status alone.
    let content: ServiceClient
    let paths: IDPathCache<PCloudDirectory>

    /// `authorizer` is normally an `OAuthTokenSource` over the remote's token file.
    public init(
        configuration: PCloudConfiguration = PCloudConfiguration(), http: HTTPClient = HTTPClient(),
        authorizer: (any HTTPAuthorizer)?
    ) {
        self.configuration = configuration
        let classifier = PCloudClassifier(reauthorizeCommand: (authorizer as? OAuthTokenSource)?.reauthorizeCommand)
        let client = ServiceClient(http: http, authorizer: authorizer, classifier: classifier)
        api = PCloudAPI(client: client, classifier: classifier, configuration: configuration)
        content = ServiceClient(http: http, authorizer: nil, classifier: PCloudContentClassifier(), pacer: client.pacer)
        paths = IDPathCache(PCloudDirectory(api: api))
    }

    public var capabilities: CloudCapabilities {
        CloudCapabilities(checksums: [.sha1], simpleUploadLimit: configuration.simpleUploadLimit)
    }

    private func find(_ components: [String]) async throws -> PCloudItem? {
        components.isEmpty ? PCloudItem(name: "", isfolder: true, folderid: 0) : try await paths.find(components)
    }

    // MARK: CloudFileSystem: reading

    public func exists(_ path: String) async throws -> Bool {
        try await find(try CloudPath.components(path)) != nil
    }

    /// A file's metadata comes from `checksumfile`, which adds its SHA-1 to what a listing says: by its ID when
    /// known, else by path, one request either way; only when no file is there is the parent listed, to tell a
    /// folder from nothing.
    public func metadata(_ path: String) async throws -> CloudItem {
        let components = try CloudPath.components(path)
        if !components.isEmpty {
            let file =
                paths.cached(components).flatMap { $0.isFolder ? nil : ("fileid", $0.id) } ?? (
                    "path", "/" + components.joined(separator: "/")
                )
            do {
                let answer = try await api.call(PCloudAnswer.Checksummed.self, "checksumfile", [file], path: path)
                return answer.metadata.item(checksums: answer.checksums.byAlgorithm)
            } catch CloudFileSystemError.notFound {
                paths.forget(components)
            }
        }
        guard let found = try await find(components), found.isFolder else {
            throw CloudFileSystemError.notFound(path: path)
        }
        return found.item()
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        try await children(folder).map { $0.item() }
    }

    public func listNames(_ folder: String) async throws -> [String] {
        do {
            return try await children(folder).map(\.name)
        } catch CloudFileSystemError.notFound {
            return []
        }
    }

    /// A folder's items, from one listing that the ID cache keeps.
    private func children(_ folder: String) async throws -> [PCloudItem] {
        try await paths.children(of: try CloudPath.components(folder), path: folder)
    }

    /// Runs `body` on a download URL of the file: each host of a link in pCloud's order, then a new link when the
    /// host refuses the link (it expired) or every host failed. The token is never sent to a content host.
    /// A file whose ID is not known is asked for by path (`getfilelink?path=`): one request instead of a listing of
    /// its folder; a known ID that went stale is forgotten and the path used.
    private func withLink<T>(_ path: String, _ body: @escaping (HTTPRequest) async throws -> T) async throws -> T {
        let components = try CloudPath.components(path)
        if let entry = paths.cached(components), !entry.isFolder {
            do {
                return try await withLink(("fileid", entry.id), path: path, body)
            } catch CloudFileSystemError.notFound {
                paths.forget(components)
            }
        }
        do {
            return try await withLink(("path", "/" + components.joined(separator: "/")), path: path, body)
        } catch CloudFileSystemError.notFound {
            if let found = try await find(components), found.isFolder {
                throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
            }
            throw CloudFileSystemError.notFound(path: path)
        }
    }

    private func withLink<T>(
        _ file: (String, String), path: String, _ body: @escaping (HTTPRequest) async throws -> T
    ) async throws -> T {
        var lastError: any Error = CloudFileSystemError.transient("pCloud gave no download host for \(path)")
        for _ in 0..<2 {
            let link = try await api.call(PCloudAnswer.Link.self, "getfilelink", [file], path: path)
            for host in link.hosts.prefix(configuration.maximumHostsPerLink) {
                guard let url = Self.contentURL(host: host, path: link.path, scheme: configuration.apiURL.scheme) else {
                    continue
                }
                var request = HTTPRequest(url: url)
                request.maximumAttempts = 2
                do {
                    return try await body(request)
                } catch let error as CloudFileSystemError {
                    // A stale link (the host refuses it as gone or missing): ask for a new one. It is not the file
                    // that is missing, so it never reaches the caller as `notFound`.
                    if case .notFound = error {
                        lastError = CloudFileSystemError.transient(
                            "pCloud's download host refused the link for \(path) as stale")
                        break
                    }
                    if case .server(let status, _) = error, [403, 410].contains(status) {
                        lastError = CloudFileSystemError.transient(
                            "pCloud's download host refused the link for \(path) as stale (\(status))")
                        break
                    }
                    guard error.isRetryable else { throw error }
                    lastError = error
                }
            }
        }
        throw lastError
    }

    /// `scheme://host/path` for a host pCloud named: a bare name, or a name and port (a mock's).
    static func contentURL(host: String, path: String, scheme: String?) -> URL? {
        guard !host.isEmpty, !host.contains("/"), !host.contains("@"), path.hasPrefix("/") else { return nil }
        return URL(
            string:
                "\(scheme ?? "https")://\(host)\(path.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? path)"
        )
    }

    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await withLink(path) {
            try await self.content.download($0, to: destination, path: path, authorization: .none)
        }
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await withLink(path) { try await self.content.read($0, range: range, path: path, authorization: .none) }
    }

    // MARK: CloudFileSystem: writing

    public func makeFolder(_ path: String) async throws {
        _ = try await paths.folderID(try CloudPath.components(path), creating: true)
    }

    /// Uploads into the parent by ID (made when missing), replacing a file of that name in place, then checks what
    /// pCloud says it stored. A parent removed since it was cached is found or made again, once.
    /// Files are sent as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        let components = try CloudPath.components(path)
        let (parent, name) = try CloudPath.folderAndName(components, of: path)
        // pCloud has no create-only upload (it replaces, or renames with `renameifexists`): a create looks first.
        try await refuseExisting(path, mode: mode)
        do {
            try await paths.intoFolder(parent, for: path) { folderID in
                let (stored, checksums) = try await send(source, name: name, into: folderID, path: path)
                guard !stored.isFolder, stored.name == name else {
                    throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)
                }
                try source.verify(storedSize: stored.size, checksums: checksums, service: "pCloud", path: path)
                paths.remember(components, stored)
            }
        } catch CloudFileSystemError.alreadyExists {
            throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false)  // a folder holds the name
        }
    }

    /// The stored file and its checksums: from `uploadfile`'s own answer, or `checksumfile` after an upload session.
    private func send(
        _ source: UploadSource, name: String, into folderID: String, path: String
    ) async throws -> (PCloudItem, [ChecksumAlgorithm: String]) {
        guard source.size > configuration.simpleUploadLimit else {
            let parameters = [("folderid", folderID), ("filename", name), ("nopartial", "1")]
            // An empty body cannot be PUT (pCloud wants a Content-Length it can use): it goes as a form.
            let answer =
                source.size == 0
                ? try await api.call(
                    PCloudAnswer.Uploaded.self, "uploadfile", parameters,
                    form: [source.formPart(name: "file", filename: name)], path: path)
                : try await api.call(PCloudAnswer.Uploaded.self, "uploadfile", parameters, put: source.body, path: path)
            guard let stored = answer.metadata.first else {
                throw CloudFileSystemError.server(
                    status: 200, message: "pCloud's answer to the upload of \(path) has no metadata")
            }
            return (stored, answer.checksums?.first?.byAlgorithm ?? [:])
        }
        let uploader = ResumableUploader(chunkSize: configuration.chunkSize, policy: api.client.retryPolicy)
        let stored = try await uploader.upload(
            source, with: PCloudUploadSession(api: api, folderID: folderID, name: name, path: path), path: path)
        let answer = try await api.call(
            PCloudAnswer.Checksummed.self, "checksumfile", [("fileid", stored.id)], path: path)
        return (stored, answer.checksums.byAlgorithm)
    }

    // MARK: CloudFileSystem: removing

    /// To the trash: `deletefile`, or `deletefolderrecursive` for a folder and everything in it. Something already
    /// gone is fine.
    public func remove(_ path: String, folder: Bool) async throws {
        let components = try CloudPath.components(path)
        guard let found = try await find(components) else { return }
        guard found.isFolder == folder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: folder) }
        do {
            try await api.call(
                folder ? "deletefolderrecursive" : "deletefile", [(folder ? "folderid" : "fileid", found.id)],
                path: path)
        } catch CloudFileSystemError.notFound {}
        paths.forget(components)
    }
}
