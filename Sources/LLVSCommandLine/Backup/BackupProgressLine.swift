import Foundation
import LLVSBackup

/// The progress of a backup's walk on standard error: files and folders seen, bytes read and new, the read rate.
struct BackupProgressLine: Sendable {
    let line: RedrawnLine

    static var shared: BackupProgressLine? { RedrawnLine.onTerminal.map(BackupProgressLine.init) }

    func report(_ progress: BackupWalk.Progress) { line.draw { Self.text(progress, elapsed: line.elapsed) } }

    func finish(_ progress: BackupWalk.Progress) { line.finish { Self.text(progress, elapsed: line.elapsed) } }

    static func text(_ progress: BackupWalk.Progress, elapsed: Double) -> String {
        let rate = Double(progress.bytesRead) / max(elapsed, 0.001)
        return
            "Backing up: \(progress.files) files, \(progress.folders) folders, \(ProgressLine.size(progress.bytesRead)) read"
            + " (\(ProgressLine.size(Int64(rate)))/s), \(ProgressLine.size(progress.bytesStored)) new"
            + (progress.checkpoints > 0 ? ", \(progress.checkpoints) checkpoint(s)" : "")
    }
}
