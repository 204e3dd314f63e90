import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A line on standard error redrawn in place at most ten times a second, only when standard error is a terminal
/// (quiet for logs, pipes and tests): the progress of a backup or a restore.
final class RedrawnLine: Sendable {
    static var onTerminal: RedrawnLine? { isatty(STDERR_FILENO) == 1 ? RedrawnLine() : nil }

    private struct State {
        var lastDrawn = Date.distantPast
        var drawn = false
    }

    private let state = Mutex(State())
    let started = Date()

    var elapsed: Double { max(Date().timeIntervalSince(started), 0.001) }

    /// Draws the line `text` gives, unless one was drawn less than a tenth of a second ago.
    func draw(_ text: () -> String) {
        let due = state.withLock { state in
            let now = Date()
            guard now.timeIntervalSince(state.lastDrawn) > 0.1 else { return false }
            state.lastDrawn = now
            state.drawn = true
            return true
        }
        if due { FileHandle.standardError.write(Data(("\r" + text() + "   ").utf8)) }
    }

    /// Draws the final figures and ends the line, if a line was drawn.
    func finish(_ text: () -> String) {
        if state.withLock({ $0.drawn }) { FileHandle.standardError.write(Data(("\r" + text() + "   \n").utf8)) }
    }
}
