import Foundation
import LLVS
#if canImport(Glibc)
import Glibc
#endif

/// A snapshot file restored into new stores, again and again in one process: the restore alone (a zip-v1 import,
/// or an llvs-bundles-v1 restore), without the download, the listing or a process start, with the CPU time each
/// run used beside its wall time. CPU time moves less than wall time on a shared machine, so it is the figure to
/// compare two builds by.
func restoreBenchmark(_ arguments: [String]) throws {
    guard let path = option("snapshot", in: arguments) else { throw BenchmarkError("restore needs --snapshot FILE") }
    let format = option("format", in: arguments) ?? "zip-v1"
    let runs = Int(option("runs", in: arguments) ?? "") ?? 5
    let snapshot = URL(fileURLWithPath: path)
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-restore-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }
    // The count a manifest would give: at most the versions the snapshot holds, so any snapshot passes the check.
    let versionCount = Int(option("versions", in: arguments) ?? "") ?? 1
    var walls: [Double] = [], cpus: [Double] = []
    var restored = 0
    for run in 0..<runs {
        let store = try Store(creatingAt: root.appendingPathComponent("store-\(run)"))
        sync()
        let cpuBefore = processCPUSeconds()
        let wall = try seconds {
            restored = try store.restoreSnapshot(from: snapshot, format: format, versionCount: versionCount)
        }
        walls.append(wall)
        cpus.append(processCPUSeconds() - cpuBefore)
    }
    print(
        String(
            format:
                "restore of %@ (%@, %d versions), %d runs: wall %.3f s [%.3f–%.3f], CPU %.3f s [%.3f–%.3f] (medians [min–max])",
            snapshot.lastPathComponent, format, restored, runs, median(walls), walls.min()!, walls.max()!,
            median(cpus), cpus.min()!, cpus.max()!))
}

/// User and system CPU time this process has used, all threads together.
func processCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    func seconds(_ time: timeval) -> Double { Double(time.tv_sec) + Double(time.tv_usec) / 1e6 }
    return seconds(usage.ru_utime) + seconds(usage.ru_stime)
}
