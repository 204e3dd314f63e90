import Foundation

/// The one retry policy: a bounded number of attempts, exponential backoff with full jitter, and a service's
/// requested delay (Retry-After) honoured up to a cap. The sleep, the clock and the jitter are injectable, so
/// tests do not wait. The HTTP client and `RetryingFileSystem` both use it; connectors never retry on their own.
public struct RetryPolicy: Sendable {
    /// Attempts in all, the first included.
    public var maximumAttempts: Int
    /// The backoff ceiling of the first retry; it doubles each retry up to `maximumDelay`.
    public var baseDelay: Duration
    public var maximumDelay: Duration
    /// The longest Retry-After that is waited out; a longer request is waited this long.
    public var maximumRetryAfter: Duration
    public var sleep: @Sendable (Duration) async throws -> Void
    public var now: @Sendable () -> Date
    /// A number in 0..<1 for the jitter.
    public var random: @Sendable () -> Double

    public init(
        maximumAttempts: Int = 5, baseDelay: Duration = .milliseconds(250), maximumDelay: Duration = .seconds(20),
        maximumRetryAfter: Duration = .seconds(120),
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await Task.sleep(for: $0) },
        now: @escaping @Sendable () -> Date = { Date() },
        random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumRetryAfter = maximumRetryAfter
        self.sleep = sleep
        self.now = now
        self.random = random
    }

    /// A policy that never waits, for tests.
    public static let immediate = RetryPolicy(sleep: { _ in })

    /// How long to wait before retry number `retry` (1 for the first): the service's requested delay when it
    /// gave one (capped), otherwise a uniformly random time up to the exponential ceiling ("full jitter").
    public func delay(beforeRetry retry: Int, retryAfter: Duration?) -> Duration {
        if let retryAfter { return min(max(retryAfter, .zero), maximumRetryAfter) }
        let ceiling = min(baseDelay * (1 << min(max(retry - 1, 0), 30)), maximumDelay)
        return ceiling * random()
    }

    /// Parses a Retry-After value: delta seconds or an HTTP date (RFC 9110), relative to `now()`.
    public func retryAfter(_ header: String) -> Duration? {
        let text = header.trimmingCharacters(in: .whitespaces)
        if let seconds = Int(text) { return seconds >= 0 ? .seconds(seconds) : nil }
        guard let date = HTTPDate.parse(text) else { return nil }
        return .milliseconds(max(0, Int64(date.timeIntervalSince(now()) * 1000)))
    }

    /// What a failed attempt means for the next one.
    public enum Decision: Sendable {
        case fail
        case retry(after: Duration?)
    }

    /// Runs `operation`, retrying while `decide` says so and attempts remain.
    public func run<T>(_ operation: () async throws -> T, decide: (any Error) -> Decision) async throws -> T {
        var attempt = 1
        while true {
            do {
                return try await operation()
            } catch {
                guard attempt < maximumAttempts, !(error is CancellationError), case .retry(let after) = decide(error)
                else { throw error }
                try await sleep(delay(beforeRetry: attempt, retryAfter: after))
                attempt += 1
            }
        }
    }
}
