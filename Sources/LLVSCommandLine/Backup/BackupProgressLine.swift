import Foundation
import LLVSBackup
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The progress of a backup's walk on standard error: files and folders seen, bytes read and new, the read rate.
/// Redrawn in place at most ten times a second, and only when standard error is a terminal.
final class BackupProgressLine: Sendable {
    static let shared: BackupProgressLine? = isatty(STDERR_FILENO) == 1 ? BackupProgressLine() : nil

    private struct State {
        let started = Date()
        var lastDrawn = Date.distantPast
        var drawn = false
    }

    private let state = Mutex(State())

    func report(_ progress: BackupWalk.Progress) {
        let line: String? = state.withLock { state in
            let now = Date()
            guard now.timeIntervalSince(state.lastDrawn) > 0.1 else { return nil }
            state.lastDrawn = now
            state.drawn = true
            return Self.text(progress, elapsed: now.timeIntervalSince(state.started))
        }
        if let line { FileHandle.standardError.write(Data(("\r" + line + "   ").utf8)) }
    }

    /// Draws the final figures and ends the line (only if a line was drawn).
    func finish(_ progress: BackupWalk.Progress) {
        let line: String? = state.withLock { state in
            state.drawn ? Self.text(progress, elapsed: Date().timeIntervalSince(state.started)) : nil
        }
        if let line { FileHandle.standardError.write(Data(("\r" + line + "   \n").utf8)) }
    }

    static func text(_ progress: BackupWalk.Progress, elapsed: Double) -> String {
        let rate = Double(progress.bytesRead) / max(elapsed, 0.001)
        return
            "Backing up: \(progress.files) files, \(progress.folders) folders, \(ProgressLine.size(progress.bytesRead)) read"
            + " (\(ProgressLine.size(Int64(rate)))/s), \(ProgressLine.size(progress.bytesStored)) new"
            + (progress.checkpoints > 0 ? ", \(progress.checkpoints) checkpoint(s)" : "")
    }
}
