import Foundation
import LLVS
import LLVSSupport
import Synchronization

/// `--json` for commands that run a while (backup, restore, sync, push, pull, clone): one JSON object per line on
/// standard output, as `restic --json` prints them, so a script reads each event as it comes: `{"type":"progress",…}`
/// while the command works (at most twice a second, and the last one always) and one `{"type":"summary",…}` at its
/// end. The lines for people go to standard error meanwhile, so standard output holds JSON only.
final class JSONEvents: Sendable {
    private struct Throttle {
        var lastWritten = Date.distantPast
    }

    private let throttle = Mutex(Throttle())
    let started = Date()

    static let encoder = ISO8601JSON.encoder()

    /// Writes one event, whole, as one line.
    func write<Event: Encodable>(_ event: Event) throws {
        var data = try Self.encoder.encode(event)
        data.append(UInt8(ascii: "\n"))
        FileHandle.standardOutput.write(data)
    }

    /// A progress event, unless one was written less than half a second ago (`final` ones always are).
    func progress<Event: Encodable>(_ event: @autoclosure () -> Event, final: Bool = false) {
        let due = throttle.withLock { throttle in
            let now = Date()
            guard final || now.timeIntervalSince(throttle.lastWritten) >= 0.5 else { return false }
            throttle.lastWritten = now
            return true
        }
        if due { try? write(event()) }
    }

    var elapsed: Double { Date().timeIntervalSince(started) }

    /// The progress of an exchange (sync, push, pull, clone, backup --to).
    struct ExchangeEvent: Encodable {
        var type = "progress"
        var direction: String
        var versionsDone: Int
        var versionsTotal: Int
        var bytesDone: Int64
        var bytesTotal: Int64
        var secondsElapsed: Double
    }

    func report(_ progress: ExchangeProgress) {
        self.progress(
            ExchangeEvent(
                direction: progress.direction.rawValue, versionsDone: progress.done, versionsTotal: progress.total,
                bytesDone: progress.bytes, bytesTotal: progress.totalBytes, secondsElapsed: elapsed),
            final: progress.done == progress.total)
    }

    /// What an exchange moved, the summary of sync, push and pull.
    struct ExchangeSummary: Encodable {
        var type = "summary"
        var retrieved: Int?
        var sent: Int?
        var waitingForPredecessors: Int?
        var notYetReadable: Int?
        var failures: [String]
        var version: String?
        var conflicts: [Conflict]
        var secondsElapsed: Double
    }

    struct Conflict: Encodable {
        var valueId: String
        var kept: String
        var otherVersion: String
    }
}
