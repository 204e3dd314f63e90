import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// What a Nextcloud (or ownCloud) server adds to WebDAV, as its clients meet it: files under
/// `/remote.php/dav/files/USER/`, chunked upload v2 under `/remote.php/dav/uploads/USER/`, `OC-Checksum` kept and
/// listed as `oc:checksums`, `X-OC-Mtime` honoured, file IDs, Sabre error bodies, a quota, `status.php`, Login Flow
/// v2 with app passwords, and the body limit of a reverse proxy in front of it.
public struct MockNextcloudSettings: Sendable {
    public var user = "llvs"
    /// `Nextcloud` or `ownCloud` (what `status.php` says).
    public var productName = "Nextcloud"
    /// Bytes a request body may hold before the proxy in front answers 413; nil for no proxy.
    public var maximumBody: Int64?
    /// Bytes the user may store; nil for no quota.
    public var quota: Int64?
    /// Login Flow v2 grants at once, without the page being visited (`llvs-mock --approve-devices`).
    public var approvesLoginsAtOnce = false

    public init() {}
}

/// A chunked upload in progress: its chunks by number and the destination its MKCOL named.
struct MockChunkedUpload {
    var destination: String?
    var chunks: [Int: MockContent] = [:]
}

/// A Login Flow v2 sign-in: the poll token, the code in the page's URL, and the app password once granted.
struct MockLoginFlow {
    var code: String
    var appPassword: String?
}

/// The Nextcloud state beside the WebDAV tree.
final class MockNextcloudState: Sendable {
    let settings: MockNextcloudSettings
    let uploads = Mutex<[String: MockChunkedUpload]>([:])
    /// `OC-Checksum` values by tree path, as sent (`SHA1:…`).
    let checksums = Mutex<[String: String]>([:])
    /// File IDs by tree path; a new path gets the next number.
    let fileIds = Mutex<(next: Int, byPath: [String: Int])>((1_000, [:]))
    /// Login flows by poll token.
    let logins = Mutex<[String: MockLoginFlow]>([:])
    let appPasswords = Mutex<Set<String>>([])

    init(settings: MockNextcloudSettings) { self.settings = settings }

    /// The file ID of a path (`oc:fileid`), given when first asked for.
    func fileNumber(_ path: String) -> Int {
        fileIds.withLock { ids in
            if let known = ids.byPath[path] { return known }
            ids.next += 1
            ids.byPath[path] = ids.next
            return ids.next
        }
    }

    /// The ID as `OC-FileId` and `oc:id` write it: the number, then the instance's ID.
    func fileId(_ path: String) -> String { String(format: "%08docmockinstance", fileNumber(path)) }
}

extension MockWebDAVServer {
    /// A Nextcloud mock: files at `/remote.php/dav/files/USER/`, signing in with `password` or an app password.
    public static func nextcloud(
        _ settings: MockNextcloudSettings = MockNextcloudSettings(), password: String, port: UInt16 = 0,
        faults: MockFaults = MockFaults(), state: MockStateDirectory? = nil
    ) throws -> MockWebDAVServer {
        try MockWebDAVServer(
            flavor: .nextcloud, port: port, rootPath: "/remote.php/dav/files/\(settings.user)", user: settings.user,
            password: password, faults: faults, state: state, nextcloud: settings)
    }

    /// The server's own address (`status.php`, Login Flow v2), without the WebDAV path.
    public var serverURL: URL { URL(string: "http://127.0.0.1:\(server.port)")! }

    /// The login pages of Login Flow v2 sign-ins not granted yet, for a test to grant one as a user would (POST).
    public var loginPages: [URL] {
        nextcloud?.logins.withLock { logins in
            logins.values.filter { $0.appPassword == nil }.map {
                serverURL.appendingPathComponent("index.php/login/v2/flow/\($0.code)")
            }
        } ?? []
    }

    var uploadsRoot: String { "/remote.php/dav/uploads/\(nextcloud?.settings.user ?? "")" }

    /// A Sabre DAV error, as Nextcloud writes every refusal.
    static func sabreError(
        _ status: Int, exception: String, message: String, headers: HTTPHeaders = [:]
    ) -> MockResponse {
        var response = MockResponse.text(
            status, sabreXML(exception: exception, message: message), contentType: "application/xml; charset=utf-8")
        for (name, value) in headers { response.headers[name] = value }
        return response
    }

    static func sabreXML(exception: String, message: String) -> String {
        #"<?xml version="1.0" encoding="utf-8"?>"# + "\n"
            + #"<d:error xmlns:d="DAV:" xmlns:s="http://sabredav.org/ns"><s:exception>"# + xmlEscape(exception)
            + "</s:exception><s:message>" + xmlEscape(message) + "</s:message></d:error>"
    }

    /// What is answered before signing in: the proxy's body limit, `status.php`, and Login Flow v2.
    func nextcloudBeforeSignIn(_ request: IncomingRequest, _ nextcloud: MockNextcloudState) -> MockResponse? {
        if let limit = nextcloud.settings.maximumBody, request.bodySize > limit {
            return .text(
                413,
                "<html><head><title>413 Request Entity Too Large</title></head><body><center><h1>413 Request Entity Too Large</h1></center><hr><center>nginx</center></body></html>",
                contentType: "text/html")
        }
        switch (request.method, request.rawPath) {
        case ("GET", "/status.php"):
            return .json(
                200,
                [
                    "installed": true, "maintenance": false, "needsDbUpgrade": false, "version": "29.0.4.1",
                    "versionstring": "29.0.4",
                    "edition": "", "productname": nextcloud.settings.productName, "extendedSupport": false,
                ], sortedKeys: true)
        case ("POST", "/index.php/login/v2"):
            let token = randomToken(), code = randomToken()
            let granted = nextcloud.settings.approvesLoginsAtOnce ? issueAppPassword(nextcloud) : nil
            nextcloud.logins.withLock { $0[token] = MockLoginFlow(code: code, appPassword: granted) }
            return .json(
                200,
                [
                    "poll": ["token": token, "endpoint": serverURL.absoluteString + "/index.php/login/v2/poll"],
                    "login": serverURL.absoluteString + "/index.php/login/v2/flow/" + code,
                ], sortedKeys: true)
        case ("POST", "/index.php/login/v2/poll"):
            let form = FormEncoding.decode(String(decoding: request.bodyData, as: UTF8.self))
            guard let token = form["token"] else { return .empty(404) }
            // Granted once: the token is spent by the answer that carries the app password.
            let password: String? = nextcloud.logins.withLock { logins in
                guard let password = logins[token]?.appPassword else { return nil }
                logins[token] = nil
                return password
            }
            guard let password else { return .json(404, [String: String]()) }
            return .json(
                200,
                ["server": serverURL.absoluteString, "loginName": nextcloud.settings.user, "appPassword": password],
                sortedKeys: true)
        default:
            break
        }
        let flowPrefix = "/index.php/login/v2/flow/"
        if request.rawPath.hasPrefix(flowPrefix) {
            let code = String(request.rawPath.dropFirst(flowPrefix.count))
            let known = nextcloud.logins.withLock { $0.values.contains { $0.code == code } }
            guard known else {
                return .text(404, "This link has expired or was already used.", contentType: "text/plain")
            }
            if request.method == "POST" {
                let password = issueAppPassword(nextcloud)
                nextcloud.logins.withLock { logins in
                    for (token, flow) in logins where flow.code == code && flow.appPassword == nil {
                        logins[token]?.appPassword = password
                    }
                }
                return .text(
                    200, "<html><body><p>Account connected. You can close this window.</p></body></html>",
                    contentType: "text/html")
            }
            return .text(
                200,
                "<html><body><form method=\"post\"><p>Grant access to your account?</p><button type=\"submit\">Grant access</button></form></body></html>",
                contentType: "text/html")
        }
        return nil
    }

    private func randomToken() -> String {
        (0..<4).map { _ in UUID.drawn().uuidString.replacingOccurrences(of: "-", with: "") }.joined()
    }

    private func issueAppPassword(_ nextcloud: MockNextcloudState) -> String {
        let password = (0..<5).map { _ in String(UUID.drawn().uuidString.prefix(5)) }.joined(separator: "-")
        nextcloud.appPasswords.withLock { _ = $0.insert(password) }
        return password
    }

    /// The OCS calls a client makes to learn who it is and what the server can do (nc-py-api makes both before
    /// anything else), after signing in; nil for any other path. JSON, as `format=json` asks.
    func nextcloudOCS(_ request: IncomingRequest, _ nextcloud: MockNextcloudState) -> MockResponse? {
        let path = request.rawPath
        guard path.hasPrefix("/ocs/v1.php/") || path.hasPrefix("/ocs/v2.php/") else { return nil }
        let v2 = path.hasPrefix("/ocs/v2.php/")
        func ocs(_ data: Any) -> MockResponse {
            .json(
                200, ["ocs": ["meta": ["status": "ok", "statuscode": v2 ? 200 : 100, "message": "OK"], "data": data]],
                sortedKeys: true)
        }
        switch path.dropFirst("/ocs/v1.php".count) {
        case "/cloud/user":
            let user = nextcloud.settings.user
            return ocs([
                "id": user, "display-name": user, "displayname": user, "email": NSNull(), "enabled": true,
                "quota": ["quota": nextcloud.settings.quota ?? -3, "used": quotaFigures(nextcloud).used],
            ])
        case "/cloud/capabilities":
            return ocs([
                "version": [
                    "major": 29, "minor": 0, "micro": 4, "string": "29.0.4", "edition": "", "extendedSupport": false,
                ],
                "capabilities": [
                    "core": ["pollinterval": 60, "webdav-root": "remote.php/webdav"],
                    "dav": ["chunking": "1.0", "bulkupload": "1.0"],
                    "files": ["bigfilechunking": true, "versioning": false, "undelete": false],
                ],
            ])
        default:
            return .json(
                404,
                [
                    "ocs": [
                        "meta": ["status": "failure", "statuscode": 998, "message": "Invalid query"],
                        "data": [String](),
                    ]
                ], sortedKeys: true)
        }
    }

    /// Requests to the uploads collection (chunked upload v2), after signing in; nil for any other path.
    func nextcloudUploads(_ request: IncomingRequest, _ nextcloud: MockNextcloudState) -> MockResponse? {
        let root = uploadsRoot
        guard request.rawPath == root || request.rawPath.hasPrefix(root + "/") else { return nil }
        let parts = request.rawPath.dropFirst(root.count).split(separator: "/").map(String.init)
        guard let id = parts.first else { return request.method == "PROPFIND" ? .empty(207) : .empty(405) }
        switch (request.method, parts.count) {
        case ("MKCOL", 1):
            let destination = request.headers["Destination"]
            return nextcloud.uploads.withLock { uploads in
                guard uploads[id] == nil else {
                    return Self.sabreError(
                        405, exception: "Sabre\\DAV\\Exception\\MethodNotAllowed",
                        message: "The resource you tried to create already exists")
                }
                uploads[id] = MockChunkedUpload(destination: destination)
                return .empty(201)
            }
        case ("DELETE", 1):
            let removed = nextcloud.uploads.withLock { $0.removeValue(forKey: id) }
            guard let removed else { return .empty(404) }
            for case .spooled(let url, _) in removed.chunks.values { try? FileManager.default.removeItem(at: url) }
            return .empty(204)
        case ("PUT", 2):
            guard let number = Int(parts[1]), (1...10_000).contains(number) else {
                return Self.sabreError(
                    400, exception: "Sabre\\DAV\\Exception\\BadRequest",
                    message: "Chunk name must be a number between 1 and 10000")
            }
            if let total = request.headers["OC-Total-Length"].flatMap(Int64.init),
                let refusal = quotaRefusal(adding: total, replacing: nil, nextcloud)
            {
                return refusal
            }
            guard let content = try? MockContent.keeping(request.body, in: storage) else { return .empty(500) }
            return nextcloud.uploads.withLock { uploads in
                guard uploads[id] != nil else {
                    return Self.sabreError(
                        404, exception: "Sabre\\DAV\\Exception\\NotFound", message: "Upload \(id) not found")
                }
                if case .spooled(let url, _)? = uploads[id]?.chunks[number] {
                    try? FileManager.default.removeItem(at: url)
                }
                uploads[id]?.chunks[number] = content
                return .empty(201)
            }
        case ("MOVE", 2) where parts[1] == ".file":
            return persisting(assemble(id, request: request, nextcloud))
        default:
            return .empty(405)
        }
    }

    /// The assembly `MOVE …/ID/.file`: the chunks in order become the destination's file.
    private func assemble(_ id: String, request: IncomingRequest, _ nextcloud: MockNextcloudState) -> MockResponse {
        guard let destinationHeader = request.headers["Destination"],
            let target = treePath(ofDestination: destinationHeader), !target.isEmpty
        else {
            return Self.sabreError(
                400, exception: "Sabre\\DAV\\Exception\\BadRequest",
                message: "The destination header was not supplied or is invalid")
        }
        guard let upload = nextcloud.uploads.withLock({ $0[id] }) else {
            return Self.sabreError(
                404, exception: "Sabre\\DAV\\Exception\\NotFound", message: "File with name .file could not be located")
        }
        if let named = upload.destination, treePath(ofDestination: named) != target {
            return Self.sabreError(
                400, exception: "Sabre\\DAV\\Exception\\BadRequest",
                message: "The upload was started for another destination")
        }
        let chunks = upload.chunks.sorted { $0.key < $1.key }.map(\.value)
        let size = upload.chunks.values.reduce(Int64(0)) { $0 + $1.size }
        if let total = request.headers["OC-Total-Length"].flatMap(Int64.init), total != size {
            return Self.sabreError(
                400, exception: "Sabre\\DAV\\Exception\\BadRequest",
                message: "Chunks on server do not sum up to \(total) but to \(size) bytes")
        }
        if let refusal = quotaRefusal(adding: size, replacing: target, nextcloud) { return refusal }
        let assembled = storage.appendingPathComponent("assembled-\(UUID().uuidString)")
        guard FileManager.default.createFile(atPath: assembled.path, contents: nil),
            let output = try? FileHandle(forWritingTo: assembled)
        else { return .empty(500) }
        do {
            for chunk in chunks {
                switch chunk {
                case .data(let data): try output.write(contentsOf: data)
                case .spooled(let url, _):
                    let input = try FileHandle(forReadingFrom: url)
                    while let piece = try input.read(upToCount: 1 << 20), !piece.isEmpty {
                        try output.write(contentsOf: piece)
                    }
                    try input.close()
                }
            }
            try output.close()
        } catch {
            try? FileManager.default.removeItem(at: assembled)
            return .empty(500)
        }
        let placed = store(.spooled(assembled, size: size), at: target, request: request, nextcloud)
        guard placed.status < 300 else {
            try? FileManager.default.removeItem(at: assembled)
            return placed
        }
        let removed = nextcloud.uploads.withLock { $0.removeValue(forKey: id) }
        for case .spooled(let url, _) in removed.map({ Array($0.chunks.values) }) ?? [] {
            try? FileManager.default.removeItem(at: url)
        }
        // Assembling a large file takes a while: a server that is still merging answers 423, and then the upload is
        // gone (404) by the time the client asks again, with the file in place.
        if server.faults.fires("assembly-locked", method: "MOVE", path: request.path) {
            return Self.sabreError(
                423, exception: "OCA\\DAV\\Connector\\Sabre\\Exception\\FileLocked", message: "\"\(target)\" is locked")
        }
        return placed
    }

    /// A Destination header (a URL or an absolute path) as a tree path under the files root; nil elsewhere.
    func treePath(ofDestination header: String) -> String? {
        var path = header
        if let url = URL(string: header), url.host != nil { path = url.path(percentEncoded: true) }
        guard let tree = relativePath(path), !tree.split(separator: "/").contains("..") else { return nil }
        return tree
    }

    /// A PUT of a file: the quota, then the file, with its checksum, its mtime and Nextcloud's headers.
    func nextcloudPut(_ path: String, request: IncomingRequest, _ nextcloud: MockNextcloudState) -> MockResponse {
        if let refusal = quotaRefusal(adding: request.bodySize, replacing: path, nextcloud) { return refusal }
        guard let content = try? MockContent.keeping(request.body, in: storage) else { return .empty(500) }
        return store(content, at: path, request: request, nextcloud)
    }

    /// Places `content` at `path` as a PUT does, then keeps `OC-Checksum` and `X-OC-Mtime` and answers with the file's
    /// ID and ETag.
    private func store(
        _ content: MockContent, at path: String, request: IncomingRequest, _ nextcloud: MockNextcloudState
    ) -> MockResponse {
        var response = place(content, at: path, request: request)
        guard response.status < 300 else { return response }
        nextcloud.checksums.withLock { $0[path] = request.headers["OC-Checksum"] }
        if let mtime = request.headers["X-OC-Mtime"].flatMap(Double.init) {
            tree.withLock { tree in
                if case .file(let content, _, let version)? = tree[path] {
                    tree[path] = .file(content, modified: Date(timeIntervalSince1970: mtime), version: version)
                }
            }
            response.headers["X-OC-MTime"] = "accepted"
        }
        if case .file(let stored, _, let version)? = tree.withLock({ $0[path] }),
            let etag = flavor.etag(version, stored.size)
        {
            response.headers["ETag"] = etag
            response.headers["OC-Etag"] = etag
        }
        response.headers["OC-FileId"] = nextcloud.fileId(path)
        return response
    }

    /// 507 with the numbers when `adding` bytes (in place of what is at `replacing`) would pass the quota.
    private func quotaRefusal(
        adding bytes: Int64, replacing path: String?, _ nextcloud: MockNextcloudState
    ) -> MockResponse? {
        guard let quota = nextcloud.settings.quota else { return nil }
        let (used, replaced) = storedBytes(replacing: path)
        let available = max(0, quota - used + replaced)
        guard bytes > available else { return nil }
        return Self.sabreError(
            507, exception: "Sabre\\DAV\\Exception\\InsufficientStorage",
            message: "Insufficient space in \(path.map { "/" + $0 } ?? "/"), \(bytes) required, \(available) available")
    }

    /// Bytes used by every file, and what the quota leaves (RFC 4331's properties).
    func quotaFigures(_ nextcloud: MockNextcloudState) -> (used: Int64, available: Int64?) {
        let used = storedBytes(replacing: nil).used
        return (used, nextcloud.settings.quota.map { max(0, $0 - used) })
    }

    /// Bytes every file holds, and those of the file at `path` (which an upload there replaces).
    private func storedBytes(replacing path: String?) -> (used: Int64, replaced: Int64) {
        tree.withLock { tree in
            var used: Int64 = 0, replaced: Int64 = 0
            for (key, node) in tree {
                guard case .file(let content, _, _) = node else { continue }
                used += content.size
                if key == path { replaced = content.size }
            }
            return (used, replaced)
        }
    }
}

extension MockWebDAVServer {
    /// Nextcloud's failures by name, with the Sabre bodies it sends.
    public static var nextcloudFaults: [MockNamedFault] {
        let writes = MockFaultScope(
            methods: ["PUT", "MKCOL", "MOVE"], describe: "uploads, chunks, assemblies and new folders")
        let changes = MockFaultScope(methods: ["PUT", "DELETE", "MOVE"], describe: "uploads, removals and moves")
        let any = MockFaultScope(describe: "every request")
        func sabre(
            _ status: Int, _ exception: String, _ message: String, _ headers: HTTPHeaders = [:]
        ) -> MockNamedFault.Effect {
            var headers = headers
            headers["Content-Type"] = "application/xml; charset=utf-8"
            return .answer(
                .answer(
                    status: status, headers: headers, body: Data(sabreXML(exception: exception, message: message).utf8))
            )
        }
        return [
            MockNamedFault(
                "insufficient-storage", "507 with Sabre's InsufficientStorage: the user's quota is full",
                transient: false, scope: writes,
                effect: sabre(
                    507, "Sabre\\DAV\\Exception\\InsufficientStorage",
                    "Insufficient space in /, 5255006 required, 3350118 available")),
            MockNamedFault(
                "locked", "423 with Nextcloud's FileLocked: another client or the server's own work holds the file",
                transient: true,
                scope: changes,
                effect: sabre(423, "OCA\\DAV\\Connector\\Sabre\\Exception\\FileLocked", "\"file\" is locked")),
            MockNamedFault(
                "assembly-locked",
                "a chunked upload's assembly (MOVE …/.file) completes but answers 423 FileLocked, and the upload is gone after",
                transient: true, scope: MockFaultScope(methods: ["MOVE"], describe: "assemblies"), effect: .behavior),
            MockNamedFault(
                "too-large", "413 Request Entity Too Large from the reverse proxy's body limit", transient: false,
                scope: MockFaultScope(methods: ["PUT"], describe: "uploads and chunks"),
                effect: .answer(
                    .answer(
                        status: 413, headers: ["Content-Type": "text/html"],
                        body: Data("<html><body><h1>413 Request Entity Too Large</h1></body></html>".utf8)))),
            MockNamedFault(
                "maintenance", "503 with Sabre's ServiceUnavailable: the server is in maintenance mode",
                transient: true, scope: any,
                effect: sabre(
                    503, "Sabre\\DAV\\Exception\\ServiceUnavailable", "System is in maintenance mode.",
                    ["Retry-After": "1"])),
            MockNamedFault(
                "too-many-requests", "429 from brute-force protection or rate limiting", transient: true, scope: any,
                effect: sabre(
                    429, "Sabre\\DAV\\Exception\\TooManyRequests", "Reached maximum delay", ["Retry-After": "1"])),
            .listingLag(scope: MockFaultScope(methods: ["PUT", "MOVE"], describe: "uploads and assemblies")),
        ]
    }
}
