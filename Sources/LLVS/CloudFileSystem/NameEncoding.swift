import Foundation
import LLVSSupport

/// A reversible encoding of the names a service refuses (as rclone's lib/encoder): each forbidden ASCII character
/// becomes its full-width look-alike (`:` → `：`), a leading or trailing space `␠`, a trailing dot `．`. A name that
/// already holds one of those look-alikes gets it quoted with `‛`, so every name decodes to exactly what was
/// encoded and two different names never meet. A connector encodes each path component before it reaches the
/// service and decodes the names it lists.
public struct NameEncoding: Sendable, Equatable {
    /// ASCII characters the service refuses anywhere in a name.
    public var forbidden: Set<Character>
    public var leadingSpace: Bool
    public var trailingSpace: Bool
    public var trailingDot: Bool

    public init(
        forbidden: Set<Character>, leadingSpace: Bool = false, trailingSpace: Bool = false, trailingDot: Bool = false
    ) {
        precondition(
            forbidden.allSatisfy { $0.isASCII && $0 != " " && !$0.isLetter && !$0.isNumber },
            "only ASCII punctuation can be encoded")
        self.forbidden = forbidden
        self.leadingSpace = leadingSpace
        self.trailingSpace = trailingSpace
        self.trailingDot = trailingDot
    }

    static let quote: Character = "\u{201B}"
    static let space: Character = "\u{2420}"
    static let dot: Character = "\u{FF0E}"

    /// `!`…`~` map to U+FF01…U+FF5E.
    static func fullWidth(_ character: Character) -> Character {
        Character(Unicode.Scalar(UInt32(character.asciiValue!) - 0x21 + 0xFF01)!)
    }

    private var replacements: [Character: Character] {
        var map: [Character: Character] = [:]
        for character in forbidden { map[Self.fullWidth(character)] = character }
        if leadingSpace || trailingSpace { map[Self.space] = " " }
        if trailingDot { map[Self.dot] = "." }
        return map
    }

    /// The name as the service may store it.
    public func encode(_ name: String) -> String {
        let replacements = replacements
        let characters = Array(name)
        var out = ""
        for (index, character) in characters.enumerated() {
            let first = index == 0, last = index == characters.count - 1
            if character == Self.quote || replacements[character] != nil {
                out.append(Self.quote)
                out.append(character)
            } else if forbidden.contains(character) {
                out.append(Self.fullWidth(character))
            } else if character == " ", (first && leadingSpace) || (last && trailingSpace) {
                out.append(Self.space)
            } else if character == ".", last, trailingDot {
                out.append(Self.dot)
            } else {
                out.append(character)
            }
        }
        return out
    }

    /// The name as the user wrote it, from what the service stores.
    public func decode(_ stored: String) -> String {
        let replacements = replacements
        var out = ""
        var quoted = false
        for character in stored {
            if quoted {
                out.append(character)
                quoted = false
            } else if character == Self.quote {
                quoted = true
            } else {
                out.append(replacements[character] ?? character)
            }
        }
        if quoted { out.append(Self.quote) }
        return out
    }
}
