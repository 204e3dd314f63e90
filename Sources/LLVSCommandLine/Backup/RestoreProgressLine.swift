import Foundation

/// The progress of a restore on standard error: entries and bytes written of the totals, the rate and the time left.
struct RestoreProgressLine: Sendable {
    let line: RedrawnLine
    let totalEntries: Int
    let totalBytes: Int64

    func report(entries: Int, bytes: Int64) { line.draw { text(entries: entries, bytes: bytes) } }

    func finish(entries: Int, bytes: Int64) { line.finish { text(entries: entries, bytes: bytes) } }

    func text(entries: Int, bytes: Int64) -> String {
        let rate = Double(bytes) / line.elapsed
        let left = rate > 0 ? Double(max(totalBytes - bytes, 0)) / rate : 0
        return
            "Restoring: \(entries)/\(totalEntries) entries, \(ProgressLine.size(bytes))/\(ProgressLine.size(totalBytes))"
            + " (\(ProgressLine.size(Int64(rate)))/s), \(ProgressLine.duration(left)) left"
    }
}
