import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// A program run to its end with its time and its own peak resident memory (`wait4`'s rusage, which Foundation's
/// Process does not give): how a peer tool and `llvs` are compared on memory as well as time.
struct MeasuredRun {
    var seconds: Double
    var peakMiB: Double
}

/// Runs `arguments` with `environment` added; standard output is discarded, standard error kept for the failure
/// message. Fails when the program fails.
///
/// The peak is taken by `/usr/bin/time` (Debian's `time`, priority standard) when it is there: `posix_spawn` starts
/// the child in the bench's own memory (vfork), and Linux keeps that memory's high-water mark in the child's
/// `ru_maxrss` across `exec`, so `wait4` reports at least the bench's own size (265 MiB after the in-process mocks,
/// against about 100 MiB for `llvs clone` alone). `time` forks from a small process, so its figure is the program's.
func runMeasured(_ arguments: [String], environment: [String: String] = [:]) throws -> MeasuredRun {
    let errors = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-stderr-\(UUID().uuidString)")
    let peakFile = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-peak-\(UUID().uuidString)")
    defer {
        try? FileManager.default.removeItem(at: errors)
        try? FileManager.default.removeItem(at: peakFile)
    }
    let timed = FileManager.default.isExecutableFile(atPath: timeBinary)
    let command = timed ? [timeBinary, "-f", "%M", "-o", peakFile.path] + arguments : arguments
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 2, errors.path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    SpawnFileActions.closeInheritedDescriptors(&actions)
    let merged = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    let argv = command.map { strdup($0) } + [nil]
    let envp = merged.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { argv.forEach { free($0) }; envp.forEach { free($0) } }
    var pid: pid_t = 0
    let start = DispatchTime.now().uptimeNanoseconds
    let spawned = posix_spawnp(&pid, command[0], &actions, nil, argv, envp)
    guard spawned == 0 else {
        throw BenchmarkError("cannot run \(arguments[0]): \(String(cString: strerror(spawned)))")
    }
    var status: Int32 = 0
    var usage = rusage()
    while wait4(pid, &status, 0, &usage) < 0 {
        guard errno == EINTR else {
            throw BenchmarkError("waiting for \(arguments[0]) failed: \(String(cString: strerror(errno)))")
        }
    }
    let seconds = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    // WIFEXITED and WEXITSTATUS, which Swift does not import.
    guard status & 0x7f == 0, (status >> 8) & 0xff == 0 else {
        let message = (try? String(contentsOf: errors, encoding: .utf8)) ?? ""
        throw BenchmarkError(
            "\(arguments.prefix(3).joined(separator: " ")) failed (status \(status)): \(message.suffix(500))")
    }
    if timed {
        let reported = (try? String(contentsOf: peakFile, encoding: .utf8))?.split(separator: "\n").last.flatMap {
            Double($0)
        }
        guard let kib = reported else { throw BenchmarkError("\(timeBinary) gave no peak memory for \(arguments[0])") }
        return MeasuredRun(seconds: seconds, peakMiB: kib / 1024)
    }
    return MeasuredRun(seconds: seconds, peakMiB: Double(usage.ru_maxrss) / 1024)
}

private let timeBinary = "/usr/bin/time"

/// The output of a short command, for version strings.
func output(of arguments: [String]) -> String? {
    ChildProcess.output(of: URL(fileURLWithPath: arguments[0]), Array(arguments.dropFirst())).flatMap {
        $0.status == 0 ? $0.output : nil
    }
}

/// Writes out every file system's dirty data before a timed run, so a run does not pay for the previous one's
/// writeback: a full pull leaves tens of thousands of just-written files that the kernel writes out over the
/// following seconds, on the same two cores the next run uses.
func settleWriteback() {
    sync()
}
