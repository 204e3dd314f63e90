import Foundation
import LLVSSupport

/// Reads upstream map nodes straight from their JSON bytes. An import reads a sub-node for every bucket each version
/// changed, tens of thousands for a large store, so a general decoder's cost of building every value dominates it;
/// this reader builds nothing but the strings it keeps, comparing member names as bytes. It is a strict JSON reader (any key order and whitespace, every escape,
/// unknown keys skipped, nesting bounded), limited to the node shapes `UpstreamMapNode` describes.
enum UpstreamMapNodeParser {
    typealias Failure = JSONByteReader.Failure

    /// `keepingKeyStrings: false` skips each value entry's `key` (its `keyString` is then the value ID): an import
    /// needs only the value references.
    static func parse(_ data: Data, keepingKeyStrings: Bool = true) throws -> UpstreamMapNode {
        var parser = JSONByteReader(bytes: [UInt8](data))
        let node = try parser.upstreamMapNode(keepingKeyStrings: keepingKeyStrings)
        guard parser.isAtEnd() else { throw parser.fail("text follows the node") }
        return node
    }
}

extension JSONByteReader {
    mutating func upstreamMapNode(keepingKeyStrings: Bool) throws -> UpstreamMapNode {
        var reference: UpstreamNodeReference?
        var children: UpstreamMapNode.Children?
        try object { parser, name in
            if name == "reference" {
                reference = try parser.nodeReference()
            } else if name == "children" {
                try parser.object { parser, name in
                    if name == "nodes" {
                        var nodes: [UpstreamNodeReference] = []
                        try parser.array { parser in nodes.append(try parser.nodeReference()) }
                        children = .nodes(nodes)
                    } else if name == "values" {
                        var values: [UpstreamMapNode.ValueEntry] = []
                        try parser.array { parser in
                            values.append(try parser.valueEntry(keepingKeyString: keepingKeyStrings))
                        }
                        children = .values(values)
                    } else {
                        try parser.skipValue()
                    }
                }
            } else {
                try parser.skipValue()
            }
        }
        guard let reference else { throw fail("the node has no reference") }
        guard let children else { throw fail("the node has neither nodes nor values") }
        return UpstreamMapNode(reference: reference, children: children)
    }

    mutating func nodeReference() throws -> UpstreamNodeReference {
        var key: String?, version: String?
        try object { parser, name in
            if name == "key" {
                key = try parser.string()
            } else if name == "version" {
                version = try parser.string()
            } else {
                try parser.skipValue()
            }
        }
        guard let key, let version else { throw fail("a reference lacks its key or version") }
        return UpstreamNodeReference(key: key, version: Version.ID(version))
    }

    mutating func valueEntry(keepingKeyString: Bool) throws -> UpstreamMapNode.ValueEntry {
        var keyString: String?, valueId: String?, stored: String?
        try object { parser, name in
            if name == "key", keepingKeyString {
                try parser.object { parser, name in
                    if name == "keyString" { keyString = try parser.string() } else { try parser.skipValue() }
                }
            } else if name == "valueReference" {
                try parser.object { parser, name in
                    if name == "valueId" {
                        valueId = try parser.string()
                    } else if name == "storedVersionId" {
                        stored = try parser.string()
                    } else {
                        try parser.skipValue()
                    }
                }
            } else {
                try parser.skipValue()
            }
        }
        guard let valueId, let stored else { throw fail("a value entry lacks its valueId or storedVersionId") }
        return UpstreamMapNode.ValueEntry(
            key: .init(keyString: keyString ?? valueId),
            valueReference: Value.Reference(valueId: Value.ID(valueId), storedVersionId: Version.ID(stored)))
    }
}
