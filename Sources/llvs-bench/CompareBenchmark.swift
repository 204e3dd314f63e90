import Foundation
import LLVSSupport
import LLVS
import LLVSGoogleDrive
import LLVSHTTP
import LLVSMocks
import LLVSBox
import LLVSOneDrive
import LLVSPCloud
import LLVSWebDAV
import Synchronization

/// `llvs-bench compare`: every row of the side-by-side table in one run on this machine's loopback. It starts Apache
/// mod_dav, `rclone serve webdav` and the Google Drive mock itself, and runs `curl`, `rclone copy` and the built
/// `llvs` beside the connectors.
func compareBenchmark(_ arguments: [String]) async throws {
    let runs = Int(option("runs", in: arguments) ?? "") ?? 3
    let versionCount = Int(option("clone-versions", in: arguments) ?? "") ?? 10_000
    let backupFiles = Int(option("backup-files", in: arguments) ?? "") ?? 2000
    let rows = Set(
        (option("rows", in: arguments) ?? "1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17").split(separator: ",").compactMap
        { Int($0) })
    let remotes = Set(
        (option("remotes", in: arguments) ?? "webdav,gdrive,onedrive,pcloud,box").split(separator: ",").map(String.init)
    )
    for binary in [RealWebDAVServer.apacheBinary, RealWebDAVServer.rcloneBinary, "/usr/bin/curl"] {
        if let reason = RealWebDAVServer.unavailable(binary) { throw BenchmarkError(reason) }
    }
    let peer = try RclonePeer.choose(arguments)
    let llvs = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("llvs")
    guard FileManager.default.isExecutableFile(atPath: llvs.path) else {
        throw BenchmarkError("\(llvs.path) is missing; build everything first: swift build -c release")
    }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-compare-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let apache = try await RealWebDAVServer.apache()
    let rclone = try rcloneEnvironment(for: apache, peer: peer)
    let table = ComparisonTable()
    print(
        "Side by side on loopback, \(ProcessInfo.processInfo.activeProcessorCount) cores; each figure the median of \(runs) runs [min–max]"
    )
    print(
        "rclone: \(peer.version) (\(peer.path)); "
            + (peer.unfairness.map { "\($0) (rows 1 and 3 give no ratio)" }
                ?? "tuned runs add --transfers 8 \(peer.unpaced.joined(separator: " "))"))

    if !rows.isDisjoint(with: [1, 2, 4]) {
        try await webdavBenchmark(arguments, apache: apache, peer: peer, rclone: rclone, table: table)
    }
    if rows.contains(1) {
        // Row 1 again on the other real server, `rclone serve webdav`.
        let served = try await RealWebDAVServer.rclone()
        try await smallFilesRow(
            server: served, label: "rclone serve webdav", peer: peer,
            rclone: try rcloneEnvironment(for: served, peer: peer),
            fileCount: Int(option("files", in: arguments) ?? "") ?? 2000, runs: runs, work: work, table: table)
    }
    if rows.contains(3) {
        try backupRow(
            llvs: llvs, apache: apache, peer: peer, rclone: rclone, files: backupFiles, runs: runs, work: work,
            table: table)
    }
    try backupPeerRows(llvs: llvs, arguments: arguments, rows: rows, runs: runs, work: work, table: table)
    if !rows.isDisjoint(with: 11...17) {
        try backupScaleRows(llvs: llvs, apache: apache, arguments: arguments, rows: rows, work: work, table: table)
    }
    guard !rows.isDisjoint(with: [5, 6]) else {
        print("\n" + table.markdown)
        return
    }

    // Rows 5 and 6 of several remotes: each remote in a bench process of its own, as each `llvs clone` is. Run one
    // after another in this process, the last remotes were measured in a process of 700–900 MiB beside the earlier
    // remotes' mocks, their bootstraps 20–40% slower than in a process of their own (Box 1.10 s against 0.79 s).
    if remotes.count > 1 {
        let cloneRows = rows.intersection([5, 6]).sorted().map(String.init).joined(separator: ",")
        for remote in cloneRemoteOrder where remotes.contains(remote) {
            var childArguments = [
                "compare", "--rows", cloneRows, "--remotes", remote, "--clone-versions", String(versionCount), "--runs",
                String(runs),
            ]
            if let rclonePath = option("rclone", in: arguments) { childArguments += ["--rclone", rclonePath] }
            print("  rows \(cloneRows) on \(remote), in a bench process of its own…")
            for line in try runChildBench(childArguments) where line.hasPrefix("| 5 |") || line.hasPrefix("| 6 |") {
                table.add(markdownLine: line)
            }
        }
        print("\n" + table.markdown)
        return
    }

    // Rows 5 and 6: one store of N versions, on Apache or one of the Drive, OneDrive, pCloud and Box mocks.
    print("  making a store of \(versionCount) versions…")
    let source = try StoreCoordinator(store: try Store(creatingAt: work.appendingPathComponent("source")))
    for i in 0..<versionCount {
        // UUIDs, as LLVS apps use: ids sharing a 2-Character prefix share one zip-v1 sub-node, rewritten whole by each version.
        try await source.save(inserting: [
            Value(id: Value.ID(UUID().uuidString), data: Data("value \(i) of the benchmark".utf8))
        ])
    }
    let counter = RequestCounter()
    var webdav = RemoteUnderTest(name: "WebDAV (Apache mod_dav)", requests: { counter.count }) {
        var configuration = HTTPClientConfiguration()
        configuration.trace = { line in if line.hasPrefix("→") { counter.add() } }
        return WebDAVFileSystem(
            configuration: WebDAVConfiguration(
                url: apache.url, authentication: .basic(user: apache.user, password: apache.password)),
            http: HTTPClient(configuration: configuration))
    }
    webdav.commandLine = (
        apache.url.absoluteString.replacingOccurrences(of: "http://", with: "webdav://"),
        [
            "XDG_CONFIG_HOME": work.appendingPathComponent("clone-config").path, "LLVS_WEBDAV_USER": apache.user,
            "LLVS_WEBDAV_PASSWORD": apache.password,
        ]
    )
    webdav.curlGets = { paths in
        let config = work.appendingPathComponent("gets-\(UUID().uuidString).curlrc")
        defer { try? FileManager.default.removeItem(at: config) }
        try paths.map { "url = \"\(apache.url.absoluteString)\($0)\"\noutput = /dev/null\n" }.joined().write(
            to: config, atomically: true, encoding: .utf8)
        return try timeProcess([
            "/usr/bin/curl", "-sS", "-f", "-u", "\(apache.user):\(apache.password)", "-Z", "--parallel-max", "8", "-K",
            config.path,
        ])
    }
    if remotes.contains("webdav") {
        try await cloneRows(webdav, llvs: llvs, source: source, runs: runs, work: work, table: table)
    }

    let drive = try MockGoogleDriveServer()
    defer { drive.stop() }
    let tokenFile = TokenFile(path: work.appendingPathComponent("drive.token.json").path)
    try tokenFile.write(drive.issueToken())
    let googleDrive = RemoteUnderTest(name: "Google Drive mock", requests: { drive.log.count }) {
        let http = HTTPClient()
        let oauth = GoogleDriveConfiguration.oauth(
            clientId: drive.oauth.settings.clientId, clientSecret: drive.oauth.settings.clientSecret,
            endpoint: drive.endpoint)
        return GoogleDriveFileSystem(
            configuration: GoogleDriveConfiguration(endpoint: drive.endpoint), http: http,
            authorizer: OAuthTokenSource(
                file: tokenFile, configuration: oauth, http: http, reauthorizeCommand: "llvs auth bench"))
    }
    if remotes.contains("gdrive") {
        try await cloneRows(googleDrive, llvs: llvs, source: source, runs: runs, work: work, table: table)
    }

    let graph = try MockOneDriveServer()
    defer { graph.stop() }
    let oneDriveToken = TokenFile(path: work.appendingPathComponent("onedrive.token.json").path)
    try oneDriveToken.write(graph.issueToken())
    // Requests to Graph and to its download/upload host alike.
    let oneDrive = RemoteUnderTest(
        name: "OneDrive mock", requests: { graph.log.count }, contentRequests: { graph.contentHost.server.log.count }
    ) {
        let http = HTTPClient()
        let oauth = OneDriveConfiguration.oauth(clientId: graph.oauth.settings.clientId, endpoint: graph.endpoint)
        return OneDriveFileSystem(
            configuration: OneDriveConfiguration(endpoint: graph.endpoint), http: http,
            authorizer: OAuthTokenSource(
                file: oneDriveToken, configuration: oauth, http: http, reauthorizeCommand: "llvs auth bench"))
    }
    if remotes.contains("onedrive") {
        try await cloneRows(oneDrive, llvs: llvs, source: source, runs: runs, work: work, table: table)
    }

    let pcloudMock = try MockPCloudServer()
    defer { pcloudMock.stop() }
    let pcloudToken = TokenFile(path: work.appendingPathComponent("pcloud.token.json").path)
    let pcloudIssued = pcloudMock.issueToken()
    try pcloudToken.write(pcloudIssued)
    // Requests to the API hosts and to the download host alike.
    let pCloud = RemoteUnderTest(
        name: "pCloud mock", requests: { pcloudMock.log.count },
        contentRequests: { pcloudMock.contentHost.server.log.count }
    ) {
        let http = HTTPClient()
        let oauth = PCloudConfiguration.oauth(
            clientId: pcloudMock.settings.clientId, clientSecret: pcloudMock.settings.clientSecret,
            endpoint: pcloudMock.endpoint)
        return PCloudFileSystem(
            configuration: try PCloudConfiguration(token: pcloudIssued, endpoint: pcloudMock.endpoint), http: http,
            authorizer: OAuthTokenSource(
                file: pcloudToken, configuration: oauth, http: http, reauthorizeCommand: "llvs auth bench"))
    }
    if remotes.contains("pcloud") {
        try await cloneRows(pCloud, llvs: llvs, source: source, runs: runs, work: work, table: table)
    }

    let boxMock = try MockBoxServer()
    defer { boxMock.stop() }
    let boxToken = TokenFile(path: work.appendingPathComponent("box.token.json").path)
    try boxToken.write(boxMock.issueToken())
    // Requests to the API and upload host and to the download host alike.
    let box = RemoteUnderTest(
        name: "Box mock", requests: { boxMock.log.count }, contentRequests: { boxMock.contentHost.server.log.count }
    ) {
        let http = HTTPClient()
        let oauth = BoxConfiguration.oauth(
            clientId: boxMock.oauth.settings.clientId, clientSecret: boxMock.oauth.settings.clientSecret ?? "",
            endpoint: boxMock.endpoint)
        return BoxFileSystem(
            configuration: BoxConfiguration(endpoint: boxMock.endpoint), http: http,
            authorizer: OAuthTokenSource(
                file: boxToken, configuration: oauth, http: http, reauthorizeCommand: "llvs auth bench"))
    }
    if remotes.contains("box") {
        try await cloneRows(box, llvs: llvs, source: source, runs: runs, work: work, table: table)
    }

    print("\n" + table.markdown)
}

/// The order rows 5 and 6 go through the remotes.
let cloneRemoteOrder = ["webdav", "gdrive", "onedrive", "pcloud", "box"]

/// Runs `llvs-bench ARGUMENTS` (this binary) to its end and returns what it printed, line by line, relaying each
/// line as it comes; fails when it fails.
func runChildBench(_ arguments: [String]) throws -> [String] {
    let process = ChildProcess()
    process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0])
    process.arguments = arguments
    let output = Pipe()
    process.standardOutput = output
    try process.run()
    var text = Data()
    let handle = output.fileHandleForReading
    while true {
        let piece = handle.availableData
        if piece.isEmpty { break }
        text.append(piece)
        FileHandle.standardOutput.write(piece)
    }
    process.waitUntilExit()
    guard process.terminationReason == .exit, process.terminationStatus == 0 else {
        throw BenchmarkError(
            "llvs-bench \(arguments.joined(separator: " ")) failed (status \(process.terminationStatus))")
    }
    return String(decoding: text, as: UTF8.self).split(separator: "\n").map(String.init)
}

/// Counts requests through an HTTP client's trace.
final class RequestCounter: Sendable {
    private let value = Atomic<Int>(0)
    func add() { value.add(1, ordering: .relaxed) }
    var count: Int { value.load(ordering: .relaxed) }
}

/// A remote for rows 5 and 6: a way to make a fresh connector (as each `llvs` command does) and to count requests.
struct RemoteUnderTest {
    var name: String
    /// Requests to the service's API (and upload) hosts.
    var requests: () -> Int
    /// Requests to the hosts a download is redirected to (pre-authenticated content hosts), where the service has them.
    var contentRequests: () -> Int
    var makeFileSystem: () throws -> any CloudFileSystem
    /// How `llvs` reaches the same remote from the command line (its URL and environment), when it can: the clone is
    /// then also run as the command, a process of its own, whose peak resident memory is the bootstrap's alone.
    var commandLine: (url: String, environment: [String: String])?
    /// Seconds curl takes to GET these paths (relative to the remote's root) 8 at once, where the remote is a plain
    /// HTTP server: the floor the server sets for a full pull's requests.
    var curlGets: ((_ paths: [String]) throws -> Double)?

    init(
        name: String, requests: @escaping () -> Int, contentRequests: @escaping () -> Int = { 0 },
        makeFileSystem: @escaping () throws -> any CloudFileSystem
    ) {
        self.name = name
        self.requests = requests
        self.contentRequests = contentRequests
        self.makeFileSystem = makeFileSystem
    }
}

/// Row 3: `llvs backup --to` (one version, then a sync) against `rclone copy` of the same tree, as a user runs them:
/// rclone at its defaults and tuned (8 transfers, pacer off); the ratio is against the tuned one.
func backupRow(
    llvs: URL, apache: RealWebDAVServer, peer: RclonePeer, rclone: [String: String], files: Int, runs: Int, work: URL,
    table: ComparisonTable
) throws {
    let tree = work.appendingPathComponent("backup-tree")
    for i in 0..<files {
        let folder = tree.appendingPathComponent("folder-\(i % 20)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ i) }).write(
            to: folder.appendingPathComponent("file-\(i).txt"))
    }
    let environment = [
        "XDG_CONFIG_HOME": work.appendingPathComponent("config").path, "LLVS_WEBDAV_USER": apache.user,
        "LLVS_WEBDAV_PASSWORD": apache.password,
    ]
    let remoteURL = apache.url.absoluteString.replacingOccurrences(of: "http://", with: "webdav://")
    var ours: [Double] = [], defaults: [Double] = [], tuned: [Double] = []
    for run in 0..<runs {
        let store = work.appendingPathComponent("backup-store-\(run)").path
        _ = try timeProcess([llvs.path, "init", "--store", store], environment: environment)
        _ = try timeProcess(
            [
                llvs.path, "remote", "add", "backup-\(run)", remoteURL, "--base-path", "backup-llvs-\(run)", "--store",
                store,
            ], environment: environment)
        ours.append(
            try timeProcess(
                [llvs.path, "backup", tree.path, "--store", store, "--to", "backup-\(run)"], environment: environment))
        defaults.append(
            try timeProcess(
                [peer.path, "copy", tree.path, "bench:backup-rclone-\(run)", "--config", "/dev/null"],
                environment: rclone))
        guard peer.unfairness == nil else { continue }
        tuned.append(
            try timeProcess(
                [
                    peer.path, "copy", tree.path, "bench:backup-rclone-tuned-\(run)", "--config", "/dev/null",
                    "--transfers", "8",
                ] + peer.unpaced,
                environment: rclone))
    }
    let what = "back up a tree of \(files) files of 4 KiB to Apache mod_dav"
    let ourFigure =
        "llvs backup --to (one version, then sync): \(formatSeconds((median(ours), ours.min()!, ours.max()!)))"
    let theirs =
        "rclone \(peer.version) copy: default \(formatSeconds((median(defaults), defaults.min()!, defaults.max()!)))"
    if let unfairness = peer.unfairness {
        table.add(
            .init(
                number: 3, what: what, ours: ourFigure, theirs: theirs, ratio: unfairness,
                target: "(the ratio a user sees)", met: nil))
        return
    }
    let ratio = median(tuned) / median(ours)
    table.add(
        .init(
            number: 3, what: what, ours: ourFigure,
            theirs: theirs
                + "; --transfers 8 \(peer.unpaced.joined(separator: " ")) \(formatSeconds((median(tuned), tuned.min()!, tuned.max()!)))",
            ratio: String(format: "%.1f× faster than the tuned rclone", ratio), target: "(the ratio a user sees)",
            met: nil))
}

/// Rows 5 and 6 on one remote: a new store cloned by full pull against snapshot bootstrap; then one new version
/// synced from another device, with the requests and time it costs the sender and the receiver.
func cloneRows(
    _ remote: RemoteUnderTest, llvs: URL, source: StoreCoordinator, runs: Int, work: URL, table: ComparisonTable
) async throws {
    let count = source.store.history.count
    let base = "clone-bench"
    print("  pushing \(count) versions and a snapshot to the \(remote.name)…")
    let pushing = CloudFileSystemExchange(store: source.store, fileSystem: try remote.makeFileSystem(), basePath: base)
    let pushed = try await pushing.send()
    guard pushed.failures.isEmpty else {
        throw BenchmarkError("the push to \(remote.name) failed: \(pushed.failures[0])")
    }
    let zipSnapshot = try await pushing.sendSnapshot(format: ZipV1Snapshot.format)

    let folder = work.appendingPathComponent(UUID().uuidString)
    func newStore(_ name: String) throws -> StoreCoordinator {
        try StoreCoordinator(store: try Store(creatingAt: folder.appendingPathComponent(name)))
    }
    // The stores stay until the whole comparison ends (its work folder goes then): on ext4 without a journal,
    // creating files soon after thousands were deleted is several times slower (the allocator skips recently freed
    // inodes), which made every full pull after the first 30–60% slower, and the ratio larger than a user would see.
    var pulls: [Double] = [], boots: [Double] = []
    var booted: [StoreCoordinator] = []
    for run in 0..<runs {
        let pulled = try newStore("pull-\(run)")
        settleWriteback()
        let start = DispatchTime.now().uptimeNanoseconds
        let report = try await pulled.exchange(
            with: CloudFileSystemExchange(store: pulled.store, fileSystem: try remote.makeFileSystem(), basePath: base))
        pulls.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        guard report.retrieve.retrieved.count == count else {
            throw BenchmarkError("the full pull from \(remote.name) missed versions")
        }

        let boot = try newStore("boot-\(run)")
        settleWriteback()
        let bootStart = DispatchTime.now().uptimeNanoseconds
        let outcome = try await boot.bootstrapFromSnapshot(
            using: CloudFileSystemExchange(store: boot.store, fileSystem: try remote.makeFileSystem(), basePath: base))
        boots.append(Double(DispatchTime.now().uptimeNanoseconds - bootStart) / 1e9)
        guard case .restored = outcome, boot.store.history.count == count else {
            throw BenchmarkError("the bootstrap from \(remote.name) did not restore everything")
        }
        booted.append(boot)
    }
    // The server's floor for the full pull: the same GETs (every version file and changes file) by curl, 8 at once.
    var curlFigure = ""
    if let curlGets = remote.curlGets {
        let paths = source.store.history.topologicallySorted().flatMap {
            ["\(base)/versions/\($0.id.rawValue)", "\(base)/changes/\($0.id.rawValue)"]
        }
        let gets = try (0..<runs).map { _ in try curlGets(paths) }
        curlFigure =
            "; curl of the same \(paths.count) GETs, 8 at once: \(formatSeconds((median(gets), gets.min()!, gets.max()!)))"
    }
    // The same clone by the command a user types, where the remote has a URL for it: its own time and peak memory.
    var commandLineFigures = ""
    if let commandLine = remote.commandLine {
        _ = try runMeasured(
            [llvs.path, "remote", "add", "clone-bench", commandLine.url, "--base-path", base, "--all-stores"],
            environment: commandLine.environment)
        var clones: [MeasuredRun] = []
        for run in 0..<runs {
            let target = folder.appendingPathComponent("command-\(run)")
            settleWriteback()
            clones.append(
                try runMeasured([llvs.path, "clone", "clone-bench", target.path], environment: commandLine.environment))
            // Restored from the snapshot (one pack), not pulled version by version.
            let packs =
                (try? FileManager.default.contentsOfDirectory(atPath: target.appendingPathComponent("packs").path))
                ?? []
            guard try Store(openingAt: target).history.count == count, packs.count == 1 else {
                throw BenchmarkError("llvs clone from \(remote.name) did not restore the snapshot")
            }
        }
        let seconds = clones.map(\.seconds)
        commandLineFigures =
            "; `llvs clone` (a process of its own, start-up included): \(formatSeconds((median(seconds), seconds.min()!, seconds.max()!))), "
            + String(format: "peak resident %.0f MiB", clones.map(\.peakMiB).max()!)
    }
    let speedUp = median(pulls) / median(boots)
    table.add(
        .init(
            number: 5, what: "new store cloned from \(count) versions, \(remote.name)",
            ours:
                "zip-v1 snapshot (\(zipSnapshot.totalSize) bytes) bootstrap: \(formatSeconds((median(boots), boots.min()!, boots.max()!)))\(commandLineFigures); peak resident of the whole bench process so far (in-process mocks, source store and full pulls included) \(String(format: "%.0f", peakResidentMiB())) MiB",
            theirs: "full pull: \(formatSeconds((median(pulls), pulls.min()!, pulls.max()!)))\(curlFigure)",
            ratio: String(format: "%.1f× faster", speedUp), target: "bootstrap ≤ 0.5 s, full pull ≤ 3 s",
            met: median(boots) <= 0.5 && median(pulls) <= 3))

    // The same clone from this package's own format, to show what keeping it (by choice) is worth.
    let bundlesSnapshot = try await pushing.sendSnapshot(format: SnapshotArchive.format)
    var bundleBoots: [Double] = []
    for run in 0..<runs {
        let boot = try newStore("bundles-\(run)")
        settleWriteback()
        let start = DispatchTime.now().uptimeNanoseconds
        let outcome = try await boot.bootstrapFromSnapshot(
            using: CloudFileSystemExchange(store: boot.store, fileSystem: try remote.makeFileSystem(), basePath: base))
        bundleBoots.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
        guard case .restored = outcome, boot.store.history.count == count else {
            throw BenchmarkError("the llvs-bundles-v1 bootstrap from \(remote.name) did not restore everything")
        }
    }
    let zipOverBundles = median(boots) / median(bundleBoots)
    table.add(
        .init(
            number: 5,
            what:
                "the same clone from an llvs-bundles-v1 snapshot (\(bundlesSnapshot.totalSize) bytes), \(remote.name)",
            ours: "zip-v1: \(formatSeconds((median(boots), boots.min()!, boots.max()!)))",
            theirs: "llvs-bundles-v1: \(formatSeconds((median(bundleBoots), bundleBoots.min()!, bundleBoots.max()!)))",
            ratio: String(format: "zip-v1 takes %.2f× the time", zipOverBundles), target: "(is bundles worth keeping?)",
            met: nil))

    // One device makes a version and syncs; another syncs and receives it. Each with a fresh connector, as each
    // `llvs sync` is a new process, and each store keeping its change feed position as `llvs` does: both have
    // synced once before (a full listing that saves the first position), as devices that sync regularly have.
    guard booted.count >= 2 || runs == 1 else { return }
    let sender = booted[0], receiver = booted.count > 1 ? booted[1] : try newStore("receiver")
    if booted.count < 2 {
        _ = try await receiver.bootstrapFromSnapshot(
            using: CloudFileSystemExchange(
                store: receiver.store, fileSystem: try remote.makeFileSystem(), basePath: base))
    }
    func sync(
        _ coordinator: StoreCoordinator
    ) async throws -> (requests: Int, content: Int, seconds: Double, listing: RemoteListing.Source) {
        let fileSystem = try remote.makeFileSystem()
        let before = remote.requests(), contentBefore = remote.contentRequests()
        let start = DispatchTime.now().uptimeNanoseconds
        let exchange = CloudFileSystemExchange(
            store: coordinator.store, fileSystem: fileSystem, basePath: base,
            cursorFile: RemoteCursorFile(store: coordinator.store, identity: remote.name + "\n" + base))
        let report = try await coordinator.exchange(with: exchange)
        guard report.retrieve.failures.isEmpty, report.send.failures.isEmpty else {
            throw BenchmarkError("an incremental sync with \(remote.name) failed")
        }
        return (
            remote.requests() - before, remote.contentRequests() - contentBefore,
            Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9,
            report.listing
        )
    }
    func describe(_ result: (requests: Int, content: Int, seconds: Double, listing: RemoteListing.Source)) -> String {
        let requests = "\(result.requests) request\(result.requests == 1 ? "" : "s")"
        return requests + (result.content > 0 ? " + \(result.content) to the download host" : "")
            + String(format: ", %.3f s", result.seconds)
    }
    _ = try await sync(sender)
    _ = try await sync(receiver)
    try await sender.save(inserting: [Value(id: "one-more", data: Data("new".utf8))])
    let sent = try await sync(sender)
    let received = try await sync(receiver)
    let idle = try await sync(receiver)
    guard receiver.store.history.count == count + 1 else {
        throw BenchmarkError("the receiver did not get the new version")
    }
    let feed = received.listing == .changeFeed ? "change feed" : "listing"
    let met = received.requests <= 3 && idle.requests <= 1
    table.add(
        .init(
            number: 6, what: "incremental sync of 1 new version, \(count) on the remote, \(remote.name)",
            ours: "by \(feed): sender \(describe(sent)); receiver \(describe(received)); nothing new \(describe(idle))",
            theirs: "—", ratio: "—", target: "receiver ≤ 3 requests (feed + 2 files), nothing new 1", met: met))
}
