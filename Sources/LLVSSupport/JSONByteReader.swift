import Foundation

/// A strict JSON reader over bytes, for the few hot formats an import reads by the ten thousand (upstream map nodes,
/// version files), where a general decoder's cost would dominate: it builds nothing but the strings asked for,
/// compares member names as bytes, and checks everything it passes over (any key order and whitespace, every
/// escape, nesting bounded). The formats' own readers are extensions that say which members they want.
package struct JSONByteReader {
    package struct Failure: Error, CustomStringConvertible {
        package var description: String
    }

    package let bytes: [UInt8]
    package var position = 0

    package init(bytes: [UInt8]) { self.bytes = bytes }

    package func fail(_ what: String) -> Failure { Failure(description: "\(what) at byte \(position)") }

    package mutating func skipWhitespace() {
        while position < bytes.count,
            bytes[position] == 0x20 || bytes[position] == 0x0A || bytes[position] == 0x0D || bytes[position] == 0x09
        {
            position += 1
        }
    }

    package mutating func expect(_ byte: UInt8) throws {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else {
            throw fail("expected '\(Character(UnicodeScalar(byte)))'")
        }
        position += 1
    }

    /// Whether the next byte (after whitespace) is `byte`; consumes it if so.
    package mutating func take(_ byte: UInt8) -> Bool {
        skipWhitespace()
        guard position < bytes.count, bytes[position] == byte else { return false }
        position += 1
        return true
    }

    /// A member name: its UTF-8 bytes, compared without making a String (a node has several names per value).
    package struct Name {
        package var bytes: ArraySlice<UInt8>
        package static func == (name: Name, text: StaticString) -> Bool {
            // Lengths first: most names tried against a member are of another length.
            guard name.bytes.count == text.utf8CodeUnitCount else { return false }
            return name.bytes.withUnsafeBufferPointer { memcmp($0.baseAddress!, text.utf8Start, $0.count) == 0 }
        }
    }

    /// The members of an object, each handed to `member` with its name, which must read or skip the value.
    package mutating func object(_ member: (inout JSONByteReader, Name) throws -> Void) throws {
        try expect(UInt8(ascii: "{"))
        if take(UInt8(ascii: "}")) { return }
        repeat {
            let name = try memberName()
            try expect(UInt8(ascii: ":"))
            try member(&self, name)
        } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "}"))
    }

    package mutating func memberName() throws -> Name {
        skipWhitespace()
        let start = position + 1
        let plain = try skipString()
        let end = position - 1
        // An escaped (or non-ASCII) name, legal but never written by LLVS, is decoded the slow way.
        if !plain {
            position = start - 1
            return Name(bytes: ArraySlice(Array(try string().utf8)))
        }
        return Name(bytes: bytes[start..<end])
    }

    /// Passes over a string, checking it as `string()` does without building it; whether it is plain (ASCII with
    /// no escape, so its bytes between the quotes are its text).
    @discardableResult
    package mutating func skipString() throws -> Bool {
        try expect(UInt8(ascii: "\""))
        var plain = true
        position = plainRunEnd(from: position)
        while true {
            guard position < bytes.count else { throw fail("a string does not end") }
            let byte = bytes[position]
            position += 1
            switch byte {
            case UInt8(ascii: "\""): return plain
            case UInt8(ascii: "\\"):
                plain = false
                guard position < bytes.count else { throw fail("a string does not end") }
                let escape = bytes[position]
                position += 1
                if escape == UInt8(ascii: "u") {
                    _ = try hex4()
                } else {
                    guard "\"\\/bfnrt".utf8.contains(escape) else { throw fail("an unknown escape") }
                }
            case 0..<0x20: throw fail("a control character in a string")
            case 0x80...: plain = false
            default: break
            }
        }
    }

    /// Where the run of plain string bytes (printable ASCII other than the quote and backslash) from `index` ends:
    /// passed over eight at a time, as member names, IDs and version IDs are most of a map node's bytes.
    package func plainRunEnd(from index: Int) -> Int {
        bytes.withUnsafeBytes { buffer in
            var index = index
            if let base = buffer.baseAddress {
                while index + 8 <= buffer.count,
                    !Self.anyNonPlainByte(base.loadUnaligned(fromByteOffset: index, as: UInt64.self))
                {
                    index += 8
                }
            }
            while index < buffer.count, buffer[index] >= 0x20, buffer[index] < 0x80,
                buffer[index] != UInt8(ascii: "\""),
                buffer[index] != UInt8(ascii: "\\")
            {
                index += 1
            }
            return index
        }
    }

    /// Whether any of the eight bytes in `word` is not plain in a string: 0x80 and above, below 0x20, a quote or a
    /// backslash. (The usual "has a zero byte" test: it may also flag a plain byte next to one that is not, never
    /// miss one; a flagged word is read byte by byte.)
    @inline(__always)
    package static func anyNonPlainByte(_ word: UInt64) -> Bool {
        let ones: UInt64 = 0x0101_0101_0101_0101, highs: UInt64 = 0x8080_8080_8080_8080
        func hasZeroByte(_ x: UInt64) -> UInt64 { (x &- ones) & ~x & highs }
        let below0x20 = (word &- ones &* 0x20) & ~word & highs
        let quote = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\""))))
        let backslash = hasZeroByte(word ^ (ones &* UInt64(UInt8(ascii: "\\"))))
        return (word & highs) | below0x20 | quote | backslash != 0
    }

    package mutating func array(_ element: (inout JSONByteReader) throws -> Void) throws {
        try expect(UInt8(ascii: "["))
        if take(UInt8(ascii: "]")) { return }
        repeat { try element(&self) } while take(UInt8(ascii: ","))
        try expect(UInt8(ascii: "]"))
    }

    package mutating func string() throws -> String {
        try expect(UInt8(ascii: "\""))
        let start = position
        while position < bytes.count, bytes[position] != UInt8(ascii: "\""), bytes[position] != UInt8(ascii: "\\"),
            bytes[position] >= 0x20
        {
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
        func flush() {
            if !pending.isEmpty {
                scalars.append(contentsOf: String(decoding: pending, as: UTF8.self).unicodeScalars); pending = []
            }
        }
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
                        guard position + 1 < bytes.count, bytes[position] == UInt8(ascii: "\\"),
                            bytes[position + 1] == UInt8(ascii: "u")
                        else {
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

    package mutating func hex4() throws -> UInt32 {
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
    package mutating func skipValue(depth: Int = 32) throws {
        guard depth > 0 else { throw fail("nesting too deep") }
        skipWhitespace()
        guard position < bytes.count else { throw fail("a value is missing") }
        switch bytes[position] {
        case UInt8(ascii: "\""): try skipString()
        case UInt8(ascii: "{"): try object { parser, _ in try parser.skipValue(depth: depth - 1) }
        case UInt8(ascii: "["): try array { parser in try parser.skipValue(depth: depth - 1) }
        default:
            let start = position
            while position < bytes.count, !"{}[],: \n\r\t\"".utf8.contains(bytes[position]) { position += 1 }
            let word = String(decoding: bytes[start..<position], as: UTF8.self)
            guard ["true", "false", "null"].contains(word) || Double(word) != nil else {
                throw fail("not a JSON value")
            }
        }
    }

    /// The text of a number, checked against JSON's grammar (`-?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?`).
    package mutating func numberText() throws -> Substring {
        skipWhitespace()
        let start = position
        func digits() -> Int {
            let first = position
            while position < bytes.count, (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(bytes[position]) {
                position += 1
            }
            return position - first
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "-") { position += 1 }
        let integerStart = position
        let integerDigits = digits()
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else {
            throw fail("not a JSON number")
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: ".") {
            position += 1
            guard digits() > 0 else { throw fail("not a JSON number") }
        }
        if position < bytes.count, bytes[position] == UInt8(ascii: "e") || bytes[position] == UInt8(ascii: "E") {
            position += 1
            if position < bytes.count, bytes[position] == UInt8(ascii: "+") || bytes[position] == UInt8(ascii: "-") {
                position += 1
            }
            guard digits() > 0 else { throw fail("not a JSON number") }
        }
        return Substring(String(decoding: bytes[start..<position], as: UTF8.self))
    }

    /// Whether the next value is `null`; consumes it if so.
    package mutating func takeNull() -> Bool {
        skipWhitespace()
        guard position + 4 <= bytes.count, bytes[position..<position + 4].elementsEqual("null".utf8) else {
            return false
        }
        position += 4
        return true
    }

    /// Whether only whitespace is left.
    package mutating func isAtEnd() -> Bool {
        skipWhitespace()
        return position == bytes.count
    }
}
