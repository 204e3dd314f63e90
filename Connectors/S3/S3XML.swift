import CLibXML2
import Foundation

/// An S3 answer as a small tree of elements (local names, text), read with libxml2 as untrusted input: no network,
/// no DTD (refused up front, which rules out entity expansion and external entities). S3's answers are a few levels
/// of plain elements, so a tree with lookups by local name is all the connector needs.
struct S3XMLElement: Sendable {
    var name: String
    var text = ""
    var children: [S3XMLElement] = []

    /// The first child of that local name.
    func child(_ name: String) -> S3XMLElement? { children.first { $0.name == name } }
    /// Every child of that local name.
    func all(_ name: String) -> [S3XMLElement] { children.filter { $0.name == name } }
    /// The text of the first child of that name, trimmed; nil when there is none.
    func value(_ name: String) -> String? {
        child(name).map { $0.text.trimmingCharacters(in: .whitespacesAndNewlines) }
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private static let initialized: Bool = {
        xmlInitParser()
        return true
    }()

    /// The document's root element.
    static func parse(_ data: Data) throws -> S3XMLElement {
        _ = initialized
        guard !data.isEmpty else { throw Failure(description: "the answer is empty") }
        if data.prefix(4096).range(of: Data("<!DOCTYPE".utf8)) != nil {
            throw Failure(description: "the answer declares a DTD, which an S3 answer never needs")
        }
        let options = Int32(XML_PARSE_NONET.rawValue | XML_PARSE_NOWARNING.rawValue | XML_PARSE_NOERROR.rawValue)
        let document = data.withUnsafeBytes { raw -> xmlDocPtr? in
            guard let base = raw.baseAddress else { return nil }
            return xmlReadMemory(
                base.assumingMemoryBound(to: CChar.self), Int32(clamping: raw.count), "s3.xml", nil, options)
        }
        guard let document else { throw Failure(description: "the answer is not well-formed XML") }
        defer { xmlFreeDoc(document) }
        guard document.pointee.intSubset == nil, let root = xmlDocGetRootElement(document) else {
            throw Failure(description: "the answer has no root element, or declares a DTD")
        }
        return element(root, depth: 0)
    }

    private static func element(_ node: xmlNodePtr, depth: Int) -> S3XMLElement {
        var element = S3XMLElement(name: node.pointee.name.map { String(cString: $0) } ?? "")
        var child = node.pointee.children
        while let current = child {
            switch current.pointee.type {
            case XML_ELEMENT_NODE where depth < 16:
                element.children.append(self.element(current, depth: depth + 1))
            case XML_TEXT_NODE, XML_CDATA_SECTION_NODE:
                if let content = current.pointee.content { element.text += String(cString: content) }
            default:
                break
            }
            child = current.pointee.next
        }
        return element
    }
}
