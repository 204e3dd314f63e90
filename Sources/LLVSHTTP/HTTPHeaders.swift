/// HTTP header fields in order, looked up without regard to case.
public struct HTTPHeaders: Sendable, Equatable, Sequence, ExpressibleByDictionaryLiteral {
    public private(set) var fields: [(name: String, value: String)] = []

    public init() {}
    public init(_ fields: [(String, String)]) { self.fields = fields.map { (name: $0.0, value: $0.1) } }
    public init(dictionaryLiteral elements: (String, String)...) { self.init(elements) }

    public subscript(name: String) -> String? {
        get { fields.first { Self.sameName($0.name, name) }?.value }
        set {
            fields.removeAll { Self.sameName($0.name, name) }
            if let newValue { fields.append((name, newValue)) }
        }
    }

    public func values(_ name: String) -> [String] {
        fields.filter { Self.sameName($0.name, name) }.map(\.value)
    }

    public mutating func add(_ name: String, _ value: String) { fields.append((name, value)) }
    public mutating func remove(_ name: String) { self[name] = nil }

    public func makeIterator() -> IndexingIterator<[(name: String, value: String)]> { fields.makeIterator() }

    /// Field names are ASCII tokens, compared without regard to ASCII case on their bytes: every answer's headers
    /// are looked up several times, and Foundation's case-insensitive compare goes through NSString for each.
    static func sameName(_ a: String, _ b: String) -> Bool {
        var left = a.utf8.makeIterator(), right = b.utf8.makeIterator()
        while true {
            switch (left.next(), right.next()) {
            case (nil, nil): return true
            case (let x?, let y?) where x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A):
                continue
            default: return false
            }
        }
    }

    /// What one header line libcurl hands over says: read from its bytes, because it runs for every line of every
    /// answer, and a String per line (then an array of its bytes to find the colon) cost more than the parse.
    enum Line: Equatable {
        /// A status line (`HTTP/1.1 200 OK`), which starts a new set of headers; 0 when it has no number.
        case status(Int)
        case field(name: String, value: String)
        /// The blank line that ends the headers, or a line with no colon.
        case other
    }

    static func line(_ raw: UnsafeRawBufferPointer) -> Line {
        let bytes = withoutLineEnd(raw)
        if bytes.starts(with: "HTTP/".utf8) {
            // The code follows the first space: digits up to the next space or the end.
            guard let space = bytes.firstIndex(of: 0x20) else { return .status(0) }
            var code = 0, index = space + 1
            while index < bytes.endIndex, (0x30...0x39).contains(bytes[index]), code < 1000 {
                code = code * 10 + Int(bytes[index] - 0x30)
                index += 1
            }
            return .status(code)
        }
        guard let field = field(bytes) else { return .other }
        return .field(name: field.name, value: field.value)
    }

    /// A line without its CR and LF.
    static func withoutLineEnd(_ bytes: UnsafeRawBufferPointer) -> UnsafeRawBufferPointer {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A { end -= 1 }
        return UnsafeRawBufferPointer(rebasing: bytes[0..<end])
    }

    /// A `name: value` line's name and value, without the spaces and tabs around them; nil for a line with no colon.
    static func field(_ bytes: UnsafeRawBufferPointer) -> (name: String, value: String)? {
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        func text(_ range: Range<Int>) -> String {
            var (start, end) = (range.lowerBound, range.upperBound)
            while start < end, blank(bytes[start]) { start += 1 }
            while end > start, blank(bytes[end - 1]) { end -= 1 }
            return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
        }
        return (text(0..<colon), text((colon + 1)..<bytes.count))
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.map { "\($0.name.lowercased()):\($0.value)" }
            == rhs.fields.map { "\($0.name.lowercased()):\($0.value)" }
    }
}

import Foundation
