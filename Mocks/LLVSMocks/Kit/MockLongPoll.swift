import Foundation

/// What a mock's long polls wait on. The mock rings it after each request it serves (a change may have come), and a
/// held poll looks again at once, then sleeps until the next ring or its deadline: it answers the moment the change
/// is there, with no polling interval. A test that must change something only once a poll is in awaits `held()`.
public final class MockLongPoll: @unchecked Sendable {
    // Guarded by `condition`'s lock.
    private let condition = NSCondition()
    private var holding = 0
    private var stopped = false

    public init() {}

    /// Something may have changed: every held poll looks again.
    public func ring() {
        condition.lock()
        condition.broadcast()
        condition.unlock()
    }

    /// The mock stops: held polls answer now.
    public func stop() {
        condition.lock()
        stopped = true
        condition.broadcast()
        condition.unlock()
    }

    /// Holds until `changed` says yes (asked now and after every ring), `deadline` passes or the mock stops; returns
    /// its last answer. `changed` runs under the poll's lock, so a ring between its look and the wait is never lost;
    /// it may take the mock's state lock (a ring never holds both).
    public func hold<T>(until deadline: Date, _ changed: () throws -> T?) rethrows -> T? {
        condition.lock()
        holding += 1
        condition.broadcast()
        defer {
            holding -= 1
            condition.unlock()
        }
        while true {
            if let answer = try changed() { return answer }
            if stopped || !condition.wait(until: deadline) { return try changed() }
        }
    }

    /// Returns true once a poll is held, however long that takes (a loaded machine may start the poll late); false
    /// when the mock stops first, or the waiting task is cancelled (a test's time limit), so a client that never polls
    /// fails its test instead of hanging it.
    public func held() async -> Bool {
        let abandoned = AbandonFlag()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                Thread {
                    self.condition.lock()
                    while self.holding == 0, !self.stopped, !abandoned.isSet { self.condition.wait() }
                    let isHeld = self.holding > 0
                    self.condition.unlock()
                    continuation.resume(returning: isHeld)
                }.start()
            }
        } onCancel: {
            condition.lock()
            abandoned.isSet = true
            condition.broadcast()
            condition.unlock()
        }
    }

    /// A wait for `held` given up; read and written under `condition`'s lock.
    private final class AbandonFlag: @unchecked Sendable {
        var isSet = false
    }

    /// How many polls are held now.
    public var heldCount: Int {
        condition.lock()
        defer { condition.unlock() }
        return holding
    }
}
