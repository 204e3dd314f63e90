import Foundation

/// Carries items from one producer thread to one consumer, in order, holding at most `budget` of their weight at
/// once (always at least one item, so a heavy one still passes): the producer works ahead of the consumer without
/// holding a whole run in memory. Either side may stop early: after `cancel` (the consumer gave up) `put` refuses
/// items, and after `finish` (the producer is done) `take` returns nil once the queue is empty.
final class OrderedHandoff<Item: Sendable>: @unchecked Sendable {
    private let condition = NSCondition()
    private var queue: [(item: Item, weight: Int)] = []
    private var head = 0
    private var queuedWeight = 0
    private var finished = false
    private var cancelled = false
    let budget: Int

    init(budget: Int) {
        self.budget = budget
    }

    /// How many items wait to be taken.
    var queuedCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return queue.count - head
    }

    /// Waits for room, then queues `item`; false (the item not taken) once the consumer has cancelled.
    func put(_ item: Item, weight: Int) -> Bool {
        condition.lock()
        defer { condition.unlock() }
        while !cancelled, head < queue.count, queuedWeight + weight > budget { condition.wait() }
        guard !cancelled else { return false }
        queue.append((item, weight))
        queuedWeight += weight
        condition.broadcast()
        return true
    }

    /// The producer has put its last item.
    func finish() {
        condition.lock()
        finished = true
        condition.broadcast()
        condition.unlock()
    }

    /// The next item, waiting for it; nil when the producer has finished and everything was taken.
    func take() -> Item? {
        condition.lock()
        defer { condition.unlock() }
        while head == queue.count, !finished { condition.wait() }
        guard head < queue.count else { return nil }
        let (item, weight) = queue[head]
        head += 1
        queuedWeight -= weight
        if head >= 1024, head * 2 >= queue.count {
            queue.removeFirst(head)
            head = 0
        }
        condition.broadcast()
        return item
    }

    /// The consumer stops taking; returns what was queued and not taken (for the caller to release).
    func cancel() -> [Item] {
        condition.lock()
        defer { condition.unlock() }
        cancelled = true
        condition.broadcast()
        let left = queue[head...].map(\.item)
        queue.removeAll()
        head = 0
        queuedWeight = 0
        return left
    }
}
