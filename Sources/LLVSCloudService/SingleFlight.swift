import Foundation
import Synchronization

/// Runs one task per key at a time: callers asking for a key whose work is in flight wait for that same work.
/// Many uploads into one new folder then create it once (an ID cache's folder POST, a WebDAV MKCOL).
public final class SingleFlight<Value: Sendable>: Sendable {
    private let running = Mutex<[String: Task<Value, any Error>]>([:])

    public init() {}

    /// Runs `work` for `key`, or waits for the run already under way for it and returns its result.
    public func run(_ key: String, _ work: @escaping @Sendable () async throws -> Value) async throws -> Value {
        let task = running.withLock { tasks in
            if let task = tasks[key] { return task }
            let task = Task { try await work() }
            tasks[key] = task
            return task
        }
        defer { running.withLock { tasks in if tasks[key] == task { tasks[key] = nil } } }
        return try await task.value
    }
}
