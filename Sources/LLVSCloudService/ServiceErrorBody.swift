import Foundation
import LLVSHTTP

/// How every connector reads its service's error body: decoded with `Decodable` into the shape the service
/// documents, and when the body is not that JSON (a proxy's HTML page, an empty body), the start of its text as the
/// message. Classifiers are the only callers.
public struct ServiceErrorBody<Shape: Decodable> {
    /// The body in the service's shape; nil when it is not.
    public let shape: Shape?
    /// The first 200 characters of the body, for a message when the shape says nothing.
    public let text: String

    public init(_ response: HTTPResponse) {
        shape = response.body.isEmpty ? nil : try? JSONDecoder().decode(Shape.self, from: response.body)
        text = String(response.text.prefix(200))
    }
}

/// A JSON member that some answers give as one object and others as an array of them (Box's `conflicts`); members
/// that are not a `Element` are left out rather than failing the whole body.
public struct OneOrMany<Element: Decodable>: Decodable {
    public var elements: [Element]

    public init(from decoder: any Decoder) throws {
        if var list = try? decoder.unkeyedContainer() {
            var elements: [Element] = []
            while !list.isAtEnd {
                if let element = try? list.decode(Element.self) {
                    elements.append(element)
                } else {
                    _ = try? list.decode(Skipped.self)
                }
            }
            self.elements = elements
        } else {
            elements = (try? Element(from: decoder)).map { [$0] } ?? []
        }
    }

    /// Decodes anything, so a list moves past an element of another shape.
    private struct Skipped: Decodable {
        init(from decoder: any Decoder) throws {}
    }
}
