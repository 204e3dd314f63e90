import Foundation
#if canImport(FoundationXML)
import FoundationXML
#endif

/// A request body as a small tree of namespaced elements, read with Foundation's XMLParser: what PROPFIND and
/// PROPPATCH need to find their instructions and to keep a dead property's value (elements, text and namespaces)
/// exactly as a client sent it.
struct MockXMLElement: Sendable, Equatable {
    var namespace: String
    var name: String
    var attributes: [String: String] = [:]
    var children: [Child] = []

    enum Child: Sendable, Equatable {
        case element(MockXMLElement)
        case text(String)
    }

    var elements: [MockXMLElement] { children.compactMap { if case .element(let e) = $0 { e } else { nil } } }

    /// The text directly inside, without the blanks around it.
    var text: String {
        children.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined().trimmingCharacters(
            in: .whitespacesAndNewlines)
    }

    /// The text directly inside, exactly as sent (an S3 key may start or end with spaces).
    var rawText: String {
        children.compactMap { if case .text(let text) = $0 { text } else { nil } }.joined()
    }

    func child(_ namespace: String, _ name: String) -> MockXMLElement? {
        elements.first { $0.namespace == namespace && $0.name == name }
    }

    /// Parses a document; nil when it is not well-formed XML with well-formed namespaces.
    static func parse(_ data: Data) -> MockXMLElement? {
        let builder = Builder()
        let parser = XMLParser(data: data)
        parser.shouldProcessNamespaces = true
        parser.delegate = builder
        // On Linux parse() can answer true and still have met an error.
        guard parser.parse(), parser.parserError == nil, builder.failed == false else { return nil }
        return builder.root
    }

    /// The element's contents as XML, each element declaring its own namespace (so a value keeps its meaning
    /// wherever it is written back).
    var innerXML: String { children.map(Self.render).joined() }

    private static func render(_ child: Child) -> String {
        switch child {
        case .text(let text): return escape(text)
        case .element(let element):
            let attributes = element.attributes.sorted { $0.key < $1.key }.map { " \($0.key)=\"\(escape($0.value))\"" }
                .joined()
            return
                "<\(element.name) xmlns=\"\(escape(element.namespace))\"\(attributes)>\(element.innerXML)</\(element.name)>"
        }
    }

    static func escape(_ text: String) -> String {
        text.replacingOccurrences(of: "&", with: "&amp;").replacingOccurrences(of: "<", with: "&lt;")
            .replacingOccurrences(of: ">", with: "&gt;")
            .replacingOccurrences(of: "\"", with: "&quot;")
    }

    private final class Builder: NSObject, XMLParserDelegate {
        var stack: [MockXMLElement] = []
        var root: MockXMLElement?
        var failed = false

        func parser(
            _ parser: XMLParser, didStartElement elementName: String, namespaceURI: String?, qualifiedName: String?,
            attributes: [String: String] = [:]
        ) {
            stack.append(
                MockXMLElement(
                    namespace: namespaceURI ?? "", name: elementName,
                    attributes: attributes.filter { !$0.key.hasPrefix("xmlns") }))
        }

        func parser(
            _ parser: XMLParser, didEndElement elementName: String, namespaceURI: String?, qualifiedName: String?
        ) {
            guard let element = stack.popLast() else { failed = true; return }
            if stack.isEmpty { root = element } else { stack[stack.count - 1].children.append(.element(element)) }
        }

        func parser(_ parser: XMLParser, foundCharacters string: String) {
            guard !stack.isEmpty else { return }
            if case .text(let previous)? = stack[stack.count - 1].children.last {
                stack[stack.count - 1].children[stack[stack.count - 1].children.count - 1] = .text(previous + string)
            } else {
                stack[stack.count - 1].children.append(.text(string))
            }
        }

        func parser(_ parser: XMLParser, parseErrorOccurred parseError: any Error) { failed = true }
    }
}
