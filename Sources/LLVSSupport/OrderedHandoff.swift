import Foundation
import Synchronization

/// Carries items from one producer thread to one consumer, in order, holding at most `budget` of their weight at
/// once (always at least one item, so a heavy one still passes): the producer works ahead of the consumer without
/// holding a whole run in memory. Either side may stop early: after `cancel` (the consumer gave up) `put` refuses
/// items, and after `finish` (the producer is done) `take` returns nil once the queue is empty.
///
/// The state is in a `Mutex`; `condition` only lets a side sleep until the other changes it. Every change is made
/// while holding `condition`'s lock too, and every wait checks the state under it, so no wake-up is lost.
package final class OrderedHandoff<Item: Sendable>: Sendable {
    private struct State {
        var queue: [(item: Item, weight: Int)] = []
        var head = 0
        var queuedWeight = 0
        var finished = false
        var cancelled = false
        var queuedCount: Int { queue.count - head }
    }

    private let condition = NSCondition()
    private let state = Mutex(State())
    package let budget: Int

    package init(budget: Int) {
        self.budget = budget
    }

    /// How many items wait to be taken.
    package var queuedCount: Int { state.withLock { $0.queuedCount } }

    /// Runs `body` on the state with `condition`'s lock held, waiting first while `mustWait` says so.
    private func locked<T>(waitingWhile mustWait: (State) -> Bool = { _ in false }, _ body: (inout State) -> T) -> T {
        condition.lock()
        defer { condition.unlock() }
        while state.withLock({ mustWait($0) }) { condition.wait() }
        let result = state.withLock { body(&$0) }
        condition.broadcast()
        return result
    }

    /// Waits for room, then queues `item`; false (the item not taken) once the consumer has cancelled.
    package func put(_ item: Item, weight: Int) -> Bool {
        locked(waitingWhile: { !$0.cancelled && $0.queuedCount > 0 && $0.queuedWeight + weight > self.budget }) {
            state in
            guard !state.cancelled else { return false }
            state.queue.append((item, weight))
            state.queuedWeight += weight
            return true
        }
    }

    /// The producer has put its last item.
    package func finish() {
        locked { $0.finished = true }
    }

    /// The next item, waiting for it; nil when the producer has finished and everything was taken.
    package func take() -> Item? {
        locked(waitingWhile: { $0.queuedCount == 0 && !$0.finished }) { state -> Item? in
            guard state.queuedCount > 0 else { return nil }
            let (item, weight) = state.queue[state.head]
            state.head += 1
            state.queuedWeight -= weight
            if state.head >= 1024, state.head * 2 >= state.queue.count {
                state.queue.removeFirst(state.head)
                state.head = 0
            }
            return item
        }
    }

    /// The consumer stops taking; returns what was queued and not taken (for the caller to release).
    package func cancel() -> [Item] {
        locked { state in
            state.cancelled = true
            let left = state.queue[state.head...].map(\.item)
            state.queue.removeAll()
            state.head = 0
            state.queuedWeight = 0
            return left
        }
    }
}
