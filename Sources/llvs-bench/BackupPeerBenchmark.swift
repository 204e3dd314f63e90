import Foundation
import LLVS

/// Rows 7 to 12: `llvs backup` and `llvs restore` against restic, the tool people pick for backups, on a local
/// tree into a fresh local repository; then `llvs backup` of a very large tree alone. Each figure is a separate
/// process's time and its own peak resident memory.
func backupPeerRows(llvs: URL, arguments: [String], rows: Set<Int>, runs: Int, work: URL, table: ComparisonTable) throws {
    if !rows.isDisjoint(with: [7, 8, 9, 10]) {
        let files = Int(option("restic-files", in: arguments) ?? "") ?? 20_000
        try resticRows(llvs: llvs, files: files, runs: runs, work: work, table: table)
    }
    if !rows.isDisjoint(with: [11, 12]) {
        let files = Int(option("scale-files", in: arguments) ?? "") ?? 1_000_000
        try scaleRows(llvs: llvs, files: files, work: work, table: table)
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
    return String(format: "%@, peak %.0f MiB", formatSeconds((median(seconds), seconds.min()!, seconds.max()!)), memory.max()!)
}

func resticRows(llvs: URL, files: Int, runs: Int, work: URL, table: ComparisonTable) throws {
    guard let resticVersion = output(of: ["/usr/bin/env", "restic", "version"])?.split(separator: " ").dropFirst().first.map(String.init) else {
        throw BenchmarkError("restic is not installed (apt-get install restic)")
    }
    let tree = work.appendingPathComponent("restic-tree")
    let bytes = try makeTree(at: tree, count: files, sizes: 100...8192, seed: 23)
    let size = String(format: "%.0f MB", Double(bytes) / 1e6)
    print("  rows 7–10: \(files) files, \(size), llvs against restic \(resticVersion)")
    let resticEnvironment = ["RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache").path]
    var llvsRuns: [[MeasuredRun]] = Array(repeating: [], count: 4), resticRuns: [[MeasuredRun]] = Array(repeating: [], count: 4)
    for run in 0..<runs {
        let store = work.appendingPathComponent("llvs-store-\(run)").path, repository = work.appendingPathComponent("restic-repo-\(run)").path
        _ = try runMeasured([llvs.path, "init", "--store", store])
        _ = try runMeasured(["/usr/bin/env", "restic", "init", "--repo", repository, "--quiet"], environment: resticEnvironment)
        // The tools take turns going first, so neither always meets the other's page cache or freed inodes.
        func both(_ index: Int) throws {
            let ours = { llvsRuns[index].append(try runMeasured([llvs.path, "backup", tree.path, "--store", store])) }
            let theirs = { resticRuns[index].append(try runMeasured(["/usr/bin/env", "restic", "backup", tree.path, "--repo", repository, "--quiet"],
                                                                     environment: resticEnvironment)) }
            if run % 2 == 0 { try ours(); try theirs() } else { try theirs(); try ours() }
        }
        try both(0) // first backup
        try both(1) // nothing changed
        // 1% of the files changed (a different 1% each run).
        for i in stride(from: run, to: files, by: 100) {
            let file = tree.appendingPathComponent(String(format: "d%04d", i / 100)).appendingPathComponent("f\(i).bin")
            try Data("changed in run \(run) \(i)".utf8).write(to: file)
        }
        try both(2)
        // Restored trees are kept until every run is done: on ext4 without a journal, creating files right after
        // tens of thousands were deleted costs up to ten times more in the inode allocator, whichever tool does it.
        let ours = work.appendingPathComponent("llvs-restored-\(run)").path, theirs = work.appendingPathComponent("restic-restored-\(run)").path
        let restoreOurs = { llvsRuns[3].append(try runMeasured([llvs.path, "restore", ours, "--store", store])) }
        let restoreTheirs = { resticRuns[3].append(try runMeasured(["/usr/bin/env", "restic", "restore", "latest", "--repo", repository, "--target", theirs, "--quiet"],
                                                                   environment: resticEnvironment)) }
        if run % 2 == 0 { try restoreOurs(); try restoreTheirs() } else { try restoreTheirs(); try restoreOurs() }
    }
    let titles = ["first backup of \(files) files (\(size), 100 B–8 KiB) into a fresh local store / repository",
                  "the same backup again, nothing changed", "the backup again with 1% of the files changed",
                  "restore the latest backup into an empty folder"]
    for (index, title) in titles.enumerated() {
        let ratio = median(resticRuns[index].map(\.seconds)) / median(llvsRuns[index].map(\.seconds))
        table.add(.init(number: 7 + index, what: title, ours: "llvs \(index == 3 ? "restore" : "backup"): \(describe(llvsRuns[index]))",
                        theirs: "restic \(resticVersion) \(index == 3 ? "restore" : "backup"): \(describe(resticRuns[index]))",
                        ratio: ratio >= 1 ? String(format: "%.1f× faster", ratio) : String(format: "%.1f× slower", 1 / ratio),
                        target: "(the ratio a user sees)", met: nil))
    }
}

/// Rows 11 and 12: `llvs backup` of a very large tree of small files, and again with nothing changed.
func scaleRows(llvs: URL, files: Int, work: URL, table: ComparisonTable) throws {
    let tree = work.appendingPathComponent("scale-tree")
    print("  rows 11–12: making \(files) files…")
    let bytes = try makeTree(at: tree, count: files, sizes: 20...200, seed: 29)
    let store = work.appendingPathComponent("scale-store").path
    _ = try runMeasured([llvs.path, "init", "--store", store])
    let first = try runMeasured([llvs.path, "backup", tree.path, "--store", store])
    let storeBytes = Int64(output(of: ["/usr/bin/du", "-sk", store])?.split(separator: "\t").first.flatMap { Int64($0) } ?? 0) * 1024
    let again = try runMeasured([llvs.path, "backup", tree.path, "--store", store])
    let what = String(format: "llvs backup of %d small files (%.0f MB, 20–200 B, 100 a folder)", files, Double(bytes) / 1e6)
    table.add(.init(number: 11, what: what, ours: String(format: "%.1f s, peak %.0f MiB, store %.0f MB", first.seconds, first.peakMiB, Double(storeBytes) / 1e6),
                    theirs: "—", ratio: String(format: "%.0f files/s", Double(files) / first.seconds), target: "(scale)", met: nil))
    table.add(.init(number: 12, what: "the same backup again, nothing changed", ours: String(format: "%.1f s, peak %.0f MiB", again.seconds, again.peakMiB),
                    theirs: "—", ratio: String(format: "%.0f files/s", Double(files) / again.seconds), target: "(scale)", met: nil))
    try? FileManager.default.removeItem(at: tree)
    try? FileManager.default.removeItem(atPath: store)
}
