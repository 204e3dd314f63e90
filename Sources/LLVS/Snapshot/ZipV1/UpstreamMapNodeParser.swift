import Foundation

/// Reads upstream map nodes straight from their JSON bytes. An import reads every version's root node, which lists
/// every sub-node of that version (256 for UUID ids), so a 10,000-version snapshot holds millions of references:
/// Foundation's decoders took about 300 µs a root, a general C parser (Jansson) 130 µs; this reader, which builds
/// nothing but the strings it keeps, takes a few. It is a strict JSON reader (any key order and whitespace,
/// every escape, unknown keys skipped, nesting bounded), limited to the node shapes `UpstreamMapNode` describes.
struct UpstreamMapNodeParser {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let bytes: [UInt8]
    private var position = 0

    static func parse(_ data: Data) throws -> UpstreamMapNode {
        var parser = UpstreamMapNodeParser(bytes: [UInt8](data))
        let node = try parser.node()
        parser.skipWhitespace()
        guard parser.position == parser.bytes.count else { throw parser.fail("text follows the node") }
        return node
    }

    private init(bytes: [UInt8]) { self.bytes = bytes }

    private func fail(_ what: String) -> Failure { Failure(description: "\(what) at byte \(position)") }

    private mutating func skipWhitespace() {
        while position < bytes.count, bytes[position] == 0x20 || bytes[position] == 0x0A || bytes[position] == 0x0D || bytes[position] == 0x09 {
            position += 1
        }
    }

    private mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { throw fail("expected '\(Character(UnicodeScalar(byte)))'") }
        position += 1
    }

    /// Whether the next byte (after whitespace) is `byte`; consumes it if so.
    private mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// The members of an object, each handed to `member` with its key, which must read or skip the value.
    private mutating func object(_ member: (inout UpstreamMapNodeParser, String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if take(UInt8(ascii: "}")) { return }
        repeat {
            let key = try string()
            try expect(UInt8(ascii: ":"))
            try member(&self, key)
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    private mutating func array(_ element: (inout UpstreamMapNodeParser) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if take(UInt8(ascii: "]")) { return }
        repeat { try element(&self) } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
    }

    mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\"), bytes[position] >= 0x20 {
            position += 1
        }
        guard position < bytes.count else { throw fail("a string does not end") }
        if bytes[position] == UInt8(ascii: "\"") {
            defer { position += 1 }
            return String(decoding: bytes[start..<position], as: UTF8.self)
        }
        // Escapes (or a control character, which JSON forbids): the slow way, from the start.
        var scalars = String.UnicodeScalarView()
        scalars.append(contentsOf: String(decoding: bytes[start..<position], as: UTF8.self).unicodeScalars)
        var pending: [UInt8] = []
        func flush() { if !pending.isEmpty { scalars.append(contentsOf: String(decoding: pending, as: UTF8.self).unicodeScalars); pending = [] } }
        while true {
            guard position < bytes.count else { throw fail("a string does not end") }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""):
                flush()
                return String(scalars)
            case UInt8(ascii: "\\"):
                flush()
                guard position < bytes.count else { throw fail("a string does not end") }
                let escape = bytes[position]
                position += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{8}")
                case UInt8(ascii: "f"): scalars.append("\u{C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"):
                    var code = try hex4()
                    if (0xD800..<0xDC00).contains(code) {
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"), bytes[position + 1] == UInt8(ascii: "u") else {
                            throw fail("a lone surrogate")
                        }
                        position += 2
                        let low = try hex4()
                        guard (0xDC00..<0xE000).contains(low) else { throw fail("a lone surrogate") }
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                    }
                    guard let scalar = UnicodeScalar(code) else { throw fail("a lone surrogate") }
                    scalars.append(scalar)
                default: throw fail("an unknown escape")
                }
            case 0..<0x20:
                throw fail("a control character in a string")
            default:
                pending.append(byte)
            }
        }
    }

    private mutating func hex4() throws -> UInt32 {
        guard position + 4 <= bytes.count else { throw fail("a \\u escape is cut") }
        var value: UInt32 = 0
        for _ in 0..<4 {
            let byte = bytes[position]
            position += 1
            let digit: UInt8
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
            case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
            case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
            default: throw fail("a bad \\u escape")
            }
            value = value << 4 | UInt32(digit)
        }
        return value
    }

    /// Skips any JSON value, nested at most `depth` deep.
    private mutating func skipValue(depth: Int = 32) throws {
        guard depth > 0 else { throw fail("nesting too deep") }
        skipWhitespace()
        guard position < bytes.count else { throw fail("a value is missing") }
        switch bytes[position] {
        case UInt8(ascii: "\""): _ = try string()
        case UInt8(ascii: "{"): try object { parser, _ in try parser.skipValue(depth: depth - 1) }
        case UInt8(ascii: "["): try array { parser in try parser.skipValue(depth: depth - 1) }
        default:
            let start = position
            while position < bytes.count, !"{}[],: \n\r\t\"".utf8.contains(bytes[position]) { position += 1 }
            let word = String(decoding: bytes[start..<position], as: UTF8.self)
            guard ["true", "false", "null"].contains(word) || Double(word) != nil else { throw fail("not a JSON value") }
        }
    }

    private mutating func node() throws -> UpstreamMapNode {
        var reference: UpstreamNodeReference?
        var children: UpstreamMapNode.Children?
        try object { parser, key in
            switch key {
            case "reference": reference = try parser.nodeReference()
            case "children":
                try parser.object { parser, key in
                    switch key {
                    case "nodes":
                        var nodes: [UpstreamNodeReference] = []
                        try parser.array { parser in nodes.append(try parser.nodeReference()) }
                        children = .nodes(nodes)
                    case "values":
                        var values: [UpstreamMapNode.ValueEntry] = []
                        try parser.array { parser in values.append(try parser.valueEntry()) }
                        children = .values(values)
                    default: try parser.skipValue()
                    }
                }
            default: try parser.skipValue()
            }
        }
        guard let reference else { throw fail("the node has no reference") }
        guard let children else { throw fail("the node has neither nodes nor values") }
        return UpstreamMapNode(reference: reference, children: children)
    }

    private mutating func nodeReference() throws -> UpstreamNodeReference {
        var key: String?, version: String?
        try object { parser, name in
            switch name {
            case "key": key = try parser.string()
            case "version": version = try parser.string()
            default: try parser.skipValue()
            }
        }
        guard let key, let version else { throw fail("a reference lacks its key or version") }
        return UpstreamNodeReference(key: key, version: Version.ID(version))
    }

    private mutating func valueEntry() throws -> UpstreamMapNode.ValueEntry {
        var keyString: String?, valueId: String?, stored: String?
        try object { parser, name in
            switch name {
            case "key":
                try parser.object { parser, name in
                    if name == "keyString" { keyString = try parser.string() } else { try parser.skipValue() }
                }
            case "valueReference":
                try parser.object { parser, name in
                    switch name {
                    case "valueId": valueId = try parser.string()
                    case "storedVersionId": stored = try parser.string()
                    default: try parser.skipValue()
                    }
                }
            default: try parser.skipValue()
            }
        }
        guard let valueId, let stored else { throw fail("a value entry lacks its valueId or storedVersionId") }
        return UpstreamMapNode.ValueEntry(key: .init(keyString: keyString ?? valueId),
                                          valueReference: Value.Reference(valueId: Value.ID(valueId), storedVersionId: Version.ID(stored)))
    }
}
