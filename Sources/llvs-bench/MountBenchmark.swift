import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// `llvs-bench mount`: browsing backups through a mount, against `restic mount` of the same data, in one run. A file
/// of SIZE MiB (incompressible) and a tree of FILES small files are backed up by both; llvs mounts its store, and the
/// same store sent to a file:// remote without a store (`--from`), restic its repository, and
/// the bench times `cat` of the large file and `find | wc -l` of the tree through each mount, with the page cache
/// dropped before each where the kernel allows it, and reports each mount process's peak memory (VmHWM) after both.
func mountBenchmark(_ arguments: [String]) throws {
    let sizeMiB = Int(option("size-mib", in: arguments) ?? "") ?? 2048
    let fileCount = Int(option("files", in: arguments) ?? "") ?? 200_000
    let llvs = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("llvs")
    guard FileManager.default.isExecutableFile(atPath: llvs.path) else {
        throw BenchmarkError("build llvs beside llvs-bench: \(llvs.path) is missing")
    }
    let resticVersion = try resticVersion()
    let work = URL(fileURLWithPath: option("work", in: arguments) ?? FileManager.default.temporaryDirectory.path)
        .appendingPathComponent("llvs-bench-mount-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let big = work.appendingPathComponent("data/big"), many = work.appendingPathComponent("data/many")
    try FileManager.default.createDirectory(at: big, withIntermediateDirectories: true)
    try writeIncompressible(big.appendingPathComponent("big.bin").path, mebibytes: sizeMiB)
    for index in 0..<fileCount {
        let folder = many.appendingPathComponent("d\(index / 1000)")
        if index % 1000 == 0 { try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true) }
        try Data("\(index)\n".utf8).write(to: folder.appendingPathComponent("f\(index).txt"))
    }
    print(
        "Mount: \(sizeMiB) MiB in one file and \(fileCount) small files; llvs mount against restic mount \(resticVersion)"
    )

    let store = work.appendingPathComponent("store").path, repository = work.appendingPathComponent("restic").path
    let restic = ["RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache").path]
    _ = try runMeasured([llvs.path, "init", "--store", store])
    _ = try runMeasured([llvs.path, "backup", big.path, "--name", "big", "--store", store])
    _ = try runMeasured([llvs.path, "backup", many.path, "--name", "many", "--store", store])
    // The same store sent to a file:// remote, mounted from there without a store (`--from`): what restic's
    // repository is to restic mount.
    let remote = "file://" + work.appendingPathComponent("remote").path
    _ = try runMeasured([llvs.path, "remote", "add", "bench", remote, "--store", store])
    _ = try runMeasured([llvs.path, "push", "bench", "--store", store])
    _ = try runMeasured(["/usr/bin/env", "restic", "init", "--repo", repository, "--quiet"], environment: restic)
    _ = try runMeasured(
        ["/usr/bin/env", "restic", "backup", "--repo", repository, "--quiet", big.path, many.path], environment: restic)

    var figures: [String: [String]] = [:]
    var peaks: [String] = []
    var ready: [String] = []
    for (tool, command, environment) in [
        ("llvs", [llvs.path, "mount", "MOUNT", "--store", store], [String: String]()),
        ("llvs-from", [llvs.path, "mount", "MOUNT", "--from", remote], [String: String]()),
        ("restic", ["/usr/bin/env", "restic", "mount", "--repo", repository, "MOUNT"], restic),
    ] {
        let point = work.appendingPathComponent("mnt-\(tool)").path
        try FileManager.default.createDirectory(atPath: point, withIntermediateDirectories: true)
        dropPageCache()
        let started = Date()
        let mounted = try BackgroundMount(
            command.map { $0 == "MOUNT" ? point : $0 }, environment: environment, point: point)
        defer { mounted.stop() }
        ready.append(String(format: "%.1f s", Date().timeIntervalSince(started)))
        let (bigPath, manyPath) =
            tool == "restic"
            ? (point + "/snapshots/latest" + big.path + "/big.bin", point + "/snapshots/latest" + many.path + "/")
            : (point + "/sources/big/latest/big.bin", point + "/sources/many/latest/")
        dropPageCache()
        let cat = try runMeasured(["/bin/sh", "-c", "cat \"$0\" > /dev/null", bigPath])
        dropPageCache()
        let find = try runMeasured(["/bin/sh", "-c", "find \"$0\" | wc -l > /dev/null", manyPath])
        figures["cat", default: []].append(
            String(format: "%.2f s (%.0f MB/s)", cat.seconds, Double(sizeMiB) * 1.048576 / cat.seconds))
        figures["find", default: []].append(String(format: "%.2f s", find.seconds))
        peaks.append(String(format: "%.0f MiB", mounted.peakMiB()))
    }
    print(
        "| through the mount | llvs mount (store) | llvs mount --from (file:// remote) | restic mount |\n|---|---|---|---|"
    )
    for (label, cells) in [
        ("mounted after (±0.1 s)", ready),
        ("cat of the \(sizeMiB) MiB file", figures["cat"] ?? []),
        ("find | wc -l of \(fileCount) files", figures["find"] ?? []),
        ("the mount process's peak memory", peaks),
    ] {
        print("| \(label) | " + cells.joined(separator: " | ") + " |")
    }
}

/// A mount command running in the background until `stop` (SIGINT), ready once its mount point is a different file
/// system from its parent.
private final class BackgroundMount {
    let process = ChildProcess()
    let point: String

    init(_ arguments: [String], environment: [String: String], point: String) throws {
        self.point = point
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
        process.standardOutput = nil
        process.standardError = nil
        try process.run()
        // The mount point's device changes when the mount is up: polled, since a mount announces itself nowhere a
        // bench can wait on, for at most a minute.
        var parent = stat(), here = stat()
        stat((point as NSString).deletingLastPathComponent, &parent)
        for _ in 0..<600 {
            if stat(point, &here) == 0, here.st_dev != parent.st_dev { return }
            guard process.isRunning else { throw BenchmarkError("\(arguments[0]) mount ended before it mounted") }
            usleep(100_000)
        }
        throw BenchmarkError("\(arguments.joined(separator: " ")) did not mount within a minute")
    }

    /// The process's peak resident memory so far.
    func peakMiB() -> Double {
        guard let status = try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8),
            let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
            let kib = Double(line.split(separator: " ").dropFirst().first ?? "")
        else { return 0 }
        return kib / 1024
    }

    func stop() {
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
    }
}

/// Drops clean page cache (root only; quietly nothing otherwise), so a read is the file system's, not memory's.
private func dropPageCache() {
    sync()
    try? Data("3\n".utf8).write(to: URL(fileURLWithPath: "/proc/sys/vm/drop_caches"))
}

/// A file of incompressible bytes, written in pieces.
private func writeIncompressible(_ path: String, mebibytes: Int) throws {
    FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    for index in 0..<mebibytes { try handle.write(contentsOf: SeededGenerator.bytes(1 << 20, seed: UInt64(index + 1))) }
}
