import Foundation
import Synchronization

/// Runs blocking work (a socket `accept`, a child process's output) on a thread of its own, so it never ties up
/// one of the few threads Swift's concurrency pool has (two on a two-core machine).
public func runBlocking<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        let thread = Thread {
            do { continuation.resume(returning: try body()) } catch { continuation.resume(throwing: error) }
        }
        thread.start()
    }
}

/// Blocking work started on a thread of its own at once, whose result is awaited later: unlike
/// `Task { try await runBlocking(…) }`, it does not wait for a free thread of the concurrency pool to begin (a loopback
/// listener must be accepting before the browser is sent to it, however busy the pool is).
public final class BlockingWork<T: Sendable>: Sendable {
    private let state = Mutex<(result: Result<T, any Error>?, waiter: CheckedContinuation<T, any Error>?)>((nil, nil))

    public init(_ body: @escaping @Sendable () throws -> T) {
        Thread { [self] in
            let result = Result { try body() }
            let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
                state.result = result
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume(with: result)
        }.start()
    }

    /// The work's result, once it has ended.
    public var value: T {
        get async throws {
            try await withCheckedThrowingContinuation { continuation in
                let ready = state.withLock { state -> Result<T, any Error>? in
                    if state.result == nil { state.waiter = continuation }
                    return state.result
                }
                if let ready { continuation.resume(with: ready) }
            }
        }
    }
}
