import Foundation
import LLVS
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A progress line on standard error for long transfers: versions and bytes done, rate and time left, redrawn in
/// place at most ten times a second. Only when standard error is a terminal; quiet otherwise (logs, pipes, tests).
final class ProgressLine: Sendable {
    static let shared: ProgressLine? = isatty(STDERR_FILENO) == 1 ? ProgressLine() : nil

    private struct State {
        /// When the current phase began: the line's creation (just before the exchange), or the previous phase's last event.
        var started = Date()
        var lastEvent = Date()
        var lastDrawn = Date.distantPast
        var direction: ExchangeProgress.Direction?
    }

    private let state = Mutex(State())

    func report(_ progress: ExchangeProgress) {
        let line: String? = state.withLock { state in
            let now = Date()
            if state.direction != progress.direction {
                if state.direction != nil { state.started = state.lastEvent }
                state.direction = progress.direction
            }
            state.lastEvent = now
            guard progress.done == progress.total || now.timeIntervalSince(state.lastDrawn) > 0.1 else { return nil }
            state.lastDrawn = now
            let elapsed = max(now.timeIntervalSince(state.started), 0.001)
            var text = String(
                format: "\r%@ %d/%d versions", progress.direction.rawValue.capitalized, progress.done, progress.total)
            let left: Double
            if progress.totalBytes >= 1 << 20 {
                // Large versions: bytes say more than counts about the rate and the time left.
                let rate = Double(progress.bytes) / elapsed
                left = rate > 0 ? Double(progress.totalBytes - progress.bytes) / rate : 0
                text += String(
                    format: "  %@/%@  %@/s", Self.size(progress.bytes), Self.size(progress.totalBytes),
                    Self.size(Int64(rate)))
            } else {
                let rate = Double(progress.done) / elapsed
                left = rate > 0 ? Double(progress.total - progress.done) / rate : 0
                text += String(format: "  %.0f/s", rate)
            }
            text += "  \(Self.duration(left)) left   "
            if progress.done == progress.total { text += "\n" }
            return text
        }
        if let line { FileHandle.standardError.write(Data(line.utf8)) }
    }

    static func size(_ bytes: Int64) -> String {
        let value = Double(bytes), mebibyte = 1_048_576.0
        return value >= 1024 * mebibyte
            ? String(format: "%.1f GiB", value / (1024 * mebibyte))
            : value >= mebibyte
                ? String(format: "%.1f MiB", value / mebibyte) : String(format: "%.0f KiB", value / 1024)
    }

    static func duration(_ seconds: Double) -> String {
        let s = Int(seconds.rounded())
        return s >= 3600 ? "\(s / 3600)h\(s % 3600 / 60)m" : s >= 60 ? "\(s / 60)m\(s % 60)s" : "\(s)s"
    }
}
