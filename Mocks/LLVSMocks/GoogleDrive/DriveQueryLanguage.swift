import Foundation
import LLVSSupport

/// Drive's search query language (`q`), as much as a client of files needs: `'<id>' in parents`, `name = '…'`,
/// `name contains '…'`, `mimeType = '…'` / `!=`, `trashed = false|true`, time comparisons, `and`, `or`, `not`,
/// parentheses. Literals escape `\` and `'` with a backslash. A query it cannot read is refused, as Drive does.
indirect enum DriveQuery: Sendable, Equatable {
    case and(DriveQuery, DriveQuery)
    case or(DriveQuery, DriveQuery)
    case not(DriveQuery)
    case inParents(String)
    case compare(field: String, op: String, value: Literal)

    enum Literal: Sendable, Equatable {
        case string(String)
        case bool(Bool)
    }

    struct Invalid: Error, CustomStringConvertible {
        var description: String
    }

    /// What an item offers to a query.
    struct Subject {
        var name: String
        var mimeType: String
        var parents: [String]
        var trashed: Bool
        var createdTime: Date
        var modifiedTime: Date
    }

    static func parse(_ text: String) throws -> DriveQuery {
        var parser = Parser(tokens: try tokenize(text))
        let query = try parser.expression()
        guard parser.atEnd else {
            throw Invalid(description: "unexpected \(parser.peek.map { "\($0)" } ?? "end") in the query")
        }
        return query
    }

    /// The parent every match must have, when the query says so at its top level (so the mock looks only there).
    var requiredParent: String? {
        switch self {
        case .inParents(let id): id
        case .and(let a, let b): a.requiredParent ?? b.requiredParent
        default: nil
        }
    }

    /// The name every match must have (ignoring case), when the query says so at its top level.
    var requiredName: String? {
        switch self {
        case .compare("name", "=", .string(let name)): name
        case .and(let a, let b): a.requiredName ?? b.requiredName
        default: nil
        }
    }

    func matches(_ item: Subject) throws -> Bool {
        switch self {
        case .and(let a, let b): return try a.matches(item) && b.matches(item)
        case .or(let a, let b): return try a.matches(item) || b.matches(item)
        case .not(let a): return try !a.matches(item)
        case .inParents(let id): return item.parents.contains(id)
        case .compare(let field, let op, let value):
            switch (field, value) {
            case ("name", .string(let text)), ("fullText", .string(let text)):
                return try Self.compareText(item.name, op, text, caseInsensitive: true, prefixContains: field == "name")
            case ("mimeType", .string(let text)):
                return try Self.compareText(item.mimeType, op, text, caseInsensitive: false, prefixContains: false)
            case ("trashed", .bool(let flag)), ("starred", .bool(let flag)):
                let actual = field == "trashed" ? item.trashed : false
                switch op {
                case "=": return actual == flag
                case "!=": return actual != flag
                default: throw Invalid(description: "\(field) takes = or !=")
                }
            case ("modifiedTime", .string(let text)), ("createdTime", .string(let text)):
                guard let date = RFC3339Date.parse(text) else {
                    throw Invalid(description: "\(text) is not an RFC 3339 time")
                }
                let actual = field == "modifiedTime" ? item.modifiedTime : item.createdTime
                switch op {
                case "=": return actual == date
                case "!=": return actual != date
                case "<": return actual < date
                case "<=": return actual <= date
                case ">": return actual > date
                case ">=": return actual >= date
                default: throw Invalid(description: "\(field) takes a comparison")
                }
            default:
                throw Invalid(description: "\(field) \(op) is not a query term Drive understands this way")
            }
        }
    }

    /// `name =` ignores case; `name contains` matches the start of the name or of a word in it (Drive's prefix
    /// matching); `mimeType` compares exactly.
    private static func compareText(
        _ actual: String, _ op: String, _ text: String, caseInsensitive: Bool, prefixContains: Bool
    ) throws -> Bool {
        let a = caseInsensitive ? actual.lowercased() : actual, b = caseInsensitive ? text.lowercased() : text
        switch op {
        case "=": return a == b
        case "!=": return a != b
        case "contains":
            guard prefixContains else { return a.contains(b) }
            if a.hasPrefix(b) { return true }
            let words = a.split { !$0.isLetter && !$0.isNumber }
            return words.contains { $0.hasPrefix(b) }
        default: throw Invalid(description: "\(op) does not apply to text")
        }
    }

    // MARK: Tokens

    enum Token: Equatable, CustomStringConvertible {
        case string(String), word(String), op(String), open, close
        var description: String {
            switch self {
            case .string(let s): "'\(s)'"
            case .word(let w): w
            case .op(let o): o
            case .open: "("
            case .close: ")"
            }
        }
    }

    static func tokenize(_ text: String) throws -> [Token] {
        var tokens: [Token] = []
        var chars = Array(text)[...]
        while let c = chars.first {
            if c.isWhitespace { chars = chars.dropFirst(); continue }
            if c == "(" { tokens.append(.open); chars = chars.dropFirst(); continue }
            if c == ")" { tokens.append(.close); chars = chars.dropFirst(); continue }
            if c == "'" || c == "\"" {
                chars = chars.dropFirst()
                var value = ""
                var closed = false
                while let d = chars.first {
                    chars = chars.dropFirst()
                    if d == "\\" {
                        guard let e = chars.first else { throw Invalid(description: "a backslash ends the query") }
                        value.append(e)
                        chars = chars.dropFirst()
                    } else if d == c {
                        closed = true
                        break
                    } else {
                        value.append(d)
                    }
                }
                guard closed else { throw Invalid(description: "an unterminated string in the query") }
                tokens.append(.string(value))
                continue
            }
            if "=!<>".contains(c) {
                var op = String(c)
                chars = chars.dropFirst()
                if chars.first == "=" { op.append("="); chars = chars.dropFirst() }
                guard op != "!" else { throw Invalid(description: "! must be followed by =") }
                tokens.append(.op(op))
                continue
            }
            if c.isLetter {
                let word = chars.prefix { $0.isLetter || $0.isNumber || $0 == "_" }
                chars = chars.dropFirst(word.count)
                tokens.append(.word(String(word)))
                continue
            }
            throw Invalid(description: "unexpected \(c) in the query")
        }
        return tokens
    }

    struct Parser {
        var tokens: [Token]
        var index = 0

        var atEnd: Bool { index == tokens.count }
        var peek: Token? { atEnd ? nil : tokens[index] }
        mutating func next() throws -> Token {
            guard let token = peek else { throw Invalid(description: "the query ends too early") }
            index += 1
            return token
        }
        func isWord(_ word: String) -> Bool {
            if case .word(let w)? = peek { w.lowercased() == word } else { false }
        }

        mutating func expression() throws -> DriveQuery {
            var left = try conjunction()
            while isWord("or") { index += 1; left = .or(left, try conjunction()) }
            return left
        }

        mutating func conjunction() throws -> DriveQuery {
            var left = try unary()
            while isWord("and") { index += 1; left = .and(left, try unary()) }
            return left
        }

        mutating func unary() throws -> DriveQuery {
            if isWord("not") { index += 1; return .not(try unary()) }
            if peek == .open {
                index += 1
                let inner = try expression()
                guard try next() == .close else { throw Invalid(description: "a parenthesis is not closed") }
                return inner
            }
            return try term()
        }

        mutating func term() throws -> DriveQuery {
            switch try next() {
            case .string(let value):
                guard case .word(let inWord) = try next(), inWord.lowercased() == "in",
                    case .word(let collection) = try next()
                else {
                    throw Invalid(description: "'\(value)' must be followed by `in parents`")
                }
                guard collection == "parents" else {
                    return .compare(field: collection, op: "in", value: .string(value))
                }
                return .inParents(value)
            case .word(let field):
                let op: String
                switch try next() {
                case .op(let o): op = o
                case .word(let w) where w.lowercased() == "contains": op = "contains"
                case let other: throw Invalid(description: "\(field) is followed by \(other), not an operator")
                }
                switch try next() {
                case .string(let text): return .compare(field: field, op: op, value: .string(text))
                case .word(let w) where ["true", "false"].contains(w.lowercased()):
                    return .compare(field: field, op: op, value: .bool(w.lowercased() == "true"))
                case let other: throw Invalid(description: "\(field) \(op) is followed by \(other), not a value")
                }
            case let other:
                throw Invalid(description: "a term cannot start with \(other)")
            }
        }
    }
}
