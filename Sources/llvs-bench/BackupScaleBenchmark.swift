import Foundation
import LLVS
import LLVSSupport
import LLVSMocks
#if canImport(Glibc)
import Glibc
#endif

/// Rows 11 to 17: backups at home-directory scale against restic, side by side in one run. 200,000 and 1,000,000
/// small files (first backup and an unchanged re-run: each figure one process's time and its own peak memory);
/// two identical 20 MB files and a one-byte edit in one (bytes added to the store, to a remote, to restic's
/// repository); a first `backup --to` of a large tree to Apache killed at about 90% and run again (bytes the server
/// received again, counted in its log).
func backupScaleRows(
    llvs: URL, apache: RealWebDAVServer, arguments: [String], rows: Set<Int>, work: URL, table: ComparisonTable
) throws {
    let restic = try resticVersion()
    let environment = [
        "RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache").path,
    ]
    let sizes = (option("scale-files", in: arguments) ?? "200000,1000000").split(separator: ",").compactMap { Int($0) }
    for (index, files) in sizes.enumerated() where rows.contains(11 + 2 * index) || rows.contains(12 + 2 * index) {
        try scalePair(
            llvs: llvs, restic: restic, environment: environment, files: files, firstRow: 11 + 2 * index, work: work,
            table: table)
    }
    if rows.contains(15) || rows.contains(16) {
        try dedupeRows(llvs: llvs, restic: restic, environment: environment, work: work, table: table)
    }
    if rows.contains(17) {
        let mebibytes = Int(option("kill-size-mib", in: arguments) ?? "") ?? 2048
        try killedBackupRow(llvs: llvs, apache: apache, mebibytes: mebibytes, work: work, table: table)
    }
}

func resticVersion() throws -> String {
    guard
        let version = output(of: ["/usr/bin/env", "restic", "version"])?.split(separator: " ").dropFirst().first.map(
            String.init)
    else {
        throw BenchmarkError("restic is not installed (apt-get install restic)")
    }
    return version
}

/// Bytes under a folder, as `du` counts them (blocks actually used).
func diskBytes(_ path: String) -> Int64 {
    (output(of: ["/usr/bin/du", "-sk", path])?.split(separator: "\t").first.flatMap { Int64($0) } ?? 0) * 1024
}

private func ratioText(_ theirs: Double, _ ours: Double) -> String {
    let ratio = theirs / ours
    return ratio >= 1 ? String(format: "%.1f× faster", ratio) : String(format: "%.1f× slower", 1 / ratio)
}

private func describe(_ run: MeasuredRun) -> String {
    String(format: "%.2f s, peak %.0f MiB", run.seconds, run.peakMiB)
}

/// Two rows: a first backup of `files` small files (20–200 B, 100 a folder) and the same again unchanged.
func scalePair(
    llvs: URL, restic: String, environment: [String: String], files: Int, firstRow: Int, work: URL,
    table: ComparisonTable
) throws {
    let tree = work.appendingPathComponent("scale-tree-\(files)")
    print("  rows \(firstRow)–\(firstRow + 1): making \(files) files…")
    let bytes = try makeTree(at: tree, count: files, sizes: 20...200, seed: 29)
    defer { try? FileManager.default.removeItem(at: tree) }
    let store = work.appendingPathComponent("scale-store-\(files)").path,
        repository = work.appendingPathComponent("scale-repo-\(files)").path
    _ = try runMeasured([llvs.path, "init", "--store", store])
    _ = try runMeasured(["/usr/bin/env", "restic", "init", "--repo", repository, "--quiet"], environment: environment)
    defer {
        try? FileManager.default.removeItem(atPath: store)
        try? FileManager.default.removeItem(atPath: repository)
    }
    let ours = { try runMeasured([llvs.path, "backup", tree.path, "--store", store]) }
    let theirs = {
        try runMeasured(
            ["/usr/bin/env", "restic", "backup", tree.path, "--repo", repository, "--quiet"], environment: environment)
    }
    // restic first: it meets the tree as just written, as llvs does in the re-run's turn.
    let resticFirst = try theirs(), llvsFirst = try ours()
    let llvsAgain = try ours(), resticAgain = try theirs()
    let what = String(
        format: "first backup of %d small files (%.0f MB, 20–200 B, 100 a folder)", files, Double(bytes) / 1e6)
    let firstRatio = resticFirst.seconds / llvsFirst.seconds
    let isLarge = files >= 1_000_000
    let firstMet =
        firstRatio >= 1.5 && (isLarge ? llvsFirst.peakMiB < 300 : llvsFirst.peakMiB <= resticFirst.peakMiB / 2)
    table.add(
        .init(
            number: firstRow, what: what, ours: "llvs backup: \(describe(llvsFirst))",
            theirs: "restic \(restic): \(describe(resticFirst))",
            ratio: ratioText(resticFirst.seconds, llvsFirst.seconds),
            target: isLarge ? "≥ 1.5× faster, peak < 300 MiB" : "≥ 1.5× faster, ≤ half restic's peak", met: firstMet))
    let againRatio = resticAgain.seconds / llvsAgain.seconds
    table.add(
        .init(
            number: firstRow + 1, what: "the same again, nothing changed", ours: "llvs backup: \(describe(llvsAgain))",
            theirs: "restic \(restic): \(describe(resticAgain))",
            ratio: ratioText(resticAgain.seconds, llvsAgain.seconds),
            target: isLarge ? "(scale)" : "≥ 5× faster", met: isLarge ? nil : againRatio >= 5))
}

/// Rows 15 and 16: two identical 20 MB files (stored once?), then one byte changed in one of them (how much is added
/// to the store, sent to a local-folder remote, added to restic's repository).
func dedupeRows(llvs: URL, restic: String, environment: [String: String], work: URL, table: ComparisonTable) throws {
    let tree = work.appendingPathComponent("dedupe-tree")
    try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
    var generator = SeededGenerator(seed: 41)
    var data = Data(count: 20_000_000)
    data.withUnsafeMutableBytes { raw in
        for index in raw.bindMemory(to: UInt64.self).indices {
            raw.bindMemory(to: UInt64.self)[index] = generator.next()
        }
    }
    try data.write(to: tree.appendingPathComponent("one.bin"))
    try data.write(to: tree.appendingPathComponent("two.bin"))
    let store = work.appendingPathComponent("dedupe-store").path,
        repository = work.appendingPathComponent("dedupe-repo").path
    let remote = work.appendingPathComponent("dedupe-remote").path
    let config = ["XDG_CONFIG_HOME": work.appendingPathComponent("dedupe-config").path]
    _ = try runMeasured([llvs.path, "init", "--store", store], environment: config)
    _ = try runMeasured(
        [llvs.path, "remote", "add", "home", "file://" + remote, "--store", store], environment: config)
    _ = try runMeasured(["/usr/bin/env", "restic", "init", "--repo", repository, "--quiet"], environment: environment)
    let storeStart = diskBytes(store), repositoryStart = diskBytes(repository)
    _ = try runMeasured([llvs.path, "backup", tree.path, "--store", store, "--to", "home"], environment: config)
    _ = try runMeasured(
        ["/usr/bin/env", "restic", "backup", tree.path, "--repo", repository, "--quiet"], environment: environment)
    let storeFirst = diskBytes(store), repositoryFirst = diskBytes(repository), remoteFirst = diskBytes(remote)
    table.add(
        .init(
            number: 15, what: "two identical 20 MB files, first backup: bytes stored",
            ours: String(
                format: "llvs: store +%.1f MB, remote %.1f MB", Double(storeFirst - storeStart) / 1e6,
                Double(remoteFirst) / 1e6),
            theirs: String(
                format: "restic \(restic): repository +%.1f MB", Double(repositoryFirst - repositoryStart) / 1e6),
            ratio: "", target: "stored once (< 21 MB)", met: storeFirst - storeStart < 21_000_000))
    data[12_345_678] ^= 0xFF
    try data.write(to: tree.appendingPathComponent("one.bin"))
    _ = try runMeasured([llvs.path, "backup", tree.path, "--store", store, "--to", "home"], environment: config)
    _ = try runMeasured(
        ["/usr/bin/env", "restic", "backup", tree.path, "--repo", repository, "--quiet"], environment: environment)
    let storeAdded = diskBytes(store) - storeFirst, remoteAdded = diskBytes(remote) - remoteFirst
    let repositoryAdded = diskBytes(repository) - repositoryFirst
    table.add(
        .init(
            number: 16, what: "one byte changed in one of them, backed up again (--to a local-folder remote)",
            ours: String(
                format: "llvs: store +%.2f MiB, sent +%.2f MiB", Double(storeAdded) / 1_048_576,
                Double(remoteAdded) / 1_048_576),
            theirs: String(format: "restic \(restic): repository +%.2f MiB", Double(repositoryAdded) / 1_048_576),
            ratio: "", target: "≤ 4 MiB stored and sent", met: storeAdded <= 4 << 20 && remoteAdded <= 4 << 20))
}

/// Row 17: a first `llvs backup --to` of `mebibytes` of new data to Apache, killed when the server has received about
/// 90% of what a whole run sends; the re-run's bytes, counted in the server's log, against a whole run's.
func killedBackupRow(llvs: URL, apache: RealWebDAVServer, mebibytes: Int, work: URL, table: ComparisonTable) throws {
    let tree = work.appendingPathComponent("killed-tree")
    try FileManager.default.createDirectory(at: tree, withIntermediateDirectories: true)
    var generator = SeededGenerator(seed: 43)
    let fileSize = 64 << 20
    print("  row 17: making \(mebibytes) MiB of files…")
    for index in 0..<max(1, (mebibytes << 20) / fileSize) {
        var data = Data(count: fileSize)
        data.withUnsafeMutableBytes { raw in
            for word in raw.bindMemory(to: UInt64.self).indices {
                raw.bindMemory(to: UInt64.self)[word] = generator.next()
            }
        }
        try data.write(to: tree.appendingPathComponent("file-\(index).bin"))
    }
    defer { try? FileManager.default.removeItem(at: tree) }
    let environment = [
        "XDG_CONFIG_HOME": work.appendingPathComponent("killed-config").path, "LLVS_WEBDAV_USER": apache.user,
        "LLVS_WEBDAV_PASSWORD": apache.password,
    ]
    let remoteURL = apache.url.absoluteString.replacingOccurrences(of: "http://", with: "webdav://")
    func prepare(_ name: String) throws -> String {
        let store = work.appendingPathComponent("killed-store-\(name)").path
        _ = try runMeasured([llvs.path, "init", "--store", store], environment: environment)
        _ = try runMeasured(
            [llvs.path, "remote", "add", name, remoteURL, "--base-path", "killed-\(name)", "--store", store],
            environment: environment)
        return store
    }
    // A whole run: what a first backup sends.
    let wholeStore = try prepare("whole")
    let before = apache.bytesReceived()
    let whole = try runMeasured(
        [llvs.path, "backup", tree.path, "--store", wholeStore, "--to", "whole"], environment: environment)
    let total = apache.bytesReceived() - before
    // The kill is timed by what lands in the server's folder as it arrives (the log has a request only once it ends).
    let landed = diskBytes(apache.dataFolder.appendingPathComponent("killed-whole").path)
    try? FileManager.default.removeItem(atPath: wholeStore)

    let store = try prepare("killed")
    let process = ChildProcess()
    process.executableURL = llvs
    process.arguments = ["backup", tree.path, "--store", store, "--to", "killed"]
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.run()
    let folder = apache.dataFolder.appendingPathComponent("killed-killed").path
    while process.isRunning && diskBytes(folder) < landed * 9 / 10 { usleep(10_000) }
    let atKill = diskBytes(folder)
    kill(process.processIdentifier, SIGKILL)
    process.waitUntilExit()
    guard process.terminationReason == .uncaughtSignal else {
        throw BenchmarkError("row 17: the backup finished before it was killed")
    }
    let resumeStart = apache.bytesReceived()
    let resumed = try runMeasured(
        [llvs.path, "backup", tree.path, "--store", store, "--to", "killed"], environment: environment)
    let again = apache.bytesReceived() - resumeStart
    try? FileManager.default.removeItem(atPath: store)
    let share = Double(again) / Double(total)
    table.add(
        .init(
            number: 17,
            what:
                "first backup --to Apache of \(mebibytes) MiB killed when the server held \(Int((Double(atKill) / Double(landed) * 100).rounded()))% of what a whole run leaves there, then run again",
            ours: String(
                format: "whole run %.0f MB in %.1f s; re-run sent %.0f MB in %.1f s", Double(total) / 1e6,
                whole.seconds,
                Double(again) / 1e6, resumed.seconds),
            theirs: "—", ratio: String(format: "%.1f%% sent again", share * 100), target: "≤ 15% sent again",
            met: share <= 0.15))
}
