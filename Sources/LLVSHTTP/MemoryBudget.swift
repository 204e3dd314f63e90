import Foundation
import Synchronization

/// The bytes of answers held in memory by all of a client's transfers at once. Each transfer is bounded on its own
/// (`HTTPResponseDestination.memory(limit:)`), but eight transfers of endless bodies would still hold eight times
/// that; the budget bounds their sum, and a transfer that would pass it fails cleanly instead.
public final class MemoryBudget: Sendable {
    public let limit: Int
    private let used = Atomic<Int>(0)
    private let peak = Atomic<Int>(0)

    public init(limit: Int) { self.limit = limit }

    /// Takes `count` bytes of the budget; false (taking nothing) when that would pass the limit.
    func reserve(_ count: Int) -> Bool {
        var current = used.load(ordering: .relaxed)
        while true {
            guard current + count <= limit else { return false }
            let (exchanged, original) = used.compareExchange(
                expected: current, desired: current + count, ordering: .relaxed)
            if exchanged {
                var highest = peak.load(ordering: .relaxed)
                while current + count > highest {
                    let (done, seen) = peak.compareExchange(
                        expected: highest, desired: current + count, ordering: .relaxed)
                    if done { break }
                    highest = seen
                }
                return true
            }
            current = original
        }
    }

    func release(_ count: Int) {
        guard count > 0 else { return }
        used.subtract(count, ordering: .relaxed)
    }

    /// Bytes held now, and the most held at once since the client was made.
    public var inUse: Int { used.load(ordering: .relaxed) }
    public var highWaterMark: Int { peak.load(ordering: .relaxed) }
}
