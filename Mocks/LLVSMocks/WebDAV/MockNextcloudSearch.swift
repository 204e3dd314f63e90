import Foundation
import LLVSHTTP

/// Nextcloud's SEARCH (RFC 5323 basicsearch) at `/remote.php/dav/`: what its clients find files by (nc-py-api's
/// `find`, and its `move`, `copy` and `by_id`, which look the result up by file ID). The scope is a folder of the
/// user's files; the conditions are `eq`, `like` (SQL's `%` and `_`), `gt`, `gte`, `lt`, `lte`, `is-collection`,
/// `and`, `or` and `not` over the name, the content type, the size, the file ID, the modification time and the
/// favorite flag; the answer lists each match with the properties selected.
extension MockWebDAVServer {
    static let searchRoots: Set<String> = ["/remote.php/dav", "/remote.php/dav/"]

    func nextcloudSearch(_ request: IncomingRequest, _ nextcloud: MockNextcloudState) -> MockResponse? {
        guard request.method == "SEARCH", Self.searchRoots.contains(request.rawPath) else { return nil }
        func refused(_ message: String) -> MockResponse {
            Self.sabreError(400, exception: "Sabre\\DAV\\Exception\\BadRequest", message: message)
        }
        guard let root = MockXMLElement.parse(request.bodyData), root.namespace == "DAV:", root.name == "searchrequest",
            let search = root.child("DAV:", "basicsearch")
        else { return refused("The body is not a DAV:searchrequest with a basicsearch") }
        let selected =
            search.child("DAV:", "select")?.child("DAV:", "prop")?.elements.map {
                DAVPropertyName(namespace: $0.namespace, name: $0.name)
            } ?? []
        guard let scope = search.child("DAV:", "from")?.child("DAV:", "scope"),
            let scopeHref = scope.child("DAV:", "href")?.text
        else {
            return refused("The search has no scope")
        }
        let prefix = "/files/\(nextcloud.settings.user)"
        let scopePath =
            scopeHref.hasPrefix("/remote.php/dav") ? String(scopeHref.dropFirst("/remote.php/dav".count)) : scopeHref
        guard scopePath == prefix || scopePath.hasPrefix(prefix + "/") else {
            return Self.sabreError(
                404, exception: "Sabre\\DAV\\Exception\\NotFound",
                message: "The scope \(scopeHref) is not one of the user's folders")
        }
        let folder = scopePath.dropFirst(prefix.count).split(separator: "/").map {
            String($0).removingPercentEncoding ?? String($0)
        }.joined(separator: "/")
        let infinite = scope.child("DAV:", "depth")?.text.lowercased() != "1"
        let condition = search.child("DAV:", "where")?.elements.first
        let candidates: [(String, Node)]? = tree.withLock { tree in
            guard case .folder? = tree[folder] else { return nil }
            let under = folder.isEmpty ? "" : folder + "/"
            return tree.filter { key, _ in
                !key.isEmpty && key != folder && key.hasPrefix(under)
                    && (infinite || !key.dropFirst(under.count).contains("/"))
            }.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
        }
        guard let candidates else {
            return Self.sabreError(
                404, exception: "Sabre\\DAV\\Exception\\NotFound", message: "The scope \(scopeHref) does not exist")
        }
        var matches: [(String, Node)] = []
        for (path, node) in candidates {
            switch Self.holds(condition, path: path, node: node, fileId: nextcloud.fileNumber(path)) {
            case .some(true): matches.append((path, node))
            case .some(false): break
            case nil: return refused("The search uses a condition or property this server does not search by")
            }
        }
        let p = flavor.prefix
        var xml =
            #"<?xml version="1.0" encoding="utf-8"?>"#
            + "\n<\(p):multistatus xmlns:\(p)=\"DAV:\"\(flavor.extraNamespaces)>"
        for (path, node) in matches {
            var href = href(path)
            if case .folder = node { href += "/" }
            xml +=
                "<\(p):response><\(p):href>\(Self.xmlEscape(href))</\(p):href>"
                + propstats(node, path: path, request: .some(selected)) + "</\(p):response>"
        }
        xml += "</\(p):multistatus>"
        return .text(207, xml, contentType: "application/xml; charset=utf-8")
    }

    /// Whether an item meets a condition; nil for a condition the mock does not know (refused, as Nextcloud refuses
    /// what it cannot search by). No condition holds for every item.
    static func holds(_ condition: MockXMLElement?, path: String, node: Node, fileId: Int) -> Bool? {
        guard let condition else { return true }
        guard condition.namespace == "DAV:" else { return nil }
        switch condition.name {
        case "and", "or":
            var results: [Bool] = []
            for part in condition.elements {
                guard let result = holds(part, path: path, node: node, fileId: fileId) else { return nil }
                results.append(result)
            }
            return condition.name == "and" ? results.allSatisfy { $0 } : results.contains(true)
        case "not":
            return condition.elements.first.flatMap { holds($0, path: path, node: node, fileId: fileId) }.map { !$0 }
        case "is-collection":
            if case .folder = node { return true }
            return false
        case "eq", "like", "gt", "gte", "lt", "lte":
            guard let property = condition.child("DAV:", "prop")?.elements.first,
                let literal = condition.child("DAV:", "literal")?.text,
                let value = searchValue(property, path: path, node: node, fileId: fileId)
            else { return nil }
            return compare(value, literal, condition.name)
        default:
            return nil
        }
    }

    /// An item's value of a searchable property, as text or a number.
    private enum SearchValue {
        case text(String)
        case number(Double)
    }

    private static func searchValue(_ property: MockXMLElement, path: String, node: Node, fileId: Int) -> SearchValue? {
        let name = String(path.split(separator: "/").last ?? "")
        switch (property.namespace, property.name) {
        case ("DAV:", "displayname"): return .text(name)
        case ("DAV:", "getcontenttype"):
            if case .folder = node { return .text("httpd/unix-directory") }
            return .text("application/octet-stream")
        case ("DAV:", "getlastmodified"):
            switch node {
            case .folder(let modified), .file(_, let modified, _): return .number(modified.timeIntervalSince1970)
            }
        case ("http://owncloud.org/ns", "size"):
            if case .file(let content, _, _) = node { return .number(Double(content.size)) }
            return .number(0)
        case ("http://owncloud.org/ns", "fileid"): return .number(Double(fileId))
        case ("http://owncloud.org/ns", "favorite"): return .number(0)
        default: return nil
        }
    }

    private static func compare(_ value: SearchValue, _ literal: String, _ operation: String) -> Bool? {
        switch value {
        case .text(let text):
            switch operation {
            case "eq": return text == literal
            case "like": return like(text.lowercased(), literal.lowercased())
            default: return nil
            }
        case .number(let number):
            // A literal is a number, or (for times) an ISO 8601 date. Like PHP's intval, which Nextcloud reads it with,
            // a number may be followed by other text: an `OC-FileId` (`00000123ocinstance`) finds file 123.
            let leadingDigits = literal.prefix { $0.isASCII && $0.isNumber }
            guard
                let other = Double(literal) ?? ISO8601DateFormatter().date(from: literal)?.timeIntervalSince1970
                    ?? (leadingDigits.isEmpty ? nil : Double(leadingDigits))
            else { return nil }
            switch operation {
            case "eq": return number == other
            case "gt": return number > other
            case "gte": return number >= other
            case "lt": return number < other
            case "lte": return number <= other
            default: return nil
            }
        }
    }

    /// SQL's LIKE: `%` any run of characters, `_` any one; in time proportional to the text's length times the
    /// pattern's, whatever the pattern.
    private static func like(_ text: String, _ pattern: String) -> Bool {
        let text = Array(text), pattern = Array(pattern)
        // matched[j]: whether the text so far matches the first j characters of the pattern.
        var matched = [Bool](repeating: false, count: pattern.count + 1)
        matched[0] = true
        for j in pattern.indices where pattern[j] == "%" { matched[j + 1] = matched[j] }
        for character in text {
            var next = [Bool](repeating: false, count: pattern.count + 1)
            for j in pattern.indices {
                switch pattern[j] {
                case "%": next[j + 1] = next[j] || matched[j + 1]
                case "_": next[j + 1] = matched[j]
                default: next[j + 1] = matched[j] && pattern[j] == character
                }
            }
            matched = next
        }
        return matched[pattern.count]
    }
}
