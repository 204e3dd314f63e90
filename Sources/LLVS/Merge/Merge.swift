import LLVSSupport
/// Everything an arbiter needs to decide a merge: the two versions, their common ancestor (nil for a two-way
/// merge of unrelated histories) and how each differing value forked.
public struct Merge: Sendable {
    public var firstVersion: Version
    public var secondVersion: Version
    public var commonAncestor: Version?
    public var forksByValueIdentifier: [Value.ID: Value.Fork]

    public func version(on side: Value.Fork.Side) -> Version {
        side == .first ? firstVersion : secondVersion
    }

    /// The value IDs whose forks are conflicts, sorted.
    public var conflictingValueIds: [Value.ID] {
        forksByValueIdentifier.filter { $0.value.isConflicting }.keys.sorted()
    }
}
