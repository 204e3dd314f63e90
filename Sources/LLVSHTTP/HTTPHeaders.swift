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
            case (let x?, let y?) where x == y || (x | 0x20 == y | 0x20 && (x | 0x20) >= 0x61 && (x | 0x20) <= 0x7A): continue
            default: return false
            }
        }
    }

    /// A header line as libcurl hands it over, without its line end, decoded as UTF-8.
    static func trimmed(_ bytes: UnsafeRawBufferPointer) -> String {
        var end = bytes.count
        while end > 0, bytes[end - 1] == 0x0D || bytes[end - 1] == 0x0A { end -= 1 }
        return String(decoding: UnsafeRawBufferPointer(rebasing: bytes[0..<end]), as: UTF8.self)
    }

    /// A `name: value` line's name and value, without the spaces and tabs around them; nil for a line with no colon.
    static func field(_ line: String) -> (name: String, value: String)? {
        let bytes = Array(line.utf8)
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        func text(_ range: Range<Int>) -> String {
            var (start, end) = (range.lowerBound, range.upperBound)
            while start < end, blank(bytes[start]) { start += 1 }
            while end > start, blank(bytes[end - 1]) { end -= 1 }
            return String(decoding: bytes[start..<end], as: UTF8.self)
        }
        return (text(0..<colon), text((colon + 1)..<bytes.count))
    }

    public static func == (lhs: HTTPHeaders, rhs: HTTPHeaders) -> Bool {
        lhs.fields.map { "\($0.name.lowercased()):\($0.value)" } == rhs.fields.map { "\($0.name.lowercased()):\($0.value)" }
    }
}

import Foundation
