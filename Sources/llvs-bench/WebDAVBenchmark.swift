import Foundation
import LLVS
import LLVSHTTP
import LLVSMocks
import LLVSWebDAV

/// Runs a program to completion, returning how long it took; fails when it fails.
func timeProcess(_ arguments: [String], environment: [String: String] = [:]) throws -> Double {
    let process = Process()
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

func measure(_ runs: Int, _ body: (Int) async throws -> Double) async throws -> (median: Double, min: Double, max: Double) {
    var figures: [Double] = []
    for run in 0..<runs { figures.append(try await body(run)) }
    return (median(figures), figures.min()!, figures.max()!)
}

func format(_ figure: (median: Double, min: Double, max: Double)) -> String {
    String(format: "%7.2f s [%.2f–%.2f]", figure.median, figure.min, figure.max)
}

func webdavBenchmark(_ arguments: [String]) async throws {
    let fileCount = Int(option("files", in: arguments) ?? "") ?? 2000
    let versionCount = Int(option("versions", in: arguments) ?? "") ?? 2000
    let sizeMiB = Int(option("size-mib", in: arguments) ?? "") ?? 256
    let runs = Int(option("runs", in: arguments) ?? "") ?? 3
    for binary in [RealWebDAVServer.apacheBinary, RealWebDAVServer.rcloneBinary, "/usr/bin/curl"] {
        if let reason = RealWebDAVServer.unavailable(binary) { throw BenchmarkError(reason) }
    }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-webdav-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let apache = try await RealWebDAVServer.apache()
    let auth = WebDAVConfiguration.Authentication.basic(user: apache.user, password: apache.password)
    let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: apache.url, authentication: auth))
    print("WebDAV benchmark against Apache mod_dav on loopback (median of \(runs) runs [min–max])")

    // 4. One large file: the connector against curl -T (first, so the peak memory figure is this transfer's).
    let big = work.appendingPathComponent("big.bin")
    FileManager.default.createFile(atPath: big.path, contents: nil)
    let handle = try FileHandle(forWritingTo: big)
    let piece = Data((0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 29) })
    for _ in 0..<sizeMiB { handle.write(piece) }
    try handle.close()
    let connectorBig = try await measure(runs) { run in
        let start = DispatchTime.now().uptimeNanoseconds
        try await fileSystem.upload(fileAt: big, to: "big/connector-\(run).bin")
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    let peak = peakResidentMiB()
    let curlBig = try await measure(runs) { run in
        try timeProcess(["/usr/bin/curl", "-sS", "-f", "-T", big.path, "-u", "\(apache.user):\(apache.password)",
                         apache.url.appendingPathComponent("big/curl-\(run).bin").absoluteString])
    }
    print(String(format: "one %d MiB file:     connector %@ (%.0f MiB/s)   curl -T %@ (%.0f MiB/s)   ratio %.2f of curl (target ≥ 0.8); peak resident %.1f MiB (target < 100)",
                 sizeMiB, format(connectorBig), Double(sizeMiB) / connectorBig.median, format(curlBig), Double(sizeMiB) / curlBig.median,
                 curlBig.median / connectorBig.median, peak))

    // 1. Many small files: the connector (8 at once) against rclone copy at its default and at equal parallelism.
    let small = work.appendingPathComponent("small")
    try FileManager.default.createDirectory(at: small, withIntermediateDirectories: true)
    for i in 0..<fileCount { try Data(repeating: UInt8(i % 251), count: 4096).write(to: small.appendingPathComponent("file-\(i).bin")) }
    let names = (0..<fileCount).map { "file-\($0).bin" }
    let connectorSmall = try await measure(runs) { run in
        let start = DispatchTime.now().uptimeNanoseconds
        try await withThrowingTaskGroup(of: Void.self) { group in
            var iterator = names.makeIterator()
            for _ in 0..<8 { if let name = iterator.next() { group.addTask { try await fileSystem.upload(fileAt: small.appendingPathComponent(name), to: "small/connector-\(run)/\(name)") } } }
            while try await group.next() != nil {
                if let name = iterator.next() { group.addTask { try await fileSystem.upload(fileAt: small.appendingPathComponent(name), to: "small/connector-\(run)/\(name)") } }
            }
        }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    let obscured = try String(decoding: {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: RealWebDAVServer.rcloneBinary)
        process.arguments = ["obscure", apache.password]
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return data
    }(), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    let rcloneEnvironment = ["RCLONE_CONFIG_BENCH_TYPE": "webdav", "RCLONE_CONFIG_BENCH_URL": apache.url.absoluteString,
                             "RCLONE_CONFIG_BENCH_VENDOR": "other", "RCLONE_CONFIG_BENCH_USER": apache.user,
                             "RCLONE_CONFIG_BENCH_PASS": obscured]
    let rcloneDefault = try await measure(runs) { run in
        try timeProcess([RealWebDAVServer.rcloneBinary, "copy", small.path, "bench:small/rclone-default-\(run)", "--config", "/dev/null"], environment: rcloneEnvironment)
    }
    let rcloneEqual = try await measure(runs) { run in
        try timeProcess([RealWebDAVServer.rcloneBinary, "copy", small.path, "bench:small/rclone-8-\(run)", "--transfers", "8", "--config", "/dev/null"],
                        environment: rcloneEnvironment)
    }
    print(String(format: "%d files of 4 KiB:  connector (8 at once) %@   rclone copy (default 4) %@   rclone copy --transfers 8 %@   speed-up at equal parallelism %.2f× (target ≥ 1.5)",
                 fileCount, format(connectorSmall), format(rcloneDefault), format(rcloneEqual), rcloneEqual.median / connectorSmall.median))

    // 2. A store of many versions pushed with 8 transfers at once against one at a time.
    let store = try Store(creatingAt: work.appendingPathComponent("store"))
    var head: Version?
    for i in 0..<versionCount {
        head = try store.makeVersion(basedOnPredecessor: head?.id, inserting: [Value(id: Value.ID("item-\(i)"), data: Data("value \(i)".utf8))])
    }
    func push(_ concurrency: Int, _ run: Int) async throws -> Double {
        let exchange = CloudFileSystemExchange(store: store, fileSystem: fileSystem, basePath: "push-\(concurrency)-\(run)", concurrency: concurrency)
        let start = DispatchTime.now().uptimeNanoseconds
        let report = try await exchange.send()
        guard report.failures.isEmpty, report.sent.count == versionCount else { throw BenchmarkError("the push failed: \(report.failures.first.map { "\($0)" } ?? "")") }
        return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    }
    let parallel = try await measure(runs) { try await push(8, $0) }
    let serial = try await measure(runs) { try await push(1, $0) }
    print(String(format: "push %d versions:   8 at once %@   one at a time %@   speed-up %.2f× (target ≥ 4)",
                 versionCount, format(parallel), format(serial), serial.median / parallel.median))
}
