import CLibXML2
import Foundation
import LLVS
import LLVSSupport

/// One `<response>` of a PROPFIND answer.
struct PropfindEntry: Equatable {
    var href: String
    var isCollection = false
    var contentLength: Int64?
    var lastModified: Date?
    var etag: String?
    /// Nextcloud's `oc:checksums` (`SHA1:…`, `MD5:…`), by algorithm.
    var checksums: [ChecksumAlgorithm: String] = [:]
    /// True when some propstat (or the response's own status) is 2xx.
    var isPresent = false
}

/// Reads `207 Multi-Status` answers with libxml2, as untrusted input: no network, no external entities, no DTD at
/// all (which also rules out entity expansion), libxml2's own limits on depth and text size, and elements matched
/// by namespace URI `DAV:` and local name whatever prefix the server chose.
enum PropfindParser {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    static func parse(_ data: Data) throws -> [PropfindEntry] {
        _ = initialized
        guard !data.isEmpty else { throw Failure(description: "the answer is empty") }
        // A WebDAV answer never needs a DTD; refusing one up front rules out entity expansion and external entities.
        if declaresDTD(data) {
            throw Failure(
                description:
                    "the answer declares a DTD, which a WebDAV answer never needs (refused: it could expand entities)")
        }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOERROR.rawValue)
        let document = data.withUnsafeBytes { raw in
            xmlReadMemory(
                raw.baseAddress!.assumingMemoryBound(to: CChar.self), Int32(clamping: raw.count), "propfind.xml", nil,
                options)
        }
        guard let document else { throw Failure(description: "the answer is not well-formed XML") }
        defer { xmlFreeDoc(document) }
        guard document.pointee.intSubset == nil, document.pointee.extSubset == nil else {
            throw Failure(
                description:
                    "the answer declares a DTD, which a WebDAV answer never needs (refused: it could expand entities)")
        }
        guard let root = xmlDocGetRootElement(document), isDAV(root, "multistatus") else {
            throw Failure(description: "the answer is not a DAV: multistatus")
        }
        return try elements(of: root).filter { isDAV($0, "response") }.map(entry)
    }

    private static func entry(_ response: xmlNodePtr) throws -> PropfindEntry {
        var entry = PropfindEntry(href: "")
        var href: String?
        for child in elements(of: response) {
            if isDAV(child, "href") {
                href = trimmed(text(child), .whitespacesAndNewlines)
            } else if isDAV(child, "status") {
                if let code = statusCode(text(child)), (200..<300).contains(code) { entry.isPresent = true }
            } else if isDAV(child, "propstat") {
                let status = elements(of: child).first { isDAV($0, "status") }.flatMap { statusCode(text($0)) } ?? 200
                guard (200..<300).contains(status) else { continue }
                entry.isPresent = true
                for prop in elements(of: child) where isDAV(prop, "prop") {
                    for property in elements(of: prop) { read(property, into: &entry) }
                }
            }
        }
        guard let href, !href.isEmpty else { throw Failure(description: "a response has no href") }
        entry.href = href
        return entry
    }

    private static func read(_ property: xmlNodePtr, into entry: inout PropfindEntry) {
        if isDAV(property, "resourcetype") {
            entry.isCollection = elements(of: property).contains { isDAV($0, "collection") }
        } else if isDAV(property, "getcontentlength") {
            entry.contentLength = Int64(trimmed(text(property), .whitespaces))
        } else if isDAV(property, "getlastmodified") {
            entry.lastModified = HTTPDate.parse(trimmed(text(property), .whitespaces))
        } else if isDAV(property, "getetag") {
            let value = trimmed(text(property), .whitespaces)
            entry.etag = value.isEmpty ? nil : value
        } else if isElement(property, ownCloud, "checksums") {
            // `<oc:checksum>SHA1:… MD5:… ADLER32:…</oc:checksum>`: one element, values apart by spaces.
            for checksum in elements(of: property) where isElement(checksum, ownCloud, "checksum") {
                for value in text(checksum).split(whereSeparator: \.isWhitespace) {
                    let parts = value.split(separator: ":", maxSplits: 1).map(String.init)
                    guard parts.count == 2, !parts[1].isEmpty else { continue }
                    switch parts[0].uppercased() {
                    case "SHA1": entry.checksums[.sha1] = parts[1].lowercased()
                    case "MD5": entry.checksums[.md5] = parts[1].lowercased()
                    case "SHA256": entry.checksums[.sha256] = parts[1].lowercased()
                    default: break
                    }
                }
            }
        }
    }

    /// `HTTP/1.1 200 OK` → 200.
    private static func statusCode(_ line: String) -> Int? {
        let parts = line.utf8.split(separator: UInt8(ascii: " "), maxSplits: 2)
        return parts.count >= 2 ? Int(Substring(parts[1])) : nil
    }

    private static func isDAV(_ node: xmlNodePtr, _ localName: StaticString) -> Bool {
        isElement(node, "DAV:", localName)
    }

    static let ownCloud: StaticString = "http://owncloud.org/ns"

    /// Compared as C strings, where libxml2 keeps them: every element of a listing is matched against several names,
    /// and making Strings of its name and namespace for each match would cost more than the parse.
    private static func isElement(_ node: xmlNodePtr, _ namespaceURI: StaticString, _ localName: StaticString) -> Bool {
        guard let name = node.pointee.name, let namespace = node.pointee.ns?.pointee.href else { return false }
        return equal(name, localName) && equal(namespace, namespaceURI)
    }

    /// Whether the NUL-terminated `text` is exactly `expected`.
    private static func equal(_ text: UnsafePointer<xmlChar>, _ expected: StaticString) -> Bool {
        let count = expected.utf8CodeUnitCount
        let name = UnsafeRawPointer(text).assumingMemoryBound(to: CChar.self)
        let wanted = UnsafeRawPointer(expected.utf8Start).assumingMemoryBound(to: CChar.self)
        // strncmp stops at the end of `name`, so a shorter name is never read past.
        return strncmp(name, wanted, count) == 0 && text[count] == 0
    }

    /// The element children of `node`, walked in place: an array of them for every node of a listing would be a large
    /// part of reading one.
    private static func elements(of node: xmlNodePtr) -> ChildElements { ChildElements(first: node.pointee.children) }

    struct ChildElements: Sequence, IteratorProtocol {
        private var upcoming: xmlNodePtr?

        init(first: xmlNodePtr?) { upcoming = first }

        mutating func next() -> xmlNodePtr? {
            while let current = upcoming {
                upcoming = current.pointee.next
                if current.pointee.type == XML_ELEMENT_NODE { return current }
            }
            return nil
        }
    }

    /// Whether `data` declares a DTD or an entity (`<!DOCTYPE`, `<!ENTITY`), in one pass over its bytes: the check
    /// runs over every listing, which can be megabytes.
    private static func declaresDTD(_ data: Data) -> Bool {
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            let markers = [Array("DOCTYPE".utf8), Array("ENTITY".utf8)]
            var index = 0
            while index + 1 < bytes.count {
                if bytes[index] == UInt8(ascii: "<"), bytes[index + 1] == UInt8(ascii: "!") {
                    let rest = bytes[(index + 2)...]
                    if markers.contains(where: { rest.starts(with: $0) }) { return true }
                }
                index += 1
            }
            return false
        }
    }

    /// `text` without `characters` at either end. A value that starts and ends with a visible ASCII character (nearly
    /// all) is returned as it is: Foundation's trimming goes through NSString and took half the time of parsing a listing.
    private static func trimmed(_ text: String, _ characters: CharacterSet) -> String {
        let bytes = text.utf8
        if let first = bytes.first, let last = bytes.last, (0x21..<0x7F).contains(first), (0x21..<0x7F).contains(last) {
            return text
        }
        return text.trimmingCharacters(in: characters)
    }

    /// The text directly inside an element (text and CDATA children), read without libxml2 allocating.
    private static func text(_ node: xmlNodePtr) -> String {
        var result = ""
        var child = node.pointee.children
        while let current = child {
            if current.pointee.type == XML_TEXT_NODE || current.pointee.type == XML_CDATA_SECTION_NODE,
                let content = current.pointee.content
            {
                result += String(cString: content)
            }
            child = current.pointee.next
        }
        return result
    }
}
