/// How the shared caches key a path: its components joined by `/`, lowercased for a service whose names ignore
/// case, so the folder cache and the ID cache agree on which spellings name one item.
public struct PathKeys: Sendable {
    public let caseInsensitive: Bool

    public init(caseInsensitive: Bool) { self.caseInsensitive = caseInsensitive }

    public func key(_ components: some Collection<String>) -> String {
        let joined = components.joined(separator: "/")
        return caseInsensitive ? joined.lowercased() : joined
    }

    /// Whether `key` names `prefix` or something below it (everything is below the root's empty key).
    public func key(_ key: String, isAtOrBelow prefix: String) -> Bool {
        prefix.isEmpty || key == prefix || key.hasPrefix(prefix + "/")
    }
}
