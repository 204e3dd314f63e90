import Foundation

/// The WebDAV mock's resources by path, keyed byte for byte (`MockNameKey`): a composed and a decomposed spelling of a
/// name are two resources, as on the disk under Apache, nginx or rclone serve.
struct MockDAVTree: Sequence, ExpressibleByDictionaryLiteral {
    typealias Node = MockWebDAVServer.Node
    private var nodes: [MockNameKey: Node] = [:]

    init(dictionaryLiteral elements: (String, Node)...) {
        for (path, node) in elements { nodes[MockNameKey(path)] = node }
    }

    subscript(path: String) -> Node? {
        get { nodes[MockNameKey(path)] }
        set { nodes[MockNameKey(path)] = newValue }
    }

    var keys: [String] { nodes.keys.map(\.text) }

    @discardableResult
    mutating func removeValue(forKey path: String) -> Node? { nodes.removeValue(forKey: MockNameKey(path)) }

    func filter(_ isIncluded: (String, Node) -> Bool) -> [(key: String, value: Node)] {
        nodes.compactMap { isIncluded($0.key.text, $0.value) ? (key: $0.key.text, value: $0.value) : nil }
    }

    func makeIterator() -> AnyIterator<(key: String, value: Node)> {
        var inner = nodes.makeIterator()
        return AnyIterator { inner.next().map { (key: $0.key.text, value: $0.value) } }
    }
}
