import Foundation
import Synchronization

/// Runs work for one key one at a time, in the order callers came, while work for other keys runs freely. Uploads
/// of one client to one path then meet the server one after another: a server that locks a file while it is written
/// (rclone serve answers 423 to a second PUT of it) never sees two at once from us, and the last upload wins whole.
public final class OneAtATimePerKey: Sendable {
    private struct Turn: Sendable {
        var id: UInt64
        var done: Task<Void, Never>
    }

    private let lastTurns = Mutex<[String: Turn]>([:])
    private let counter = Atomic<UInt64>(0)

    public init() {}

    /// Runs `work` once every earlier `run` with the same key has ended.
    public func run<T: Sendable>(_ key: String, _ work: @Sendable () async throws -> T) async throws -> T {
        let id = counter.add(1, ordering: .relaxed).newValue
        let (ended, end) = AsyncStream<Void>.makeStream()
        let done = Task { for await _ in ended {} }
        let previous = lastTurns.withLock { turns -> Task<Void, Never>? in
            let previous = turns[key]?.done
            turns[key] = Turn(id: id, done: done)
            return previous
        }
        defer {
            end.finish()
            lastTurns.withLock { turns in if turns[key]?.id == id { turns[key] = nil } }
        }
        await previous?.value
        try Task.checkCancellation()
        return try await work()
    }
}
