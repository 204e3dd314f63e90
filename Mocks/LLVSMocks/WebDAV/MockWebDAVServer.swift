import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A mock WebDAV server that answers as Apache mod_dav does (the status codes of docs/services/webdav.md), or
/// with rclone serve's or nginx's quirks instead, with optional Basic authentication and the kit's faults.
/// Files live in memory, except large uploads, which stay in spooled files.
public final class MockWebDAVServer: Sendable, MockService {
    /// Whose behaviour to imitate.
    public enum Flavor: String, Sendable, CaseIterable {
        case apache, rclone, nginx
        /// Nextcloud's Sabre DAV; with `MockNextcloudSettings` (`MockWebDAVServer.nextcloud`), its own paths and calls too.
        case nextcloud

        var putReplaceStatus: Int { self == .rclone ? 201 : 204 }
        var mkcolExistingStatus: Int { self == .rclone ? 201 : 405 }
        /// What a PUT into a missing folder answers (tests hold the client to each).
        public var putParentMissingStatus: Int {
            switch self {
            case .apache, .nextcloud: 409;
            case .rclone: 404;
            case .nginx: 500
            }
        }
        var allowsInfiniteDepth: Bool { self == .rclone }
        func etag(_ version: Int, _ size: Int64) -> String? {
            switch self {
            case .apache: "W/\"\(String(size, radix: 16))-\(version)\""
            case .rclone: "\"\(version)-\(size)\""
            case .nginx: nil
            case .nextcloud: "\"\(String(format: "%08x%08x", size, version))\""
            }
        }
        /// Each flavour writes the DAV: namespace with a different prefix, as real servers do.
        /// Namespaces the multistatus element declares besides `DAV:`: Nextcloud's (clients such as nc-py-api read
        /// its properties by these prefixes).
        var extraNamespaces: String {
            self == .nextcloud
                ? #" xmlns:s="http://sabredav.org/ns" xmlns:oc="http://owncloud.org/ns" xmlns:nc="http://nextcloud.org/ns""#
                : ""
        }
        var prefix: String {
            switch self {
            case .apache: "D";
            case .rclone, .nextcloud: "d";
            case .nginx: "ns0"
            }
        }
    }

    public let server: MockHTTPServer
    public let flavor: Flavor
    /// The collection the mock serves (`/dav`).
    public let rootPath: String
    let tree: Mutex<MockDAVTree>
    /// Dead properties set by PROPPATCH, by path (kept in memory only, not in `--state`).
    let deadProperties = Mutex<[String: [DAVPropertyName: String]]>([:])
    /// Active locks (kept in memory only).
    let locks = Mutex<[MockDAVLock]>([])
    /// New files a PROPFIND of their folder leaves out, with how many more listings (`listing-lag`).
    let lagging = Mutex<[String: Int]>([:])
    private let credentials: (user: String, password: String)?
    let storage: URL
    private let state: MockStateDirectory?
    /// Nextcloud's paths, calls and state, for a mock made by `MockWebDAVServer.nextcloud`.
    let nextcloud: MockNextcloudState?

    enum Node {
        case folder(modified: Date)
        case file(Content, modified: Date, version: Int)
    }

    typealias Content = MockContent

    /// `state`: a folder to keep the files in between runs (loaded now, written after every change).
    public init(
        flavor: Flavor = .apache, port: UInt16 = 0, rootPath: String = "/dav", user: String? = nil,
        password: String? = nil,
        faults: MockFaults = MockFaults(), state: MockStateDirectory? = nil, nextcloud: MockNextcloudSettings? = nil
    ) throws {
        self.flavor = flavor
        self.nextcloud = nextcloud.map(MockNextcloudState.init)
        self.rootPath = rootPath
        self.credentials = user.map { ($0, password ?? "") }
        self.state = state
        self.tree = Mutex(try state.map(Self.load) ?? ["": .folder(modified: Date())])
        storage = try MockStorageFolder.make("webdav")
        let box = MockBackReference<MockWebDAVServer>()
        server = try MockHTTPServer(
            port: port, faults: faults,
            faultCatalogue: nextcloud == nil ? Self.namedFaults : Self.nextcloudFaults
        ) { request in box.answer { $0.handle(request) } }
        box.attach(self)
    }

    deinit { stop() }

    /// Stops serving and drops what it stored.
    public func stop() {
        MockStorageFolder.stop([server], removing: storage)
    }

    /// The URL of the served collection, ending in `/`.
    public var url: URL { URL(string: "http://127.0.0.1:\(server.port)\(rootPath)/")! }

    /// Paths of every file and folder, for tests.
    public var paths: [String] { tree.withLock { $0.keys.filter { !$0.isEmpty }.sorted() } }

    // MARK: Serving

    func handle(_ request: IncomingRequest) -> MockResponse {
        if let nextcloud, let answer = nextcloudBeforeSignIn(request, nextcloud) { return answer }
        if let credentials {
            guard let header = request.headers["Authorization"], header.hasPrefix("Basic "),
                let decoded = Data(base64Encoded: String(header.dropFirst(6))).map({
                    String(decoding: $0, as: UTF8.self)
                }),
                decoded == "\(credentials.user):\(credentials.password)"
                    || nextcloud?.appPasswords.withLock({
                        $0.contains(String(decoded.dropFirst(credentials.user.count + 1)))
                    }) == true
                        && decoded.hasPrefix(credentials.user + ":")
            else {
                return flavor == .nextcloud
                    ? Self.sabreError(
                        401, exception: "Sabre\\DAV\\Exception\\NotAuthenticated",
                        message: "No public access to this resource., Username or password was incorrect",
                        headers: ["WWW-Authenticate": #"Basic realm="Nextcloud", charset="UTF-8""#])
                    : MockResponse(status: 401, headers: ["WWW-Authenticate": #"Basic realm="llvs mock""#])
            }
        }
        if let nextcloud,
            let answer = nextcloudUploads(request, nextcloud) ?? nextcloudOCS(request, nextcloud)
                ?? nextcloudSearch(request, nextcloud)
        {
            return answer
        }
        guard let path = relativePath(request.rawPath) else { return .empty(404) }
        if path.split(separator: "/").contains("..") { return .empty(400) }
        let trailingSlash = request.rawPath.hasSuffix("/")
        // A file's path with a trailing slash names no file to read or delete (Apache: 404 for GET, 400 for DELETE).
        if trailingSlash, !path.isEmpty, case .file? = tree.withLock({ $0[path] }) {
            switch request.method {
            case "GET", "HEAD": return .empty(404)
            case "DELETE": return .empty(400)
            default: break
            }
        }
        // Writes to what a lock covers need its token; an If header must hold.
        if ["PUT", "MKCOL", "PROPPATCH", "DELETE"].contains(request.method),
            let refusal = writeRefusal(request, paths: [path], subtree: request.method == "DELETE" ? path : nil)
        {
            return refusal
        }
        switch request.method {
        case "PROPFIND": return propfind(path, request: request)
        case "MKCOL":
            var made = mkcol(path, request: request)
            // Nextcloud names the new folder's ID (clients read it, as nc-py-api's mkdir does).
            if let nextcloud, made.status == 201 { made.headers["OC-FileId"] = nextcloud.fileId(path) }
            return persisting(made)
        case "PUT":
            return persisting(nextcloud.map { nextcloudPut(path, request: request, $0) } ?? put(path, request: request))
        case "GET", "HEAD": return get(path, request: request)
        case "DELETE": return persisting(delete(path, trailingSlash: trailingSlash))
        case "MOVE", "COPY":
            var moved = transfer(path, request: request, keepingSource: request.method == "COPY")
            // Nextcloud names the item at the destination (a moved one keeps its ID); clients look it up by it.
            if let nextcloud, moved.status < 300,
                let target = request.headers["Destination"].flatMap(treePath(ofDestination:))
            {
                moved.headers["OC-FileId"] = nextcloud.fileId(target)
            }
            return persisting(moved)
        case "OPTIONS":
            return .empty(
                200,
                headers: [
                    "DAV": "1,2",
                    "Allow": "OPTIONS, GET, HEAD, PUT, DELETE, PROPFIND, PROPPATCH, MKCOL, COPY, MOVE, LOCK, UNLOCK",
                ])
        case "PROPPATCH": return proppatch(path, request: request)
        case "LOCK": return lock(path, request: request)
        case "UNLOCK": return unlock(path, request: request)
        case "POST": return .empty(405)
        default: return .empty(501)
        }
    }

    /// The tree path of a request path (percent-encoded, under the root path); nil outside the root.
    func relativePath(_ rawPath: String) -> String? {
        guard rawPath == rootPath || rawPath.hasPrefix(rootPath + "/") else { return nil }
        let encodedRelative = String(rawPath.dropFirst(rootPath.count))
        return encodedRelative.split(separator: "/").map { String($0).removingPercentEncoding ?? String($0) }.joined(
            separator: "/")
    }

    func parent(_ path: String) -> String {
        path.split(separator: "/").dropLast().joined(separator: "/")
    }

    private func propfind(_ path: String, request: IncomingRequest) -> MockResponse {
        // A body must be a well-formed `DAV:propfind` (RFC 4918 9.1): otherwise 400.
        guard let wanted = Self.propertyRequest(request.bodyData) else { return .empty(400) }
        // No Depth means infinity (RFC 4918 9.1); nginx answers it as 0, with the resource alone.
        let depth = request.headers["Depth"] ?? (flavor == .nginx ? "0" : "infinity")
        // Refused for a folder only, as Apache's mod_dav does (DavDepthInfinity off): a file has no depth to walk,
        // and clients that send no Depth (webdav4's info and download) read a file's properties that way.
        if depth.lowercased() == "infinity", !flavor.allowsInfiniteDepth,
            tree.withLock({ tree in if case .folder = tree[path] { true } else { false } })
        {
            return .empty(403)
        }
        let listing: [(String, Node)]? = tree.withLock { tree in
            guard let node = tree[path] else { return nil }
            var items = [(path, node)]
            if depth != "0", case .folder = node {
                let prefix = path.isEmpty ? "" : path + "/"
                items += tree.filter { key, _ in
                    guard !key.isEmpty, key.hasPrefix(prefix), key != path else { return false }
                    return depth.lowercased() == "infinity" || !key.dropFirst(prefix.count).contains("/")
                }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
            }
            return items
        }
        guard var listing else { return .empty(404) }
        if depth != "0" { listing = leavingOutLaggingFiles(listing, listedFolder: path) }
        let p = flavor.prefix
        var xml =
            #"<?xml version="1.0" encoding="utf-8"?>"#
            + "\n<\(p):multistatus xmlns:\(p)=\"DAV:\"\(flavor.extraNamespaces)>"
        for (itemPath, node) in listing {
            var href = href(itemPath)
            if case .folder = node, !itemPath.isEmpty { href += "/" }
            xml +=
                "<\(p):response><\(p):href>\(Self.xmlEscape(href))</\(p):href>"
                + propstats(node, path: itemPath, request: wanted) + "</\(p):response>"
        }
        xml += "</\(p):multistatus>"
        return .text(207, xml, contentType: "application/xml; charset=utf-8")
    }

    /// Percent-encodes a name as the imitated server does in hrefs: nginx leaves `[ ] ( ) '` raw, rclone escapes
    /// `'`, `&` is left for the XML's `&amp;`.
    static func encode(_ name: String, flavor: Flavor = .apache) -> String {
        var allowed = CharacterSet(
            charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~!$()*+,;=:@&")
        if flavor != .rclone { allowed.insert("'") }
        if flavor == .nginx { allowed.insert(charactersIn: "[]") }
        return name.addingPercentEncoding(withAllowedCharacters: allowed) ?? name
    }

    static func xmlEscape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    /// MKCOL; a body (which RFC 4918 leaves undefined) is refused with 415, as Apache does.
    private func mkcol(_ path: String, request: IncomingRequest) -> MockResponse {
        guard request.bodySize == 0 else { return .empty(415) }
        return tree.withLock { tree in
            if let existing = tree[path] {
                if case .folder = existing { return .empty(flavor.mkcolExistingStatus) }
                return .empty(405)
            }
            guard case .folder? = tree[parent(path)] else { return .empty(409) }
            tree[path] = .folder(modified: Date())
            return .empty(201)
        }
    }

    // MARK: Keeping the files between runs

    private struct Saved: Codable {
        struct Entry: Codable {
            var path: String
            var modified: Date
            /// For files: the version and the content's name under `files/`.
            var version: Int?
            var file: String?
            var size: Int64?
        }
        var entries: [Entry]
    }

    private static func load(_ state: MockStateDirectory) throws -> MockDAVTree {
        var tree: MockDAVTree = ["": .folder(modified: Date())]
        for entry in try state.load(Saved.self)?.entries ?? [] {
            if let name = entry.file, let version = entry.version {
                tree[entry.path] = .file(
                    .spooled(state.file(name), size: entry.size ?? 0), modified: entry.modified, version: version)
            } else {
                tree[entry.path] = .folder(modified: entry.modified)
            }
        }
        return tree
    }

    /// After a change: the tree written to the state folder (new contents linked in, unused ones removed).
    func persisting(_ response: MockResponse) -> MockResponse {
        guard let state, response.status < 400 else { return response }
        tree.withLock { tree in
            var entries: [Saved.Entry] = []
            var names = Set<String>()
            for (path, node) in tree where !path.isEmpty {
                switch node {
                case .folder(let modified):
                    entries.append(Saved.Entry(path: path, modified: modified))
                case .file(let content, let modified, let version):
                    let name = SHA256.hex(Data(path.utf8)) + "-\(version)"
                    switch content {
                    case .data(let data): _ = try? state.keep(data, orFileAt: nil, as: name)
                    case .spooled(let url, _): _ = try? state.keep(nil, orFileAt: url, as: name)
                    }
                    names.insert(name)
                    entries.append(
                        Saved.Entry(path: path, modified: modified, version: version, file: name, size: content.size))
                }
            }
            try? state.save(Saved(entries: entries.sorted { $0.path < $1.path }))
            state.prune(keeping: names)
        }
        return response
    }

    private func put(_ path: String, request: IncomingRequest) -> MockResponse {
        // nginx refuses a partial PUT outright.
        if flavor == .nginx, request.headers["Content-Range"] != nil { return .empty(501) }
        let content: Content
        switch request.body {
        case .data(let data): content = .data(data)
        case .file(let url, let size):
            // Keep large bodies on disk: move the spooled file into the mock's own folder.
            let kept = storage.appendingPathComponent(UUID().uuidString)
            guard (try? FileManager.default.moveItem(at: url, to: kept)) != nil else { return .empty(500) }
            content = .spooled(kept, size: size)
        }
        return place(content, at: path, request: request)
    }

    /// Stores a file's new contents as a PUT does (its conditions, its parent, replacing), answering as the server would.
    func place(_ content: Content, at path: String, request: IncomingRequest) -> MockResponse {
        tree.withLock { tree in
            guard case .folder? = tree[parent(path)] else { return .empty(flavor.putParentMissingStatus) }
            // Conditional PUT (RFC 9110 13.1): `If-None-Match: *` only creates; `If-Match` needs the current ETag.
            if request.headers["If-None-Match"] == "*", tree[path] != nil { return .empty(412) }
            if let wanted = request.headers["If-Match"] {
                guard case .file(let old, _, let oldVersion)? = tree[path],
                    wanted == "*"
                        || wanted.split(separator: ",").map({ $0.trimmingCharacters(in: .whitespaces) }).contains(
                            flavor.etag(oldVersion, old.size) ?? "")
                else { return .empty(412) }
            }
            var version = 1
            switch tree[path] {
            case .folder?: return .empty(flavor == .apache ? 409 : 405)
            case .file(let old, _, let oldVersion)?:
                version = oldVersion + 1
                if case .spooled(let url, _) = old { try? FileManager.default.removeItem(at: url) }
                tree[path] = .file(content, modified: Date(), version: version)
                return .empty(flavor.putReplaceStatus)
            case nil:
                tree[path] = .file(content, modified: Date(), version: version)
                if server.faults.fires("listing-lag", method: request.method, path: request.path) {
                    lagging.withLock { $0[path] = MockNamedFault.lagListings }
                }
                return .empty(201)
            }
        }
    }

    /// A listing without the lagging new files, each of which is a listing closer to showing when this is a listing
    /// of its own folder. A file asked for by its own path is there (readable at once; only its folder's listings lag).
    private func leavingOutLaggingFiles(_ listing: [(String, Node)], listedFolder: String) -> [(String, Node)] {
        lagging.withLock { lagging in
            guard !lagging.isEmpty else { return listing }
            let shown = listing.filter { $0.0 == listedFolder || lagging[$0.0] == nil }
            for (path, left) in lagging where parent(path) == listedFolder { lagging[path] = left > 1 ? left - 1 : nil }
            return shown
        }
    }

    private func get(_ path: String, request: IncomingRequest) -> MockResponse {
        guard let node = tree.withLock({ $0[path] }) else { return .empty(404) }
        switch node {
        case .folder:
            switch flavor {
            case .rclone: return .text(200, "<html><body>directory listing</body></html>", contentType: "text/html")
            case .nextcloud:
                return Self.sabreError(
                    501, exception: "Sabre\\DAV\\Exception\\NotImplemented",
                    message: "GET is only implemented on File objects")
            case .apache, .nginx: return .empty(403)
            }
        case .file(let content, let modified, let version):
            var headers: HTTPHeaders = ["Last-Modified": HTTPDate.format(modified)]
            if let etag = flavor.etag(version, content.size) { headers["ETag"] = etag }
            let body: MockResponse.Body =
                switch content {
                case .data(let data): .data(data)
                case .spooled(let url, _): .file(url, range: nil)
                }
            return .ranged(body, size: content.size, rangeHeader: request.headers["Range"], headers: headers)
        }
    }

    private func delete(_ path: String, trailingSlash: Bool) -> MockResponse {
        tree.withLock { tree in
            guard let node = tree[path], !path.isEmpty else { return .empty(404) }
            if case .folder = node {
                let prefix = path + "/"
                for key in tree.keys where key.hasPrefix(prefix) {
                    if case .file(.spooled(let url, _), _, _)? = tree[key] {
                        try? FileManager.default.removeItem(at: url)
                    }
                    tree[key] = nil
                }
            } else if case .file(.spooled(let url, _), _, _) = node {
                try? FileManager.default.removeItem(at: url)
            }
            tree[path] = nil
            removeProperties(under: path)
            removeLocks(under: path)
            return .empty(204)
        }
    }
}
