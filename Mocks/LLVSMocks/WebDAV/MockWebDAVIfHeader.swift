import Foundation

/// The `If` request header (RFC 4918 10.4): lists of conditions, each a state token (`<opaquelocktoken:…>`) or an
/// entity tag (`["etag"]`), either possibly negated with `Not`; lists tagged with a resource (`<url> (…)`) apply to
/// that resource, untagged ones to the request's. The header holds when any list does, and a list when all its
/// conditions do.
struct MockIfHeader: Equatable {
    struct Condition: Equatable {
        var negated: Bool
        var stateToken: String?
        var entityTag: String?
    }

    struct List: Equatable {
        /// The tagged resource as written (a URL or a path); nil for the request's resource.
        var resource: String?
        var conditions: [Condition]
    }

    var lists: [List]

    /// Every state token written in the header: the lock tokens the request submits.
    var stateTokens: [String] { lists.flatMap { $0.conditions.compactMap(\.stateToken) } }

    /// Parses the header; nil when it does not follow the grammar (400).
    init?(_ text: String) {
        var lists: [List] = []
        var resource: String?
        var rest = Substring(text)
        func skipSpaces() { rest = rest.drop { $0 == " " || $0 == "\t" } }
        func take(until end: Character) -> Substring? {
            guard let close = rest.firstIndex(of: end) else { return nil }
            let taken = rest[rest.index(after: rest.startIndex)..<close]
            rest = rest[rest.index(after: close)...]
            return taken
        }
        skipSpaces()
        while let first = rest.first {
            switch first {
            case "<":
                guard let tag = take(until: ">") else { return nil }
                resource = String(tag)
            case "(":
                rest = rest.dropFirst()
                var conditions: [Condition] = []
                while true {
                    skipSpaces()
                    guard let next = rest.first else { return nil }
                    if next == ")" { rest = rest.dropFirst(); break }
                    var negated = false
                    if rest.hasPrefix("Not") {
                        negated = true
                        rest = rest.dropFirst(3)
                        skipSpaces()
                    }
                    switch rest.first {
                    case "<"?:
                        guard let token = take(until: ">") else { return nil }
                        conditions.append(Condition(negated: negated, stateToken: String(token)))
                    case "["?:
                        guard let tag = take(until: "]") else { return nil }
                        conditions.append(Condition(negated: negated, entityTag: String(tag)))
                    default:
                        return nil
                    }
                }
                guard !conditions.isEmpty else { return nil }
                lists.append(List(resource: resource, conditions: conditions))
            default:
                return nil
            }
            skipSpaces()
        }
        guard !lists.isEmpty else { return nil }
        self.lists = lists
    }

    /// Whether the header holds. `resolve` turns a tagged resource into a tree path (nil when it is not on this
    /// server); `holds` says whether a token names a lock on a resource, `etag` gives a resource's current tag.
    func evaluate(
        requestPath: String, resolve: (String) -> String?, holds: (String, String) -> Bool, etag: (String) -> String?
    ) -> Bool {
        lists.contains { list in
            guard let path = list.resource.map(resolve) ?? requestPath else { return false }
            return list.conditions.allSatisfy { condition in
                let matched =
                    if let token = condition.stateToken { holds(token, path) } else {
                        condition.entityTag == etag(path)
                    }
                return matched != condition.negated
            }
        }
    }
}
