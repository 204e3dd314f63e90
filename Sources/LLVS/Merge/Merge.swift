import LLVSSupport
/// Everything an arbiter needs to decide a merge: the two versions, their common ancestor (nil for a two-way
/// merge of unrelated histories) and how each differing value forked.
public struct Merge: Sendable {
    /// The head being merged into (the current version).
    public var firstVersion: Version
    /// The head being merged in.
    public var secondVersion: Version
    /// Their greatest common ancestor: the base of the three-way comparison; nil for two unrelated histories.
    public var commonAncestor: Version?
    /// How each value changed on either side since the ancestor; values changed on neither side are absent.
    public var forksByValueIdentifier: [Value.ID: Value.Fork]

    /// The head on one side of a fork.
    public func version(on side: Value.Fork.Side) -> Version {
        side == .first ? firstVersion : secondVersion
    }

    /// The value IDs whose forks are conflicts, sorted.
    public var conflictingValueIds: [Value.ID] {
        forksByValueIdentifier.filter { $0.value.isConflicting }.keys.sorted()
    }
}
