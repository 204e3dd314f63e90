import Foundation
import LLVS

/// The property-wise three-way merge every `Mergeable` type gets by default, done on the JSON encodings of the
/// three values so that it needs nothing but `Codable`.
enum PropertyMerge {
    static func merged<M: Mergeable>(
        _ first: M, _ second: M, ancestor: M?, favoring favored: Value.Fork.Side
    ) throws -> M {
        let firstTree = try JSONTree.of(first)
        let secondTree = try JSONTree.of(second)
        var ancestorTree: JSONTree?
        if let ancestor { ancestorTree = try JSONTree.of(ancestor) }
        var nested = MergeableProperties.of(first)
        nested.merge(MergeableProperties.of(second)) { kept, _ in kept }
        if let ancestor { nested.merge(MergeableProperties.of(ancestor)) { kept, _ in kept } }
        let tree = try merge(
            firstTree, secondTree, ancestor: ancestorTree.map { Optional($0) }, nested: nested, favoring: favored)
        if tree == firstTree { return first }
        if tree == secondTree { return second }
        return try tree.decoded(as: M.self)
    }

    /// Merges trees: objects key by key (keys holding a `Mergeable` value by that type's merge), anything else whole.
    static func merge(
        _ first: JSONTree, _ second: JSONTree, ancestor: JSONTree??, nested: [String: any Mergeable.Type],
        favoring favored: Value.Fork.Side
    ) throws -> JSONTree {
        guard let firstMembers = first.members, let secondMembers = second.members else {
            return pick(first, second, ancestor: ancestor, favoring: favored) ?? .null
        }
        let ancestorMembers: [String: JSONTree]?? = ancestor.map { $0?.members }
        var merged: [String: JSONTree] = [:]
        for key in Set(firstMembers.keys).union(secondMembers.keys) {
            let a: JSONTree?? = ancestorMembers.map { $0?[key] }
            let f = firstMembers[key]
            let s = secondMembers[key]
            if f != s, let type = nested[key], let f, let s, f.members != nil, s.members != nil,
                !changedOnOneSideOnly(f, s, ancestor: a)
            {
                merged[key] = try mergeNested(type, f, s, ancestor: a.flatMap { $0 }, favoring: favored)
            } else {
                merged[key] = pick(f, s, ancestor: a, favoring: favored)
            }
        }
        return .object(merged)
    }

    /// The three-way choice for a value compared whole: equal sides agree; one side equal to the ancestor means
    /// the other changed it; otherwise (or with no ancestor) the favoured side. Nil is "absent".
    /// `ancestor` is nil when the merge has no ancestor, `.some(nil)` when the ancestor lacks the value.
    static func pick(
        _ first: JSONTree?, _ second: JSONTree?, ancestor: JSONTree??, favoring favored: Value.Fork.Side
    ) -> JSONTree? {
        if first == second { return first }
        if let ancestor {
            if first == ancestor { return second }
            if second == ancestor { return first }
        }
        return favored == .first ? first : second
    }

    private static func changedOnOneSideOnly(_ first: JSONTree, _ second: JSONTree, ancestor: JSONTree??) -> Bool {
        guard let ancestor else { return false }
        return first == ancestor || second == ancestor
    }

    /// A nested `Mergeable` value merged by its own type's `merged` (which may be written by hand).
    private static func mergeNested<N: Mergeable>(
        _ type: N.Type, _ first: JSONTree, _ second: JSONTree, ancestor: JSONTree?,
        favoring favored: Value.Fork.Side
    ) throws -> JSONTree {
        let ancestorValue: N? = try ancestor.flatMap { $0.members == nil ? nil : try $0.decoded(as: N.self) }
        let value = try N.merged(
            try first.decoded(as: N.self), try second.decoded(as: N.self),
            ancestor: ancestorValue, conflictsFavor: favored)
        return try JSONTree.of(value)
    }
}
