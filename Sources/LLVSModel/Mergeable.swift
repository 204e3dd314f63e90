import Foundation
import LLVS

/// A type merged three-way, property by property, as upstream LLVS's `@MergeableModel` types are.
///
/// Upstream generates the conformance with a macro; here an empty conformance (`extension Contact: Mergeable {}`)
/// gets the same merge from the type's `Codable` encoding: each encoded property is compared with the common
/// ancestor's, the side that changed it wins, and a property both sides changed goes to the side the arbiter
/// favours, unless that property's value is itself `Mergeable` (or an optional of one), which is merged the same
/// way, recursively. Arrays and other values are compared whole. A type may implement `merged` itself.
public protocol Mergeable: Codable {
    /// Merges two versions of a value that both descend from `ancestor` (nil when they share none: every property
    /// that differs is a conflict). Conflicts go to `favored`.
    static func merged(
        _ first: Self, _ second: Self, ancestor: Self?, conflictsFavor favored: Value.Fork.Side
    ) throws -> Self
}

extension Mergeable {
    public static func merged(
        _ first: Self, _ second: Self, ancestor: Self?, conflictsFavor favored: Value.Fork.Side
    ) throws -> Self {
        try PropertyMerge.merged(first, second, ancestor: ancestor, favoring: favored)
    }
}
