import Foundation
import Synchronization

/// Paces the requests of one remote, shared by all its transfers (as rclone's lib/pacer). At full speed it costs
/// a lock and nothing else. When the service says "slow down" (429, 503, or a rate-limit reason a connector
/// picks), no request of that remote goes out until the delay asked for has passed, and for a while after that
/// requests are spaced out by an interval that doubles on each further refusal and halves on each success, back
/// to full speed. Eight transfers then back off together instead of seven of them hitting the limit again.
public final class RequestPacer: Sendable {
    struct State {
        /// The earliest time (uptime nanoseconds) the next request may go out.
        var nextSlot: UInt64 = 0
        /// Nanoseconds between requests; 0 at full speed.
        var interval: UInt64 = 0
        /// The end of the current hold (uptime nanoseconds): refusals before it belong to the same episode.
        var holdEnd: UInt64 = 0
    }

    private let state = Mutex(State())
    private let minimumInterval: UInt64
    private let maximumInterval: UInt64
    private let now: @Sendable () -> UInt64

    /// `minimumInterval` is the spacing the first refusal starts with; `maximumInterval` the most it grows to.
    public init(
        minimumInterval: Duration = .milliseconds(10), maximumInterval: Duration = .seconds(2),
        now: @escaping @Sendable () -> UInt64 = { DispatchTime.now().uptimeNanoseconds }
    ) {
        self.minimumInterval = Self.nanoseconds(minimumInterval)
        self.maximumInterval = Self.nanoseconds(maximumInterval)
        self.now = now
    }

    static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    /// Waits until this request's turn (at once at full speed).
    public func waitForTurn(sleep: @Sendable (Duration) async throws -> Void) async throws {
        let wait = state.withLock { state -> UInt64 in
            let time = now()
            let slot = max(time, state.nextSlot)
            state.nextSlot = slot + state.interval
            return slot - time
        }
        if wait > 0 { try await sleep(.nanoseconds(Int64(wait))) }
    }

    /// The service refused a request: hold every request back for `delay` (its Retry-After, or the backoff), and
    /// space the ones after it further apart. Refusals that arrive while a hold is on answer requests that were in
    /// flight when the first came: they extend the hold but do not double the spacing again, or a burst of
    /// refusals to 20 concurrent transfers would slow the remote to the maximum spacing for minutes.
    public func slowDown(for delay: Duration) {
        state.withLock { state in
            let time = now()
            if time >= state.holdEnd { state.interval = min(max(state.interval * 2, minimumInterval), maximumInterval) }
            state.holdEnd = max(state.holdEnd, time + Self.nanoseconds(delay))
            state.nextSlot = max(state.nextSlot, state.holdEnd)
        }
    }

    /// A request went through: ease back towards full speed.
    public func succeeded() {
        state.withLock { state in
            guard state.interval > 0 else { return }
            state.interval /= 2
            if state.interval < minimumInterval / 2 { state.interval = 0 }
        }
    }

    /// The spacing now, for tests and traces.
    public var currentInterval: Duration { .nanoseconds(Int64(state.withLock { $0.interval })) }
}
