import Foundation

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
