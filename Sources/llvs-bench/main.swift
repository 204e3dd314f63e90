import Foundation
import LLVS
import LLVSSupport
import LLVSSQLite
import LLVSConformance

// Benchmarks that print figures. Usage:
//
//   swift run -c release llvs-bench store [--sizes 1000,10000,100000] [--storages file,sqlite] [--saves N] [--reads N]
//
// `store`: the cost of one save (one value updated, one inserted) and of one read in stores holding
// 1k, 10k and 100k values, with random IDs and with IDs that share a long prefix, for each storage side by side.
//
//   swift run -c release llvs-bench sync [--versions 1000,10000] [--runs N] [--keep-remote DIR]
//
// `sync`: on a local-folder remote holding N versions, a new store's full pull against a snapshot bootstrap,
// and the file operations an incremental sync of one new version costs on each side. `--keep-remote DIR` leaves each
// remote in DIR/N, so a bootstrap can be profiled alone: `llvs clone file://DIR/N NEWSTORE`.
//
//   swift run -c release llvs-bench restore --snapshot FILE [--format zip-v1|llvs-bundles-v1] [--versions N] [--runs 5]
//
// `restore`: a local snapshot file (the chunks of a remote's snapshot put together, as `sync --keep-remote` leaves
// them) restored into new stores in this process, run after run: the restore's wall and CPU time without the
// download, the listing or a process start. `--versions` is the count the manifest gives (checked as a minimum).
//
//   swift run -c release llvs-bench http [--size-mib 1024] [--requests 2000]
//
// `http`: a large upload and download streamed through the HTTP client to a mock server on loopback (throughput
// and the process's peak resident memory), and many small requests with 1 and with 8 transfers at once.
//
//   swift build -c release && .build/release/llvs-bench compare [--runs 3] [--files 2000] [--versions 2000]
//       [--size-mib 256] [--backup-files 2000] [--clone-versions 10000] [--rows 1,2,3,4,5,6] [--remotes webdav,gdrive,onedrive,pcloud,box]
//
// `compare`: one table, side by side in one run, against Apache mod_dav and the Google Drive mock started here:
// (1) many small files through the connector against `rclone copy`; (2) a store pushed with 8 transfers at once
// against one at a time; (3) `llvs backup --to` against `rclone copy` of the same tree; (4) one large file through
// the connector against `curl -T`; (5) a new store by full pull against snapshot bootstrap; (6) the requests of an
// incremental sync. `llvs` must be built beside `llvs-bench`. `--rows` and `--remotes` run part of it.
//
//   swift build -c release && .build/release/llvs-bench encryption [--files 20000] [--size-mib 1024] [--runs 3]
//
// `encryption`: the same `llvs` commands against a plaintext and an encrypted local-folder remote, taking turns: a
// first `backup --to` of many small files, and `push` then `clone` of one large value.
//
//   swift build -c release && .build/release/llvs-bench repository [--runs 1] [--work DIR]
//
// `repository`: what backups cost to keep, against restic at its default compression, on a ~500 MB mixed tree copied
// from this machine: the store's and a compact remote's bytes against restic's repository, and the times of a first
// and an unchanged backup, a push, and a restore (also against `cp -a`).
//
//   swift build -c release && .build/release/llvs-bench retention [--rounds 10] [--keep 3] [--work DIR]
//
// `retention`: the same tree backed up ROUNDS times with about a fifth of its files edited each round, then
// `forget --keep-last KEEP --prune` on llvs and restic: bytes on disk after, the times, and whether every kept backup
// restores identical.
//
//   swift build -c release && .build/release/llvs-bench mount [--size-mib 2048] [--files 200000] [--work DIR]
//
// `mount`: `cat` of a large file and `find | wc -l` of many small ones through `llvs mount` and `restic mount` of the
// same data, and each mount process's peak memory.
//
//   swift run -c release llvs-bench models [--models 100000] [--rows 10000] [--runs 3]
//
// `models`: a projection pass over many changed models against inserting the same rows with one prepared statement,
// and an owned table's drain of many row changes against saving the same values directly.
//
//   swift run -c release llvs-bench listing [--entries 10000] [--runs 5]
//
// `listing`: a PROPFIND of a large folder on Apache mod_dav, by curl (the server's time) and by the connector.

func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[sorted.count / 2]
}

func percentile(_ values: [Double], _ p: Double) -> Double {
    let sorted = values.sorted()
    return sorted.isEmpty ? 0 : sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))]
}

func seconds(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

enum IDKind: String, CaseIterable {
    case random, sharedPrefix = "shared-prefix"

    func id(_ i: Int) -> Value.ID {
        switch self {
        case .random: Value.ID(UUID().uuidString)
        case .sharedPrefix:
            Value.ID("users/0000000000/documents/archive/2026/" + String(repeating: "p", count: 64) + "/item-\(i)")
        }
    }
}

func option(_ name: String, in arguments: [String]) -> String? {
    guard let index = arguments.firstIndex(of: "--\(name)"), index + 1 < arguments.count else { return nil }
    return arguments[index + 1]
}

func storeBenchmark(_ arguments: [String]) throws {
    let sizes = (option("sizes", in: arguments) ?? "1000,10000,100000").split(separator: ",").compactMap { Int($0) }
    let saveCount = Int(option("saves", in: arguments) ?? "") ?? 200
    let readCount = Int(option("reads", in: arguments) ?? "") ?? 2000
    let storages = (option("storages", in: arguments) ?? "file,sqlite").split(separator: ",").map(String.init)
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }

    print("Store benchmark: \(saveCount) saves and \(readCount) reads per row (medians; p90 in brackets)")
    print(
        "storage ids            values   fill(s)   save(ms)            bytes/save   read cold(µs)        read warm(µs)")
    var saveMedians: [String: [Int: Double]] = [:]
    for storage in storages {
        for kind in IDKind.allCases {
            for size in sizes {
                let url = root.appendingPathComponent("\(storage)-\(kind.rawValue)-\(size)")
                let store = try Store(
                    creatingAt: url, descriptor: StoreDescriptor(storage: storage),
                    makeStorage: SQLiteStorage.storageMaker)
                var ids = (0..<size).map(kind.id)
                var head: Version!
                let payload = Data(repeating: 0x61, count: 100)
                let fill = try seconds {
                    head = try store.makeVersion(
                        basedOnPredecessor: nil, inserting: ids.map { Value(id: $0, data: payload) })
                }
                var saveTimes: [Double] = []
                var bytes: [Double] = []
                for i in 0..<saveCount {
                    let updated = Value(id: ids.randomElement()!, data: Data("update \(i)".utf8))
                    let inserted = Value(id: kind.id(size + i), data: payload)
                    ids.append(inserted.id)
                    let t = try seconds {
                        head = try store.makeVersion(
                            basedOnPredecessor: head.id, inserting: [inserted], updating: [updated])
                    }
                    saveTimes.append(t)
                    if storage == "file" { bytes.append(Double(try versionFileSize(of: head.id, in: url))) }
                }
                // Cold: a freshly opened store, so map nodes come from disk. Warm: the same reads again.
                let reopened = try Store(openingAt: url, makeStorage: SQLiteStorage.storageMaker)
                let sample = (0..<readCount).map { _ in ids.randomElement()! }
                var cold: [Double] = [], warm: [Double] = []
                for id in sample { cold.append(try seconds { _ = try reopened.value(id: id, at: head.id) }) }
                for id in sample { warm.append(try seconds { _ = try reopened.value(id: id, at: head.id) }) }
                saveMedians["\(storage) \(kind.rawValue)", default: [:]][size] = median(saveTimes)
                print(
                    storage.padding(toLength: 8, withPad: " ", startingAt: 0)
                        + kind.rawValue.padding(toLength: 14, withPad: " ", startingAt: 0)
                        + String(
                            format: "%7d  %8.2f   %6.3f [%6.3f]   %8@    %7.1f [%7.1f]   %7.1f [%7.1f]",
                            size, fill, median(saveTimes) * 1e3, percentile(saveTimes, 0.9) * 1e3,
                            bytes.isEmpty ? "-" : String(Int(median(bytes))),
                            median(cold) * 1e6, percentile(cold, 0.9) * 1e6, median(warm) * 1e6,
                            percentile(warm, 0.9) * 1e6))
                try? FileManager.default.removeItem(at: url)
            }
        }
    }
    try historyWalkBenchmark(counts: [1001, 10001])
    if let small = sizes.min(), let large = sizes.max(), small != large {
        for (row, medians) in saveMedians.sorted(by: { $0.key < $1.key }) {
            let ratio = medians[large]! / medians[small]!
            print(String(format: "save at %d / save at %d values, %@ IDs: %.2f (target ≤ 2)", large, small, row, ratio))
        }
    }
}

func versionFileSize(of id: Version.ID, in store: URL) throws -> Int {
    // FileStorage names a version's file by the SHA-256 of its ID, in a folder named by the hash's first two digits.
    let versions = store.appendingPathComponent("versions")
    let name = SHA256.hex(Data(id.rawValue.utf8))
    let path = versions.appendingPathComponent(String(name.prefix(2))).appendingPathComponent(name).path
    return (try FileManager.default.attributesOfItem(atPath: path)[.size] as? Int) ?? 0
}

/// The walk of all versions in topological order (what a snapshot and a full send do), on a chain with a merge every
/// tenth version, against the whole-history sort it replaced.
func historyWalkBenchmark(counts: [Int]) throws {
    for count in counts {
        var history = History()
        var previous: Version?
        var side: Version?
        for i in 0..<count {
            let predecessors = previous.map {
                Version.Predecessors(idOfFirst: $0.id, idOfSecond: i % 10 == 0 ? side?.id : nil)
            }
            let version = Version(
                id: Version.ID(String(format: "version-%06d", i)), predecessors: predecessors,
                timestamp: TimeInterval(i))
            try history.add(version)
            if i % 10 == 5 {
                let branch = Version(
                    id: Version.ID(String(format: "branch-%06d", i)), predecessors: predecessors,
                    timestamp: TimeInterval(i))
                try history.add(branch)
                side = branch
            }
            previous = version
        }
        var walk: [Double] = [], wholeSort: [Double] = []
        for _ in 0..<30 {
            walk.append(seconds { _ = history.topologicallySorted() })
            wholeSort.append(
                seconds {
                    _ = history.versions.values.sorted { a, b in
                        let ga = history.generation(of: a.id)!, gb = history.generation(of: b.id)!
                        return ga != gb ? ga < gb : History.isOrderedBefore(a, b)
                    }
                })
        }
        print(
            String(
                format:
                    "history walk, %d versions: %.3f ms (the whole-history sort it replaced: %.3f ms), medians of 30",
                history.count, median(walk) * 1e3, median(wholeSort) * 1e3))
    }
}

let arguments = Array(CommandLine.arguments.dropFirst())
let usage = """
    usage: llvs-bench store [--sizes 1000,10000,100000] [--storages file,sqlite] [--saves N] [--reads N]
           llvs-bench sync [--versions 1000,10000] [--runs N] [--keep-remote DIR]
           llvs-bench http [--size-mib 1024] [--requests 2000]
           llvs-bench restore --snapshot FILE [--format zip-v1|llvs-bundles-v1] [--versions N] [--runs 5]
           llvs-bench compare [--runs 3] [--rows 1,…,17] [--remotes webdav,gdrive,onedrive,pcloud,box] [--files 2000] [--versions 2000]
                              [--size-mib 256] [--backup-files 2000] [--clone-versions 10000] [--restic-files 20000]
                              [--scale-files 200000,1000000] [--kill-size-mib 2048] [--rclone PATH] [--install-rclone]
           llvs-bench encryption [--files 20000] [--size-mib 1024] [--runs 3]
           llvs-bench repository [--runs 1] [--work DIR]
           llvs-bench s3 [--runs 1] [--work DIR] [--moto PATH]
           llvs-bench sftp [--runs 1] [--work DIR]
           llvs-bench retention [--rounds 10] [--keep 3] [--work DIR]
           llvs-bench mount [--size-mib 2048] [--files 200000] [--work DIR]
           llvs-bench listing [--entries 10000] [--runs 5] [--remote webdav|gdrive]
           llvs-bench models [--models 100000] [--rows 10000] [--runs 3]

    """

/// Ends the run with a message: 2 for wrong arguments, 1 for a benchmark that could not run (a missing server, say).
func stop(_ message: String, code: Int32) -> Never {
    FileHandle.standardError.write(Data("llvs-bench: \(message)\n".utf8))
    exit(code)
}

guard let command = arguments.first, command != "--help", command != "-h" else {
    print(usage, terminator: "")
    exit(arguments.isEmpty || arguments.first == "--help" || arguments.first == "-h" ? 0 : 2)
}
let words = Array(arguments.dropFirst())
guard let spec = BenchOptions.commands[command == "webdav" ? "compare" : command] else {
    FileHandle.standardError.write(Data("llvs-bench: unknown command \(command)\n".utf8))
    print(usage, terminator: "")
    exit(2)
}
do {
    try spec.check(words)
} catch {
    stop("\(error); see llvs-bench --help", code: 2)
}
do {
    switch command {
    case "store":
        try storeBenchmark(words)
    case "sync":
        try await syncBenchmark(words)
    case "http":
        try await httpBenchmark(words)
    case "restore":
        try restoreBenchmark(words)
    case "encryption":
        try encryptionBenchmark(words)
    case "repository":
        try repositoryBenchmark(words)
    case "s3":
        try await s3Benchmark(words)
    case "sftp":
        try await sftpBenchmark(words)
    case "retention":
        try retentionBenchmark(words)
    case "mount":
        try mountBenchmark(words)
    case "models":
        try await modelsBenchmark(words)
    case "listing":
        if option("remote", in: words) == "gdrive" {
            try await driveListingBenchmark(words)
        } else {
            try await listingBenchmark(words)
        }
    default:
        try await compareBenchmark(words)
    }
} catch {
    stop("\(error)", code: 1)
}
