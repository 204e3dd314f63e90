import Foundation
import LLVS
import LLVSSupport

/// Rows 7 to 10: `llvs backup` and `llvs restore` against restic, the tool people pick for backups, on a local
/// tree into a fresh local repository. Each figure is a separate process's time and its own peak resident memory.
func backupPeerRows(llvs: URL, arguments: [String], rows: Set<Int>, runs: Int, work: URL, table: ComparisonTable) throws
{
    if !rows.isDisjoint(with: [7, 8, 9, 10]) {
        let files = Int(option("restic-files", in: arguments) ?? "") ?? 20_000
        try resticRows(llvs: llvs, files: files, runs: runs, work: work, table: table)
    }
}

/// A tree of `count` files of 100 B to 8 KiB (seeded), 100 to a folder; its size in bytes.
@discardableResult
func makeTree(at root: URL, count: Int, sizes: ClosedRange<Int>, seed: UInt64) throws -> Int64 {
    var generator = SeededGenerator(seed: seed)
    var total: Int64 = 0
    let block = Data((0..<8192).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) })
    for i in 0..<count {
        let folder = root.appendingPathComponent(String(format: "d%04d", i / 100))
        if i % 100 == 0 { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        let size = sizes.lowerBound + Int(generator.next() % UInt64(sizes.count))
        var data = block.prefix(size)
        data.withUnsafeMutableBytes { raw in
            var stamp = UInt64(i) &* 0x9E37_79B9_7F4A_7C15 ^ generator.next()
            withUnsafeBytes(of: &stamp) { stampBytes in
                for j in 0..<min(8, raw.count) { raw[j] = stampBytes[j] }
            }
        }
        try data.write(to: folder.appendingPathComponent("f\(i).bin"))
        total += Int64(size)
    }
    return total
}

private func describe(_ runs: [MeasuredRun]) -> String {
    let seconds = runs.map(\.seconds), memory = runs.map(\.peakMiB)
    return String(
        format: "%@, peak %.0f MiB", formatSeconds((median(seconds), seconds.min()!, seconds.max()!)), memory.max()!)
}

func resticRows(llvs: URL, files: Int, runs: Int, work: URL, table: ComparisonTable) throws {
    let resticVersion = try resticVersion()
    let tree = work.appendingPathComponent("restic-tree")
    let bytes = try makeTree(at: tree, count: files, sizes: 100...8192, seed: 23)
    let size = String(format: "%.0f MB", Double(bytes) / 1e6)
    print("  rows 7–10: \(files) files, \(size), llvs against restic \(resticVersion)")
    let resticEnvironment = [
        "RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache").path,
    ]
    var llvsRuns: [[MeasuredRun]] = Array(repeating: [], count: 4),
        resticRuns: [[MeasuredRun]] = Array(repeating: [], count: 4)
    for run in 0..<runs {
        let store = work.appendingPathComponent("llvs-store-\(run)").path,
            repository = work.appendingPathComponent("restic-repo-\(run)").path
        _ = try runMeasured([llvs.path, "init", "--store", store])
        _ = try runMeasured(
            ["/usr/bin/env", "restic", "init", "--repo", repository, "--quiet"], environment: resticEnvironment)
        // The tools take turns going first, so neither always meets the other's page cache or freed inodes.
        func both(_ index: Int) throws {
            let ours = { llvsRuns[index].append(try runMeasured([llvs.path, "backup", tree.path, "--store", store])) }
            let theirs = {
                resticRuns[index].append(
                    try runMeasured(
                        ["/usr/bin/env", "restic", "backup", tree.path, "--repo", repository, "--quiet"],
                        environment: resticEnvironment))
            }
            if run % 2 == 0 { try ours(); try theirs() } else { try theirs(); try ours() }
        }
        try both(0)  // first backup
        try both(1)  // nothing changed
        // 1% of the files changed (a different 1% each run).
        for i in stride(from: run, to: files, by: 100) {
            let file = tree.appendingPathComponent(String(format: "d%04d", i / 100)).appendingPathComponent("f\(i).bin")
            try Data("changed in run \(run) \(i)".utf8).write(to: file)
        }
        try both(2)
        // Restored trees are kept until every run is done: on ext4 without a journal, creating files right after
        // tens of thousands were deleted costs up to ten times more in the inode allocator, whichever tool does it.
        let ours = work.appendingPathComponent("llvs-restored-\(run)").path,
            theirs = work.appendingPathComponent("restic-restored-\(run)").path
        let restoreOurs = { llvsRuns[3].append(try runMeasured([llvs.path, "restore", ours, "--store", store])) }
        let restoreTheirs = {
            resticRuns[3].append(
                try runMeasured(
                    [
                        "/usr/bin/env", "restic", "restore", "latest", "--repo", repository, "--target", theirs,
                        "--quiet",
                    ],
                    environment: resticEnvironment))
        }
        if run % 2 == 0 { try restoreOurs(); try restoreTheirs() } else { try restoreTheirs(); try restoreOurs() }
    }
    let titles = [
        "first backup of \(files) files (\(size), 100 B–8 KiB) into a fresh local store / repository",
        "the same backup again, nothing changed", "the backup again with 1% of the files changed",
        "restore the latest backup into an empty folder",
    ]
    for (index, title) in titles.enumerated() {
        let ratio = median(resticRuns[index].map(\.seconds)) / median(llvsRuns[index].map(\.seconds))
        table.add(
            .init(
                number: 7 + index, what: title,
                ours: "llvs \(index == 3 ? "restore" : "backup"): \(describe(llvsRuns[index]))",
                theirs: "restic \(resticVersion) \(index == 3 ? "restore" : "backup"): \(describe(resticRuns[index]))",
                ratio: ratio >= 1 ? String(format: "%.1f× faster", ratio) : String(format: "%.1f× slower", 1 / ratio),
                target: "(the ratio a user sees)", met: nil))
    }
}
