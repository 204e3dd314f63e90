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
    /// Rows another bench process measured and printed, with their numbers, kept as printed.
    private var printedRows: [(number: Int, line: String)] = []

    func add(_ row: Row) {
        rows.append(row)
        print("  row \(row.number) done: \(row.what): \(row.ours) | \(row.theirs) | \(row.ratio)")
    }

    /// A row of another bench process's table (`| N | … |`), taken as it printed it.
    func add(markdownLine line: String) {
        guard let number = Int(line.split(separator: "|").first?.trimmingCharacters(in: .whitespaces) ?? "") else {
            return
        }
        printedRows.append((number, line))
    }

    /// A Markdown table, so the same text goes into the README and the closing note.
    var markdown: String {
        var text = "| # | what | LLVS | compared with | ratio | target | met |\n|---|---|---|---|---|---|---|\n"
        var lines: [(number: Int, line: String)] = rows.map { row in
            let met = row.met.map { $0 ? "yes" : "**no**" } ?? "—"
            return (
                row.number,
                "| \(row.number) | \(row.what) | \(row.ours) | \(row.theirs) | \(row.ratio) | \(row.target) | \(met) |"
            )
        }
        lines += printedRows
        // Stable: rows of one number stay in the order they were measured.
        for (_, line) in lines.enumerated().sorted(by: {
            ($0.element.number, $0.offset) < ($1.element.number, $1.offset)
        }).map(\.element) {
            text += line + "\n"
        }
        return text
    }
}

/// A figure as "median [min–max]" in seconds.
func formatSeconds(_ figure: (median: Double, min: Double, max: Double)) -> String {
    String(format: "%.2f s [%.2f–%.2f]", figure.median, figure.min, figure.max)
}
