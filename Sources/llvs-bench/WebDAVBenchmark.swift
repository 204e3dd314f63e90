import Foundation
import LLVSSupport
import LLVS
import LLVSHTTP
import LLVSMocks
import LLVSWebDAV

/// Runs a program to completion, returning how long it took; fails when it fails.
func timeProcess(_ arguments: [String], environment: [String: String] = [:]) throws -> Double {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: arguments[0])
    process.arguments = Array(arguments.dropFirst())
    process.environment = ProcessInfo.processInfo.environment.merging(environment) { _, new in new }
    process.standardOutput = FileHandle.nullDevice
    let errors = Pipe()
    process.standardError = errors
    let start = DispatchTime.now().uptimeNanoseconds
    try process.run()
    let message = errors.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else {
        throw BenchmarkError("\(arguments[0]) failed: \(String(decoding: message.suffix(500), as: UTF8.self))")
    }
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func measure(
    _ runs: Int, _ body: (Int) async throws -> Double
) async throws -> (median: Double, min: Double, max: Double) {
    var figures: [Double] = []
    for run in 0..<runs { figures.append(try await body(run)) }
    return (median(figures), figures.min()!, figures.max()!)
}

/// Seconds `body` takes.
func elapsed(_ body: () async throws -> Void) async rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try await body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

func format(_ figure: (median: Double, min: Double, max: Double)) -> String {
    String(format: "%7.2f s [%.2f–%.2f]", figure.median, figure.min, figure.max)
}

/// Rows 1, 2 and 4 of the comparison: against Apache mod_dav, the connector against curl -T and rclone copy, and a
/// push with parallel transfers against one at a time.
func webdavBenchmark(
    _ arguments: [String], apache: RealWebDAVServer, peer: RclonePeer, rclone: [String: String], table: ComparisonTable
) async throws {
    let fileCount = Int(option("files", in: arguments) ?? "") ?? 2000
    let versionCount = Int(option("versions", in: arguments) ?? "") ?? 2000
    let sizeMiB = Int(option("size-mib", in: arguments) ?? "") ?? 256
    let runs = Int(option("runs", in: arguments) ?? "") ?? 3
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-webdav-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let auth = WebDAVConfiguration.Authentication.basic(user: apache.user, password: apache.password)
    let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: apache.url, authentication: auth))

    // 4. One large file: the connector against curl -T (first, so the peak memory figure is this transfer's).
    let big = work.appendingPathComponent("big.bin")
    try Data().write(to: big)
    let handle = try FileHandle(forWritingTo: big)
    let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 29) })
    for _ in 0..<sizeMiB { handle.write(piece) }
    try handle.close()
    let connectorBig = try await measure(runs) { run in
        try await elapsed {
            try await fileSystem.upload(fileAt: big, to: "big/connector-\(run).bin")
        }
    }
    let peak = peakResidentMiB()
    let curlBig = try await measure(runs) { run in
        try timeProcess([
            "/usr/bin/curl", "-sS", "-f", "-T", big.path, "-u", "\(apache.user):\(apache.password)",
            apache.url.appendingPathComponent("big/curl-\(run).bin").absoluteString,
        ])
    }
    let bigRatio = curlBig.median / connectorBig.median
    table.add(
        .init(
            number: 4, what: "one \(sizeMiB) MiB file to Apache mod_dav",
            ours: String(
                format: "%@ (%.0f MiB/s), peak resident %.1f MiB", formatSeconds(connectorBig),
                Double(sizeMiB) / connectorBig.median, peak),
            theirs: String(format: "curl -T %@ (%.0f MiB/s)", formatSeconds(curlBig), Double(sizeMiB) / curlBig.median),
            ratio: String(format: "%.2f of curl's throughput", bigRatio), target: "≥ 0.8 of curl, peak < 100 MiB",
            met: bigRatio >= 0.8 && peak < 100))

    // 1. Many small files: the connector (8 at once) against rclone copy at its default and at equal parallelism.
    try await smallFilesRow(
        server: apache, label: "Apache mod_dav", peer: peer, rclone: rclone, fileCount: fileCount, runs: runs,
        work: work, table: table)

    // 2. A store of many versions pushed with 8 transfers at once against one at a time.
    let store = try Store(creatingAt: work.appendingPathComponent("store"))
    var head: Version?
    for i in 0..<versionCount {
        head = try store.makeVersion(
            basedOnPredecessor: head?.id, inserting: [Value(id: Value.ID("item-\(i)"), data: Data("value \(i)".utf8))])
    }
    func push(_ concurrency: Int, _ run: Int) async throws -> Double {
        let exchange = CloudFileSystemExchange(
            store: store, fileSystem: fileSystem, basePath: "push-\(concurrency)-\(run)", concurrency: concurrency)
        let start = DispatchTime.now().uptimeNanoseconds
        let report = try await exchange.send()
        guard report.failures.isEmpty, report.sent.count == versionCount else {
            throw BenchmarkError("the push failed: \(report.failures.first.map { "\($0)" } ?? "")")
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    let parallel = try await measure(runs) { try await push(8, $0) }
    let serial = try await measure(runs) { try await push(1, $0) }
    let pushRatio = serial.median / parallel.median
    // What the server allows: the same PUTs (each version's changes, then its version file) by curl, 8 at once
    // against one at a time over one connection, so the gain parallel transfers can give is measured, not guessed.
    let files = work.appendingPathComponent("push-files")
    try FileManager.default.createDirectory(at: files, withIntermediateDirectories: true)
    var puts: [(file: URL, path: String)] = []
    for version in store.history.topologicallySorted() {
        let changes = files.appendingPathComponent("changes-\(version.id.rawValue)"),
            record = files.appendingPathComponent("version-\(version.id.rawValue)")
        try store.encodedChanges(madeInVersionIdentifiedBy: version.id).data().write(to: changes)
        try RemoteFormat.encodeVersion(version).write(to: record)
        puts += [(changes, "changes/\(version.id.rawValue)"), (record, "versions/\(version.id.rawValue)")]
    }
    func curlPush(_ transfers: Int, _ run: Int) async throws -> Double {
        let base = "curl-push-\(transfers)-\(run)"
        for folder in [base, "\(base)/changes", "\(base)/versions"] { try await fileSystem.makeFolder(folder) }
        let config = work.appendingPathComponent("\(base).curlrc")
        try puts.map {
            "upload-file = \"\($0.file.path)\"\nurl = \"\(apache.url.absoluteString)\(base)/\($0.path)\"\noutput = /dev/null\n"
        }
        .joined().write(to: config, atomically: true, encoding: .utf8)
        let parallelism = transfers > 1 ? ["-Z", "--parallel-max", "\(transfers)"] : []
        return try timeProcess(
            ["/usr/bin/curl", "-sS", "-f", "-u", "\(apache.user):\(apache.password)"] + parallelism + [
                "-K", config.path,
            ])
    }
    let curlParallel = try await measure(runs) { try await curlPush(8, $0) }
    let curlSerial = try await measure(runs) { try await curlPush(1, $0) }
    let curlRatio = curlSerial.median / curlParallel.median
    table.add(
        .init(
            number: 2, what: "push a store of \(versionCount) versions to Apache mod_dav",
            ours: "8 transfers at once: \(formatSeconds(parallel))",
            theirs: "one at a time (as LLVS apps send): \(formatSeconds(serial)); curl of the same \(puts.count) PUTs: "
                + "8 at once \(formatSeconds(curlParallel)), one at a time \(formatSeconds(curlSerial)) (\(String(format: "%.2f×", curlRatio)))",
            ratio: String(format: "%.2f× faster (curl: %.2f×)", pushRatio, curlRatio),
            target: "≥ 4×, or 8 at once as fast as curl's (the server's limit)",
            met: pushRatio >= 4 || parallel.median <= curlParallel.median))
}

/// Row 1 on one server: `fileCount` files of 4 KiB through the connector (8 at once) against `rclone copy` at its
/// default parallelism, at 8, and at 8 with its WebDAV pacer off (the strongest fair peer, what the ratio is of).
func smallFilesRow(
    server: RealWebDAVServer, label: String, peer: RclonePeer, rclone: [String: String], fileCount: Int, runs: Int,
    work: URL,
    table: ComparisonTable
) async throws {
    let fileSystem = WebDAVFileSystem(
        configuration: WebDAVConfiguration(
            url: server.url, authentication: .basic(user: server.user, password: server.password)))
    let small = work.appendingPathComponent("small-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
    for i in 0..<fileCount {
        try Data(repeating: UInt8(i % 251), count: 4096).write(to: small.appendingPathComponent("file-\(i).bin"))
    }
    let names = (0..<fileCount).map { "file-\($0).bin" }
    let connector = try await measure(runs) { run in
        try await elapsed {
            try await withThrowingTaskGroup(of: Void.self) { group in
                var iterator = names.makeIterator()
                for _ in 0..<8 {
                    if let name = iterator.next() {
                        group.addTask {
                            try await fileSystem.upload(
                                fileAt: small.appendingPathComponent(name), to: "small/connector-\(run)/\(name)")
                        }
                    }
                }
                while try await group.next() != nil {
                    if let name = iterator.next() {
                        group.addTask {
                            try await fileSystem.upload(
                                fileAt: small.appendingPathComponent(name), to: "small/connector-\(run)/\(name)")
                        }
                    }
                }
            }
        }
    }
    func copy(_ flags: [String], _ tag: String, _ run: Int) throws -> Double {
        try timeProcess(
            [peer.path, "copy", small.path, "bench:small/rclone-\(tag)-\(run)", "--config", "/dev/null"] + flags,
            environment: rclone)
    }
    let rcloneDefault = try await measure(runs) { try copy([], "default", $0) }
    let rcloneEqual = try await measure(runs) { try copy(["--transfers", "8"], "8", $0) }
    let theirs =
        "rclone \(peer.version) copy: default (4 transfers) \(formatSeconds(rcloneDefault)); --transfers 8 \(formatSeconds(rcloneEqual))"
    if let unfairness = peer.unfairness {
        table.add(
            .init(
                number: 1, what: "\(fileCount) files of 4 KiB to \(label)",
                ours: "connector, 8 at once: \(formatSeconds(connector))",
                theirs: theirs, ratio: unfairness, target: "≥ 1.5× at equal parallelism", met: nil))
        return
    }
    let rcloneTuned = try await measure(runs) { try copy(["--transfers", "8"] + peer.unpaced, "8-unpaced", $0) }
    let ratio = rcloneTuned.median / connector.median
    table.add(
        .init(
            number: 1, what: "\(fileCount) files of 4 KiB to \(label)",
            ours: "connector, 8 at once: \(formatSeconds(connector))",
            theirs: theirs + "; --transfers 8 \(peer.unpaced.joined(separator: " ")) \(formatSeconds(rcloneTuned))",
            ratio: String(format: "%.1f× faster than the tuned rclone", ratio), target: "≥ 1.5× at equal parallelism",
            met: ratio >= 1.5))
}

/// rclone's configuration for a WebDAV server, through environment variables (the remote is called `bench`).
func rcloneEnvironment(for server: RealWebDAVServer, peer: RclonePeer) throws -> [String: String] {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: peer.path)
    process.arguments = ["obscure", server.password]
    let out = Pipe()
    process.standardOutput = out
    try process.run()
    let obscured = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).trimmingCharacters(
        in: .whitespacesAndNewlines)
    process.waitUntilExit()
    return [
        "RCLONE_CONFIG_BENCH_TYPE": "webdav", "RCLONE_CONFIG_BENCH_URL": server.url.absoluteString,
        "RCLONE_CONFIG_BENCH_VENDOR": "other", "RCLONE_CONFIG_BENCH_USER": server.user,
        "RCLONE_CONFIG_BENCH_PASS": obscured,
    ]
}
