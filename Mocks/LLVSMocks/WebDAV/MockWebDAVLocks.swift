import Foundation
import LLVSHTTP

/// A write lock (RFC 4918 6, 9.10): exclusive or shared, on one resource or (`infinite`) on a folder and all below it.
struct MockDAVLock: Sendable, Equatable {
    var token: String
    var root: String
    var infinite: Bool
    var exclusive: Bool
    /// The `owner` element's contents as the client sent them.
    var owner: String
    var timeout: String

    func covers(_ path: String) -> Bool {
        root == path || (infinite && (root.isEmpty || path.hasPrefix(root + "/")))
    }
}

/// LOCK, UNLOCK, the `If` header and the 423 a write meets without the token of a lock that covers what it changes:
/// class 2 for real, as Apache with its lock database.
extension MockWebDAVServer {
    /// What a write needs before it is done: the `If` header, when sent, must hold (412 otherwise; 400 when it is
    /// malformed), and every lock covering `paths` (and every lock below `subtree`) must have its token submitted
    /// (423 otherwise). Nil when the write may go on.
    func writeRefusal(_ request: IncomingRequest, paths: [String], subtree: String? = nil) -> MockResponse? {
        var submitted = Set<String>()
        if let text = request.headers["If"] {
            guard let header = MockIfHeader(text) else { return .empty(400) }
            let current = locks.withLock { $0 }
            let holds = header.evaluate(
                requestPath: paths.first ?? "",
                resolve: { resource in self.treePath(ofTag: resource) },
                holds: { token, path in current.contains { $0.token == token && $0.covers(path) } },
                etag: { path in self.etag(of: path) })
            guard holds else { return .empty(412) }
            submitted = Set(header.stateTokens)
        }
        let current = locks.withLock { $0 }
        for path in paths {
            let covering = current.filter { $0.covers(path) }
            if !covering.isEmpty, !covering.contains(where: { submitted.contains($0.token) }) {
                return Self.locked(path, self)
            }
        }
        if let subtree {
            for lock in current
            where lock.root.hasPrefix(subtree.isEmpty ? "" : subtree + "/") && !submitted.contains(lock.token) {
                return Self.locked(lock.root, self)
            }
        }
        return nil
    }

    private static func locked(_ path: String, _ server: MockWebDAVServer) -> MockResponse {
        let p = server.flavor.prefix
        return .text(
            423,
            #"<?xml version="1.0" encoding="utf-8"?>"#
                + "\n<\(p):error xmlns:\(p)=\"DAV:\"><\(p):lock-token-submitted><\(p):href>"
                + xmlEscape(server.href(path)) + "</\(p):href></\(p):lock-token-submitted></\(p):error>",
            contentType: "application/xml; charset=utf-8")
    }

    /// A tagged resource of an `If` header (an absolute URL or a path) as a tree path; nil when it is not this server's.
    func treePath(ofTag resource: String) -> String? {
        var raw = resource
        if let url = URL(string: resource), url.host != nil {
            guard url.port.map(UInt16.init) == server.port || url.port == nil else { return nil }
            raw = url.path(percentEncoded: true)
        }
        if raw.hasSuffix("/"), raw != "/" { raw.removeLast() }
        return relativePath(raw)
    }

    func etag(of path: String) -> String? {
        guard case .file(let content, _, let version)? = tree.withLock({ $0[path] }) else { return nil }
        return flavor.etag(version, content.size)
    }

    /// LOCK: with a `lockinfo` body a new lock (an unmapped URL becomes an empty file, 201), without one a refresh of
    /// the lock whose token the `If` header names.
    func lock(_ path: String, request: IncomingRequest) -> MockResponse {
        let timeout =
            request.headers["Timeout"]?.split(separator: ",").first.map { $0.trimmingCharacters(in: .whitespaces) }
            ?? "Infinite"
        guard request.bodySize > 0 else {
            // A refresh: the token in the If header must name a lock covering the resource.
            guard let text = request.headers["If"], let header = MockIfHeader(text) else { return .empty(400) }
            let refreshed = locks.withLock { locks -> MockDAVLock? in
                guard let index = locks.firstIndex(where: { header.stateTokens.contains($0.token) && $0.covers(path) })
                else { return nil }
                locks[index].timeout = timeout
                return locks[index]
            }
            guard let refreshed else { return .empty(412) }
            return lockAnswer(refreshed, status: 200)
        }
        guard let info = MockXMLElement.parse(request.bodyData), info.namespace == "DAV:", info.name == "lockinfo",
            let scope = info.child("DAV:", "lockscope")?.elements.first,
            info.child("DAV:", "locktype")?.child("DAV:", "write") != nil
        else { return .empty(400) }
        let depth = request.headers["Depth"]?.lowercased() ?? "infinity"
        guard depth == "0" || depth == "infinity" else { return .empty(400) }
        let new = MockDAVLock(
            token: "opaquelocktoken:" + UUID().uuidString.lowercased(), root: path, infinite: depth == "infinity",
            exclusive: scope.name == "exclusive", owner: info.child("DAV:", "owner")?.innerXML ?? "", timeout: timeout)
        if let refusal = writeRefusal(request, paths: []) { return refusal }
        let created = tree.withLock { tree -> Bool? in
            if tree[path] != nil { return false }
            guard case .folder? = tree[parent(path)] else { return nil }
            tree[path] = .file(.data(Data()), modified: Date(), version: 1)
            return true
        }
        guard let created else { return .empty(409) }
        let conflict = locks.withLock { locks -> Bool in
            let clash = locks.contains { old in
                (old.covers(path) || (new.infinite && old.root.hasPrefix(path.isEmpty ? "" : path + "/")))
                    && (old.exclusive || new.exclusive)
            }
            if !clash { locks.append(new) }
            return clash
        }
        if conflict {
            if created { tree.withLock { $0[path] = nil } }
            return Self.locked(path, self)
        }
        return persisting(lockAnswer(new, status: created ? 201 : 200))
    }

    func unlock(_ path: String, request: IncomingRequest) -> MockResponse {
        guard var token = request.headers["Lock-Token"]?.trimmingCharacters(in: .whitespaces), token.hasPrefix("<"),
            token.hasSuffix(">")
        else {
            return .empty(400)
        }
        token = String(token.dropFirst().dropLast())
        let removed = locks.withLock { locks -> Bool in
            guard let index = locks.firstIndex(where: { $0.token == token && $0.covers(path) }) else { return false }
            locks.remove(at: index)
            return true
        }
        return .empty(removed ? 204 : 409)
    }

    /// Locks on `path` and below go with it (deleted, or moved away).
    func removeLocks(under path: String) {
        locks.withLock { locks in locks.removeAll { $0.root == path || path.isEmpty || $0.root.hasPrefix(path + "/") } }
    }

    private func lockAnswer(_ lock: MockDAVLock, status: Int) -> MockResponse {
        let p = flavor.prefix
        let body =
            #"<?xml version="1.0" encoding="utf-8"?>"# + "\n<\(p):prop xmlns:\(p)=\"DAV:\"><\(p):lockdiscovery>"
            + activeLock(lock)
            + "</\(p):lockdiscovery></\(p):prop>"
        var response = MockResponse.text(status, body, contentType: "application/xml; charset=utf-8")
        response.headers["Lock-Token"] = "<\(lock.token)>"
        return response
    }

    func activeLock(_ lock: MockDAVLock) -> String {
        let p = flavor.prefix
        return
            "<\(p):activelock><\(p):locktype><\(p):write/></\(p):locktype><\(p):lockscope><\(p):\(lock.exclusive ? "exclusive" : "shared")/></\(p):lockscope>"
            + "<\(p):depth>\(lock.infinite ? "infinity" : "0")</\(p):depth>"
            + (lock.owner.isEmpty ? "" : "<\(p):owner>\(lock.owner)</\(p):owner>")
            + "<\(p):timeout>\(Self.xmlEscape(lock.timeout))</\(p):timeout><\(p):locktoken><\(p):href>\(lock.token)</\(p):href></\(p):locktoken>"
            + "<\(p):lockroot><\(p):href>\(Self.xmlEscape(href(lock.root)))</\(p):href></\(p):lockroot></\(p):activelock>"
    }

    /// The `lockdiscovery` and `supportedlock` properties of a resource.
    func lockProperties(_ path: String) -> (discovery: String, supported: String) {
        let p = flavor.prefix
        let active = locks.withLock { $0.filter { $0.covers(path) } }
        let entry = { (scope: String) in
            "<\(p):lockentry><\(p):lockscope><\(p):\(scope)/></\(p):lockscope><\(p):locktype><\(p):write/></\(p):locktype></\(p):lockentry>"
        }
        return (active.map(activeLock).joined(), entry("exclusive") + entry("shared"))
    }
}
