import Foundation

/// The one table `llvs-bench compare` prints: each row a figure of ours beside the other tool's (or the other way
/// of doing it), from the same run, with the ratio taken pair by pair and the target.
final class ComparisonTable {
    struct Row {
        var number: Int
        var what: String
        var ours: String
        var theirs: String
        var ratio: String
        var target: String
        /// Whether the target is met; nil when the row has no pass/fail target.
        var met: Bool?
    }

    private(set) var rows: [Row] = []

    func add(_ row: Row) {
        rows.append(row)
        print("  row \(row.number) done: \(row.what): \(row.ours) | \(row.theirs) | \(row.ratio)")
    }

    /// A Markdown table, so the same text goes into the README and the closing note.
    var markdown: String {
        var text = "| # | what | LLVS | compared with | ratio | target | met |\n|---|---|---|---|---|---|---|\n"
        for row in rows.sorted(by: { $0.number < $1.number }) {
            let met = row.met.map { $0 ? "yes" : "**no**" } ?? "—"
            text += "| \(row.number) | \(row.what) | \(row.ours) | \(row.theirs) | \(row.ratio) | \(row.target) | \(met) |\n"
        }
        return text
    }
}

/// A figure as "median [min–max]" in seconds.
func formatSeconds(_ figure: (median: Double, min: Double, max: Double)) -> String {
    String(format: "%.2f s [%.2f–%.2f]", figure.median, figure.min, figure.max)
}
