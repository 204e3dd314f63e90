import Foundation
import LLVSSupport
import LLVSHTTP

/// A property's name: its namespace and local name.
struct DAVPropertyName: Hashable, Sendable {
    var namespace: String
    var name: String
}

/// PROPPATCH with dead properties (RFC 4918 9.2) and what a PROPFIND body asks for (9.1: `prop`, `propname`,
/// `allprop`). Dead properties are kept per path with their values as sent (elements, text and namespaces), follow
/// the item through MOVE and COPY and go with DELETE; the live ones (`DAV:` namespace) cannot be set (403).
extension MockWebDAVServer {
    enum PropertyRequest {
        case all
        case names
        case some([DAVPropertyName])
    }

    /// What a PROPFIND body asks for; nil when the body is not XML or not a `DAV:propfind` (400).
    static func propertyRequest(_ body: Data) -> PropertyRequest? {
        guard !body.isEmpty else { return .all }
        guard let root = MockXMLElement.parse(body), root.namespace == "DAV:", root.name == "propfind" else {
            return nil
        }
        if let prop = root.child("DAV:", "prop") {
            return .some(prop.elements.map { DAVPropertyName(namespace: $0.namespace, name: $0.name) })
        }
        if root.child("DAV:", "propname") != nil { return .names }
        if root.child("DAV:", "allprop") != nil { return .all }
        return nil
    }

    func proppatch(_ path: String, request: IncomingRequest) -> MockResponse {
        guard tree.withLock({ $0[path] }) != nil else { return .empty(404) }
        guard let root = MockXMLElement.parse(request.bodyData), root.namespace == "DAV:", root.name == "propertyupdate"
        else { return .empty(400) }
        var operations: [(DAVPropertyName, String?)] = []
        for instruction in root.elements
        where instruction.namespace == "DAV:" && ["set", "remove"].contains(instruction.name) {
            for property in instruction.child("DAV:", "prop")?.elements ?? [] {
                operations.append(
                    (
                        DAVPropertyName(namespace: property.namespace, name: property.name),
                        instruction.name == "set" ? property.innerXML : nil
                    ))
            }
        }
        guard !operations.isEmpty else { return .empty(400) }
        // All or nothing: a live property cannot be changed, and then nothing is (403 for it, 424 for the rest).
        let refused = Set(operations.map(\.0).filter { $0.namespace == "DAV:" })
        if refused.isEmpty {
            deadProperties.withLock { all in
                for (name, value) in operations { all[path, default: [:]][name] = value }
            }
        }
        var statuses: [(DAVPropertyName, Int)] = []
        for (name, _) in operations where !statuses.contains(where: { $0.0 == name }) {
            statuses.append((name, refused.isEmpty ? 200 : refused.contains(name) ? 403 : 424))
        }
        let p = flavor.prefix
        var xml =
            #"<?xml version="1.0" encoding="utf-8"?>"#
            + "\n<\(p):multistatus xmlns:\(p)=\"DAV:\"\(flavor.extraNamespaces)><\(p):response><\(p):href>\(Self.xmlEscape(href(path)))</\(p):href>"
        for status in [200, 403, 424] {
            let names = statuses.filter { $0.1 == status }.map(\.0)
            guard !names.isEmpty else { continue }
            xml += "<\(p):propstat><\(p):prop>" + names.map { Self.emptyElement($0) }.joined() + "</\(p):prop>"
            xml += "<\(p):status>HTTP/1.1 \(status) \(Self.reason(status))</\(p):status></\(p):propstat>"
        }
        xml += "</\(p):response></\(p):multistatus>"
        return .text(207, xml, contentType: "application/xml; charset=utf-8")
    }

    /// The `propstat`s of one item for what was asked.
    func propstats(_ node: Node, path: String, request: PropertyRequest) -> String {
        let p = flavor.prefix
        var live: [(DAVPropertyName, String)] = []
        func add(_ name: String, _ value: String) {
            live.append((DAVPropertyName(namespace: "DAV:", name: name), value))
        }
        switch node {
        case .folder(let modified):
            add("resourcetype", "<\(p):collection/>")
            add("getlastmodified", HTTPDate.format(modified))
        case .file(let content, let modified, let version):
            add("resourcetype", "")
            add("getcontentlength", String(content.size))
            add("getlastmodified", HTTPDate.format(modified))
            if let etag = flavor.etag(version, content.size) { add("getetag", Self.xmlEscape(etag)) }
        }
        // Nextcloud's own properties (and RFC 4331's quota), written with their namespaces declared where they are used.
        var own: [(DAVPropertyName, String)] = []
        if let nextcloud {
            let oc = "http://owncloud.org/ns"
            own.append((DAVPropertyName(namespace: oc, name: "fileid"), String(nextcloud.fileNumber(path))))
            own.append((DAVPropertyName(namespace: oc, name: "id"), nextcloud.fileId(path)))
            switch node {
            case .folder:
                let quota = quotaFigures(nextcloud)
                add("quota-used-bytes", String(quota.used))
                add("quota-available-bytes", quota.available.map(String.init) ?? "-3")
                own.append((DAVPropertyName(namespace: oc, name: "permissions"), "RGDNVCK"))
            case .file(let content, _, _):
                let checksum = nextcloud.checksums.withLock { $0[path] }
                own.append(
                    (
                        DAVPropertyName(namespace: oc, name: "checksums"),
                        checksum.map { "<oc:checksum>\(Self.xmlEscape($0))</oc:checksum>" } ?? ""
                    ))
                own.append((DAVPropertyName(namespace: oc, name: "size"), String(content.size)))
                own.append((DAVPropertyName(namespace: oc, name: "permissions"), "RGDNVW"))
            }
        }
        let locking = lockProperties(path)
        add("supportedlock", locking.supported)
        add("lockdiscovery", locking.discovery)
        let dead =
            deadProperties.withLock { $0[path] ?? [:] }.sorted {
                ($0.key.namespace, $0.key.name) < ($1.key.namespace, $1.key.name)
            }
            .map { (key: $0.key, value: $0.value) } + own.map { (key: $0.0, value: $0.1) }
        func liveElement(_ name: DAVPropertyName, _ value: String) -> String {
            value.isEmpty ? "<\(p):\(name.name)/>" : "<\(p):\(name.name)>\(value)</\(p):\(name.name)>"
        }
        func propstat(_ props: String, _ status: Int) -> String {
            "<\(p):propstat><\(p):prop>\(props)</\(p):prop><\(p):status>HTTP/1.1 \(status) \(Self.reason(status))</\(p):status></\(p):propstat>"
        }
        switch request {
        case .all:
            let declared = flavor == .nextcloud
            var xml = propstat(
                live.map(liveElement).joined()
                    + dead.map { Self.element($0.key, $0.value, declared: declared) }.joined(), 200)
            if flavor == .apache, case .folder = node {
                // Apache reports the properties a collection lacks in a second propstat.
                xml += propstat("<\(p):getcontentlength/><\(p):getetag/>", 404)
            }
            return xml
        case .names:
            return propstat(
                live.map { "<\(p):\($0.0.name)/>" }.joined() + dead.map { Self.emptyElement($0.key) }.joined(), 200)
        case .some(let names):
            var found = "", missing = ""
            for name in names {
                if let value = live.first(where: { $0.0 == name })?.1 {
                    found += liveElement(name, value)
                } else if let value = dead.first(where: { $0.key == name })?.value {
                    found += Self.element(name, value, declared: flavor == .nextcloud)
                } else if flavor == .nextcloud, Self.declaredPrefix(name.namespace) != nil {
                    missing += Self.element(name, "", declared: true)
                } else {
                    missing += Self.emptyElement(name)
                }
            }
            return (found.isEmpty ? "" : propstat(found, 200)) + (missing.isEmpty ? "" : propstat(missing, 404))
        }
    }

    /// Moves (or copies) the dead properties of `path` and everything below it to `target`.
    func transferProperties(from path: String, to target: String, keepingSource: Bool) {
        // A moved item keeps its file ID; a copy gets new ones when asked.
        nextcloud?.fileIds.withLock { ids in
            for key in Array(ids.byPath.keys) where key == target || key.hasPrefix(target + "/") {
                ids.byPath[key] = nil
            }
            guard !keepingSource else { return }
            for key in Array(ids.byPath.keys) where key == path || key.hasPrefix(path + "/") {
                ids.byPath[target + key.dropFirst(path.count)] = ids.byPath.removeValue(forKey: key)
            }
        }
        nextcloud?.checksums.withLock { all in
            for key in Array(all.keys) where key == target || key.hasPrefix(target + "/") { all[key] = nil }
            for key in Array(all.keys) where key == path || key.hasPrefix(path + "/") {
                all[target + key.dropFirst(path.count)] = keepingSource ? all[key] : all.removeValue(forKey: key)
            }
        }
        deadProperties.withLock { all in
            for key in Array(all.keys) where key == target || key.hasPrefix(target + "/") { all[key] = nil }
            for key in Array(all.keys) where key == path || key.hasPrefix(path + "/") {
                all[target + key.dropFirst(path.count)] = keepingSource ? all[key] : all.removeValue(forKey: key)
            }
        }
    }

    func removeProperties(under path: String) {
        nextcloud?.checksums.withLock { all in
            for key in Array(all.keys) where key == path || key.hasPrefix(path + "/") { all[key] = nil }
        }
        deadProperties.withLock { all in
            for key in Array(all.keys) where key == path || key.hasPrefix(path + "/") { all[key] = nil }
        }
    }

    /// The href of a tree path, as the listings write it.
    func href(_ path: String) -> String {
        path.isEmpty
            ? rootPath + "/"
            : rootPath + "/"
                + path.split(separator: "/").map { Self.encode(String($0), flavor: flavor) }.joined(separator: "/")
    }

    /// The prefixes Nextcloud's answers declare on their root, for its own namespaces.
    static func declaredPrefix(_ namespace: String) -> String? {
        switch namespace {
        case "http://owncloud.org/ns": "oc"
        case "http://nextcloud.org/ns": "nc"
        case "http://sabredav.org/ns": "s"
        default: nil
        }
    }

    static func element(_ name: DAVPropertyName, _ value: String, declared: Bool = false) -> String {
        if declared, let prefix = declaredPrefix(name.namespace) {
            return value.isEmpty
                ? "<\(prefix):\(name.name)/>" : "<\(prefix):\(name.name)>\(value)</\(prefix):\(name.name)>"
        }
        return name.namespace.isEmpty
            ? "<\(name.name) xmlns=\"\">\(value)</\(name.name)>"
            : "<x:\(name.name) xmlns:x=\"\(MockXMLElement.escape(name.namespace))\">\(value)</x:\(name.name)>"
    }

    static func emptyElement(_ name: DAVPropertyName) -> String {
        name.namespace.isEmpty
            ? "<\(name.name) xmlns=\"\"/>" : "<x:\(name.name) xmlns:x=\"\(MockXMLElement.escape(name.namespace))\"/>"
    }

    static func reason(_ status: Int) -> String {
        switch status {
        case 200: "OK"
        case 403: "Forbidden"
        case 404: "Not Found"
        case 424: "Failed Dependency"
        default: "Status"
        }
    }
}
