import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP
import Synchronization

/// A `CloudFileSystem` over an S3 bucket (docs/services/s3.md): a path is a key below the remote's prefix, a folder a
/// key prefix ending in `/` (made visible when empty by a zero-byte marker `folder/`, as the S3 consoles and rclone
/// make them). Every request is signed with SigV4 (the payload's SHA-256 signed), and every upload carries its
/// Content-MD5, which S3 checks; an ETag that is an MD5 (a single PUT) or an MD5 of part MD5s (a multipart upload) is
/// checked against the data sent. Files above `simpleUploadLimit` go up as multipart uploads, resumed from the parts
/// the server lists. Retries and pacing are the shared layer's.
public final class S3FileSystem: CloudFileSystem {
    public let configuration: S3Configuration
    let client: ServiceClient

    /// Folder markers this file system has written (or found), so each folder an upload goes into gets one once.
    private let markedFolders = Mutex<Set<String>>([])

    public init(configuration: S3Configuration, http: HTTPClient = HTTPClient(), credentials: SigV4) {
        self.configuration = configuration
        client = ServiceClient(
            http: http, authorizer: credentials, classifier: S3Classifier(bucket: configuration.bucket))
    }

    /// S3 takes any name, but servers that read keys out of XML (moto's listings and batch deletes) lose a trailing
    /// space, so a name's trailing space is stored encoded, as rclone does for several providers.
    public static let nameEncoding = NameEncoding(forbidden: [], trailingSpace: true)

    /// Keys are bytes: case matters.
    public var capabilities: CloudCapabilities {
        var capabilities = CloudCapabilities(
            nameEncoding: Self.nameEncoding, simpleUploadLimit: configuration.simpleUploadLimit, chunkGranularity: 1)
        capabilities.keepsEmptyFolders = configuration.folderMarkers
        // If-None-Match on PutObject (AWS, moto, MinIO), where the server honours it.
        capabilities.exclusiveCreate = configuration.conditionalWrites
        return capabilities
    }

    func key(_ path: String) throws -> String {
        configuration.key(try CloudPath.components(path).map(Self.nameEncoding.encode))
    }

    /// The prefix every key inside a folder starts with (`""` for the bucket's root).
    func folderPrefix(_ path: String) throws -> String {
        let key = try key(path)
        return key.isEmpty ? "" : key + "/"
    }

    // MARK: CloudFileSystem: reading

    /// HEAD of the key: the file's size, time and (where the ETag is one) MD5; nil when no object has that key.
    private func head(_ path: String) async throws -> CloudItem? {
        let key = try key(path)
        guard !key.isEmpty else { return nil }
        var request = HTTPRequest(method: "HEAD", url: try configuration.objectURL(key))
        request.isSafeToRepeat = true
        guard let response = try await client.answerIfPresent(request, path: path) else { return nil }
        let name = try CloudPath.components(path).last ?? ""
        return CloudItem(
            name: name, isFolder: false, size: response.headers["Content-Length"].flatMap { Int64($0) } ?? 0,
            modified: response.headers["Last-Modified"].flatMap(HTTPDate.parse),
            checksums: Self.md5(ofETag: response.headers["ETag"]).map { [.md5: $0] } ?? [:])
    }

    /// The MD5 an ETag is, when it is one (32 hex digits; a multipart ETag has a `-N` and is not).
    static func md5(ofETag etag: String?) -> String? {
        guard let etag else { return nil }
        let bare = bare(etag)
        return bare.count == 32 && bare.allSatisfy(\.isHexDigit) ? bare : nil
    }

    /// An ETag without its quotes, in lower case.
    static func bare(_ etag: String) -> String {
        etag.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")).lowercased()
    }

    /// Whether any key lies under the folder (its marker, or anything inside).
    private func folderExists(_ path: String) async throws -> Bool {
        let prefix = try folderPrefix(path)
        if prefix.isEmpty { return true }
        let page = try await listPage(prefix: prefix, delimiter: nil, token: nil, maximum: 1, path: path)
        return !page.contents.isEmpty || !page.prefixes.isEmpty
    }

    public func exists(_ path: String) async throws -> Bool {
        if try await head(path) != nil { return true }
        return try await folderExists(path)
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        if let file = try await head(path) { return file }
        guard try await folderExists(path) else { throw CloudFileSystemError.notFound(path: path) }
        return CloudItem(name: try CloudPath.components(path).last ?? "", isFolder: true)
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        let prefix = try folderPrefix(folder)
        var items: [CloudItem] = []
        var sawAnything = prefix.isEmpty
        var token: String?
        var pages = PageTokens(
            "S3's listing of \(folder.isEmpty ? "the root" : folder)", maximumPages: configuration.maximumPages)
        repeat {
            let page = try await listPage(
                prefix: prefix, delimiter: "/", token: token, maximum: configuration.pageSize, path: folder)
            sawAnything = sawAnything || !page.contents.isEmpty || !page.prefixes.isEmpty
            for object in page.contents where object.key != prefix {
                items.append(
                    CloudItem(
                        name: Self.nameEncoding.decode(String(object.key.dropFirst(prefix.count))), isFolder: false,
                        size: object.size,
                        modified: object.modified.flatMap(RFC3339Date.parse),
                        checksums: Self.md5(ofETag: object.etag).map { [.md5: $0] } ?? [:]))
            }
            for folderPrefix in page.prefixes {
                let name = String(folderPrefix.dropFirst(prefix.count).dropLast())
                if !name.isEmpty { items.append(CloudItem(name: Self.nameEncoding.decode(name), isFolder: true)) }
            }
            token = try pages.next(page.nextToken, items: page.contents.count + page.prefixes.count)
        } while token != nil
        guard sawAnything else {
            if try await head(folder) != nil {
                throw CloudFileSystemError.wrongKind(path: folder, expectedFolder: true)
            }
            throw CloudFileSystemError.notFound(path: folder)
        }
        return items
    }

    public func listNames(_ folder: String) async throws -> [String] {
        do {
            return try await list(folder).map(\.name)
        } catch CloudFileSystemError.notFound, CloudFileSystemError.wrongKind {
            return []
        }
    }

    struct ListedObject {
        var key: String
        var size: Int64
        var modified: String?
        var etag: String?
    }

    struct ListPage {
        var contents: [ListedObject]
        var prefixes: [String]
        var nextToken: String?
    }

    /// One page of ListObjectsV2.
    func listPage(
        prefix: String, delimiter: String?, token: String?, maximum: Int, path: String
    ) async throws
        -> ListPage
    {
        var query = [("list-type", "2"), ("max-keys", String(maximum)), ("prefix", prefix)]
        if let delimiter { query.append(("delimiter", delimiter)) }
        if let token { query.append(("continuation-token", token)) }
        let response = try await client.checked(HTTPRequest(url: try configuration.bucketURL(query)), path: path)
        let root: S3XMLElement
        do {
            root = try S3XMLElement.parse(response.body)
        } catch {
            throw CloudFileSystemError.server(
                status: response.status, message: "S3's listing of \(path) is not the XML expected: \(error)")
        }
        guard root.name == "ListBucketResult" else {
            throw CloudFileSystemError.server(
                status: response.status, message: "S3's listing of \(path) is a \(root.name), not a ListBucketResult")
        }
        let contents = root.all("Contents").compactMap { entry -> ListedObject? in
            guard let key = entry.value("Key"), key.hasPrefix(prefix) else { return nil }
            return ListedObject(
                key: key, size: entry.value("Size").flatMap { Int64($0) } ?? 0, modified: entry.value("LastModified"),
                etag: entry.value("ETag"))
        }
        let prefixes = root.all("CommonPrefixes").compactMap { $0.value("Prefix") }.filter { $0.hasPrefix(prefix) }
        let truncated = root.value("IsTruncated") == "true"
        return ListPage(
            contents: contents, prefixes: prefixes,
            nextToken: truncated ? root.value("NextContinuationToken").flatMap { $0.isEmpty ? nil : $0 } : nil)
    }

    private func getRequest(_ path: String) throws -> HTTPRequest {
        let key = try key(path)
        guard !key.isEmpty else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        return HTTPRequest(url: try configuration.objectURL(key))
    }

    public func download(_ path: String, to destination: DownloadDestination) async throws {
        try await client.download(try getRequest(path), to: destination, path: path)
    }

    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        try await client.read(try getRequest(path), range: range, path: path)
    }

    // MARK: CloudFileSystem: writing

    /// A zero-byte marker `folder/`, so an empty folder lists; the folders above are implied by its key. A file at
    /// the path is the wrong kind.
    public func makeFolder(_ path: String) async throws {
        let prefix = try folderPrefix(path)
        guard !prefix.isEmpty, configuration.folderMarkers else { return }
        if try await head(path) != nil { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: true) }
        try await put(.data(Data()), key: prefix, path: path)
        _ = markedFolders.withLock { $0.insert(prefix) }
    }

    /// Files are sent as they are.
    public func stager(for path: String) async throws -> FileStager { .plain }

    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        let key = try key(path)
        guard !key.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        // A create looks first (a folder is a prefix S3 does not see from the key; some servers ignore the condition),
        // then sends `If-None-Match: *` with a body sent in one PutObject, which S3 refuses where a key is.
        try await refuseExisting(path, mode: mode)
        try await markFolder(of: key, path: path)
        guard source.size > configuration.simpleUploadLimit else {
            try await put(source, key: key, path: path, create: mode == .create)
            return
        }
        let uploader = ResumableUploader(chunkSize: configuration.partSize, policy: client.retryPolicy)
        let session = S3MultipartUpload(
            client: client, configuration: configuration, key: key, partSize: configuration.partSize, path: path)
        try await uploader.upload(source, with: session, path: path)
    }

    /// The marker of the folder a file goes into, written the first time this file system writes into it: a folder
    /// emptied by removals then still lists (empty), as on every other kind of remote. The folders above are implied
    /// by its key.
    private func markFolder(of key: String, path: String) async throws {
        guard configuration.folderMarkers, let slash = key.lastIndex(of: "/") else { return }
        let marker = String(key[...slash])
        guard marker != configuration.key([]) + "/", markedFolders.withLock({ $0.insert(marker).inserted }) else {
            return
        }
        do {
            try await put(.data(Data()), key: marker, path: path)
        } catch {
            _ = markedFolders.withLock { $0.remove(marker) }
            throw error
        }
    }

    /// One PutObject: the body's SHA-256 signed and its MD5 sent, so S3 refuses bytes damaged on the way; the ETag
    /// it answers is checked against the MD5 where it is one. Replacing a key is idempotent: the shared policy may
    /// repeat it.
    /// With `create`, `If-None-Match: *` makes S3 refuse it (412) where a key is; a refusal met by our own bytes (a
    /// first attempt whose answer was lost, then repeated) is the create having happened.
    private func put(_ source: UploadSource, key: String, path: String, create: Bool = false) async throws {
        let digests = try source.checksums([.sha256, .md5])
        var request = HTTPRequest(
            method: "PUT", url: try configuration.objectURL(key), body: source.body, isSafeToRepeat: true)
        request.headers["Content-Type"] = "application/octet-stream"
        request.headers["Content-MD5"] = ChecksumAlgorithm.base64(hex: digests[.md5] ?? "") ?? ""
        request.headers["X-Amz-Content-Sha256"] = digests[.sha256] ?? SigV4.unsignedPayload
        if create { request.headers["If-None-Match"] = "*" }
        let response: HTTPResponse
        do {
            response = try await client.checked(request, path: path)
        } catch CloudFileSystemError.alreadyExists where create {
            return try await settleRefusedCreate(path, source: source)
        }
        if let etag = Self.md5(ofETag: response.headers["ETag"]), etag != digests[.md5] {
            throw CloudFileSystemError.server(
                status: response.status, message: "S3's ETag of \(path) is not the MD5 of the data sent")
        }
    }

    // MARK: CloudFileSystem: removing

    /// DeleteObject: S3 answers 204 whether or not the key was there.
    public func removeFile(_ path: String) async throws {
        let key = try key(path)
        guard !key.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        try await client.remove(HTTPRequest(method: "DELETE", url: try configuration.objectURL(key)), path: path)
    }

    /// Every key under the folder (its marker included), 1000 at a time with DeleteObjects. Nothing there is fine.
    public func removeFolder(_ path: String) async throws {
        let prefix = try folderPrefix(path)
        guard !prefix.isEmpty else { throw CloudFileSystemError.invalidPath(path) }
        markedFolders.withLock { $0 = $0.filter { !$0.hasPrefix(prefix) } }
        var attempted = Set<String>()
        for _ in 0..<configuration.maximumPages {
            // Each batch is listed from the start: the keys of the batch before are gone.
            let page = try await listPage(prefix: prefix, delimiter: nil, token: nil, maximum: 1000, path: path)
            guard !page.contents.isEmpty else { return }
            let keys = page.contents.map(\.key)
            let survivors = keys.filter { attempted.contains($0) }
            guard survivors.isEmpty else {
                // A batch delete that answered success but left keys (some servers read a key's trailing spaces out
                // of the XML): those go one by one, and one that stays is an error.
                for key in survivors {
                    try await client.remove(
                        HTTPRequest(method: "DELETE", url: try configuration.objectURL(key)), path: path)
                    attempted.remove(key)
                }
                if let stuck = try await listPage(prefix: prefix, delimiter: nil, token: nil, maximum: 1000, path: path)
                    .contents.first(where: { survivors.contains($0.key) })
                {
                    throw CloudFileSystemError.server(
                        status: 200, message: "S3 keeps \(stuck.key) under \(path) after deleting it")
                }
                continue
            }
            attempted.formUnion(keys)
            try await deleteObjects(keys, path: path)
        }
        throw CloudFileSystemError.server(
            status: 200,
            message: "S3 still lists keys under \(path) after \(configuration.maximumPages) batches removed")
    }

    /// DeleteObjects (quiet): S3 requires the body's Content-MD5; a key it could not delete is an error.
    private func deleteObjects(_ keys: [String], path: String) async throws {
        let body = Data(
            ("<?xml version=\"1.0\" encoding=\"UTF-8\"?><Delete><Quiet>true</Quiet>"
                + keys.map { "<Object><Key>\(XMLText.escape($0))</Key></Object>" }.joined() + "</Delete>").utf8)
        var request = HTTPRequest(
            method: "POST", url: try configuration.bucketURL([("delete", "")]), body: .data(body), isSafeToRepeat: true)
        request.headers["Content-Type"] = "application/xml"
        request.headers["Content-MD5"] = ChecksumAlgorithm.md5.base64(of: body)
        let response = try await client.checked(request, path: path)
        let root = try? S3XMLElement.parse(response.body)
        if let failed = root?.all("Error").first {
            throw CloudFileSystemError.server(
                status: response.status,
                message:
                    "S3 did not delete \(failed.value("Key") ?? "a key") under \(path): \(failed.value("Code") ?? "") \(failed.value("Message") ?? "")"
            )
        }
    }
}
