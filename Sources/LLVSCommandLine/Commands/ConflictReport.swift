import Foundation
import LLVS
import Synchronization

/// The arbiter a `sync`, `pull` or `merge` decides with, noting each conflict it settles (a value changed on both
/// sides since their common ancestor), so the command can tell the user which values and which side's value was
/// kept: a silent choice between two edits is how data goes missing unnoticed.
final class TellingArbiter: MergeArbiter {
    struct Decision: Sendable {
        enum Kept: Sendable { case here, incoming, neither }
        var valueId: Value.ID
        var kept: Kept
        /// The version holding the value that was not kept, to get it back from.
        var other: Version.ID
    }

    let inner: any MergeArbiter
    let name: String
    private let decisions = Mutex<[Decision]>([])

    init(_ inner: any MergeArbiter, name: String) {
        self.inner = inner
        self.name = name
    }

    func changes(toResolve merge: Merge, in store: Store) throws -> [Value.Change] {
        let changes = try inner.changes(toResolve: merge, in: store)
        let byValue = Dictionary(changes.map { ($0.valueId, $0) }, uniquingKeysWith: { _, last in last })
        var noted: [Decision] = []
        for valueId in merge.conflictingValueIds.sorted() {
            guard let change = byValue[valueId] else { continue }
            let here = try store.value(id: valueId, at: merge.firstVersion.id)?.reference
            let incoming = try store.value(id: valueId, at: merge.secondVersion.id)?.reference
            let kept: Decision.Kept
            switch change {
            case .preserve(let reference):
                kept = reference == here ? .here : reference == incoming ? .incoming : .neither
            case .remove, .preserveRemoval:
                kept = here == nil ? .here : incoming == nil ? .incoming : .neither
            case .insert, .update:
                kept = .neither
            }
            let other = kept == .incoming ? merge.firstVersion.id : merge.secondVersion.id
            noted.append(Decision(valueId: valueId, kept: kept, other: other))
        }
        decisions.withLock { $0 += noted }
        return changes
    }

    /// What was decided since the last call, in value order.
    func takeDecisions() -> [Decision] {
        decisions.withLock { decisions in
            defer { decisions = [] }
            return decisions
        }
    }

    /// Lines telling what was decided, none when nothing conflicted. At most `limit` values are named.
    func lines(_ decided: [Decision], limit: Int = 20) -> [String] {
        guard !decided.isEmpty else { return [] }
        var lines = [
            "\(decided.count) value\(decided.count == 1 ? " was" : "s were") changed on both sides; the \(name) arbiter decided:"
        ]
        for decision in decided.prefix(limit) {
            lines.append("  \(decision.valueId): kept \(decision.kept.text); the other is at version \(decision.other)")
        }
        if decided.count > limit { lines.append("  … and \(decided.count - limit) more") }
        lines.append(
            "To keep the other value: `llvs get ID --at VERSION | llvs put ID -`. To decide otherwise next time: --arbiter change (the most recent change wins) or --arbiter branch (the most recently changed branch wins)."
        )
        return lines
    }
}

extension TellingArbiter.Decision.Kept {
    var text: String {
        switch self {
        case .here: "this store's value"
        case .incoming: "the incoming value"
        case .neither: "a value of the arbiter's own"
        }
    }

    /// For `--json`: here, incoming or neither.
    var name: String {
        switch self {
        case .here: "here"
        case .incoming: "incoming"
        case .neither: "neither"
        }
    }
}
