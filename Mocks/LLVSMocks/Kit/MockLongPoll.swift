import Dispatch
import Foundation
import Synchronization

/// What a mock's long polls wait on. The mock rings it after each request it serves (a change may have come), and a
/// held poll looks again at once, then sleeps until the next ring or its deadline: it answers the moment the change
/// is there, with no polling interval. A test that must change something only once a poll is in awaits `held()`.
public final class MockLongPoll: Sendable {
    private struct State {
        /// Polls held now.
        var holding = 0
        var stopped = false
        /// Each held poll's wake-up for the next ring, by poll.
        var sleepers: [UUID: DispatchSemaphore] = [:]
        /// Tests awaiting `held()`, by wait.
        var watchers: [UUID: CheckedContinuation<Bool, Never>] = [:]
    }

    private let state = Mutex(State())

    public init() {}

    /// Something may have changed: every held poll looks again.
    public func ring() {
        for sleeper in state.withLock({ state in
            defer { state.sleepers = [:] }
            return Array(state.sleepers.values)
        }) {
            sleeper.signal()
        }
    }

    /// The mock stops: held polls answer now, and tests awaiting `held()` hear no poll came.
    public func stop() {
        let watchers = state.withLock { state in
            state.stopped = true
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        ring()
        for watcher in watchers { watcher.resume(returning: false) }
    }

    /// Holds until `changed` says yes (asked now and after every ring), `deadline` passes or the mock stops; returns
    /// its last answer. Each look is preceded by a wake-up registered for the next ring, so a ring between the look
    /// and the sleep is never lost. `changed` runs under no lock of this poll (it may take the mock's state lock).
    public func hold<T>(until deadline: Date, _ changed: () throws -> T?) rethrows -> T? {
        let poll = UUID()
        let watchers = state.withLock { state in
            state.holding += 1
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.resume(returning: true) }
        defer {
            state.withLock { state in
                state.holding -= 1
                state.sleepers[poll] = nil
            }
        }
        while true {
            let wakeUp = DispatchSemaphore(value: 0)
            let stopped = state.withLock { state in
                state.sleepers[poll] = wakeUp
                return state.stopped
            }
            if let answer = try changed() { return answer }
            let left = deadline.timeIntervalSinceNow
            guard !stopped, left > 0, wakeUp.wait(timeout: .now() + left) == .success else { return try changed() }
        }
    }

    /// Returns true once a poll is held, however long that takes (a loaded machine may start the poll late); false
    /// when the mock stops first, or the waiting task is cancelled (a test's time limit), so a client that never polls
    /// fails its test instead of hanging it.
    public func held() async -> Bool {
        let wait = UUID()
        return await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let answer: Bool? = state.withLock { state in
                    if state.holding > 0 { return true }
                    if state.stopped || Task.isCancelled { return false }
                    state.watchers[wait] = continuation
                    return nil
                }
                if let answer { continuation.resume(returning: answer) }
            }
        } onCancel: {
            state.withLock { $0.watchers.removeValue(forKey: wait) }?.resume(returning: false)
        }
    }

    /// How many polls are held now.
    public var heldCount: Int { state.withLock { $0.holding } }
}
