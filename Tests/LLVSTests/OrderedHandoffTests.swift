import Foundation
import Synchronization
import Testing
@testable import LLVS
import LLVSSupport

/// The hand-off between an import's reading thread and its committing one: order kept, memory bounded, and
/// either side able to stop the other.
@Suite struct OrderedHandoffTests {
    @Test func itemsArriveInOrderWithNoMoreThanTheBudgetAhead() async throws {
        let handoff = OrderedHandoff<Int>(budget: 10)
        let put = Mutex(0)
        let producer = BlockingWork<Void> {
            for item in 0..<2_000 {
                guard handoff.put(item, weight: 1) else { return }
                put.withLock { $0 += 1 }
            }
            handoff.finish()
        }
        var taken = 0
        var mostAhead = 0
        while let item = handoff.take() {
            #expect(item == taken)
            taken += 1
            mostAhead = max(mostAhead, put.withLock { $0 } - taken)
        }
        try await producer.value
        #expect(taken == 2_000)
        #expect(mostAhead <= 10)
    }

    @Test func anItemHeavierThanTheBudgetStillPassesAlone() {
        let handoff = OrderedHandoff<String>(budget: 10)
        #expect(handoff.put("heavy", weight: 1_000))
        handoff.finish()
        #expect(handoff.take() == "heavy")
        #expect(handoff.take() == nil)
    }

    /// The consumer gives up while the producer waits for room: the producer is let go (its item refused) and the
    /// queued items are handed back to be released.
    @Test func cancellingReleasesAWaitingProducer() async throws {
        let handoff = OrderedHandoff<Int>(budget: 2)
        let refused = Mutex<Int?>(nil)
        let producer = BlockingWork<Void> {
            for item in 0..<10 where !handoff.put(item, weight: 1) {
                refused.withLock { $0 = item }
                return
            }
        }
        #expect(handoff.take() == 0)
        // The producer fills the budget (items 1 and 2), then waits with item 3.
        let deadline = ContinuousClock.now + .seconds(30)
        while handoff.queuedCount < 2, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(10)) }
        let left = handoff.cancel()
        try await producer.value
        #expect(left == [1, 2])
        #expect(refused.withLock { $0 } == 3)
        #expect(handoff.put(99, weight: 1) == false)
    }
}
