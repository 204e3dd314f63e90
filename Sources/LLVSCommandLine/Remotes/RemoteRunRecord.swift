import Foundation
import LLVS
import LLVSSupport

/// When this store last exchanged versions with each remote (sync, push, pull, backup --to), and when that last
/// worked, for `llvs status` and a monitor: a sync that keeps failing is otherwise silent until someone looks.
/// Kept in the store's folder (`remote-runs.json`); rewritten whole and atomically, and only a convenience: an
/// unreadable file reads as empty, and a failure to write it never fails the exchange.
struct RemoteRunRecord: Codable, Equatable {
    var date: Date
    /// `sync`, `push`, `pull` or `backup`.
    var command: String
    /// Why it failed; nil when it worked.
    var error: String?
    var lastSuccess: Date?

    static func path(_ store: URL) -> String { store.appendingPathComponent("remote-runs.json").path }

    static func all(in store: URL) -> [String: RemoteRunRecord] {
        ISO8601JSON.read([String: RemoteRunRecord].self, from: path(store)) ?? [:]
    }

    /// Notes a run of `command` with `remote`: failed with `error`, or worked.
    static func note(_ remote: String, command: String, error: (any Error)?, store: URL) {
        var runs = all(in: store)
        let now = Date()
        let previous = runs[remote]
        runs[remote] = RemoteRunRecord(
            date: now, command: command, error: error.map { "\($0)" },
            lastSuccess: error == nil ? now : previous?.lastSuccess)
        try? ISO8601JSON.write(runs, to: path(store))
    }

    /// Runs an exchange and notes how it went.
    static func noting<T>(
        _ remote: String, command: String, store: URL, _ body: () async throws -> T
    ) async throws -> T {
        do {
            let result = try await body()
            note(remote, command: command, error: nil, store: store)
            return result
        } catch {
            note(remote, command: command, error: error, store: store)
            throw error
        }
    }
}
