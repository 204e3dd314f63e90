import Foundation
import LLVSHTTP
import LLVSMocks
import LLVSSupport

/// `llvs-bench s3`: `llvs backup --to` an S3 remote against `restic backup` to an S3 repository, the mixed tree of
/// `repository`, both into buckets of one moto server (PyPI's `moto[server]`; `--moto PATH`, default the clients
/// venv's). Each figure is one process's time and peak memory, and the bytes each leaves in its bucket (what it sent,
/// for a first backup). moto is a Python server: both tools wait on it alike, so the ratio says more than the times.
func s3Benchmark(_ arguments: [String]) async throws {
    let runs = Int(option("runs", in: arguments) ?? "") ?? 1
    let llvs = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("llvs")
    guard FileManager.default.isExecutableFile(atPath: llvs.path) else {
        throw BenchmarkError("build llvs beside llvs-bench: \(llvs.path) is missing")
    }
    let moto = option("moto", in: arguments) ?? ".build/clients-venv/bin/moto_server"
    guard FileManager.default.isExecutableFile(atPath: moto) else {
        throw BenchmarkError(
            "moto_server is missing at \(moto); run scripts/install-client-libraries, or give --moto PATH")
    }
    let resticVersion = try resticVersion()
    let work = URL(fileURLWithPath: option("work", in: arguments) ?? FileManager.default.temporaryDirectory.path)
        .appendingPathComponent("llvs-bench-s3-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let tree = work.appendingPathComponent("tree")
    try makeMixedTree(at: tree)
    let (treeBytes, treeFiles) = try bytesAndFiles(under: tree)
    let port = try RealWebDAVServer.freePort()
    guard
        let server = try await SpawnedProcess.announcing(
            [moto, "-H", "127.0.0.1", "-p", String(port)], "Running on http://127.0.0.1:\(port)")
    else { throw BenchmarkError("moto did not start on port \(port)") }
    defer { server.stop() }
    let endpoint = URL(string: "http://127.0.0.1:\(port)")!
    let signer = SigV4(accessKeyID: "LLVSBENCH", secretAccessKey: "llvs-bench-secret", region: "us-east-1")
    let http = HTTPClient()
    print(
        String(
            format: "S3: a mixed tree of %d files, %.0f MB, into moto at %@; llvs against restic %@; %d run(s)",
            treeFiles, Double(treeBytes) / 1e6, endpoint.absoluteString, resticVersion, runs))
    let keys = [
        "AWS_ACCESS_KEY_ID": signer.accessKeyID, "AWS_SECRET_ACCESS_KEY": signer.secretAccessKey,
        "AWS_REGION": "us-east-1",
    ]
    var ours: [MeasuredRun] = [], theirs: [MeasuredRun] = []
    var oursStored: Int64 = 0, theirsStored: Int64 = 0
    for run in 0..<runs {
        let (bucket, repository) = ("llvs-\(run)", "restic-\(run)")
        for name in [bucket, repository] {
            var request = HTTPRequest(method: "PUT", url: endpoint.appendingPathComponent(name))
            signer.sign(&request)
            guard try await http.send(request).isSuccess else { throw BenchmarkError("moto refused bucket \(name)") }
        }
        let store = work.appendingPathComponent("store-\(run)").path
        let llvsEnvironment = keys.merging(["XDG_CONFIG_HOME": work.appendingPathComponent("config-\(run)").path]) {
            _, new in new
        }
        _ = try runMeasured([llvs.path, "init", "--store", store], environment: llvsEnvironment)
        _ = try runMeasured(
            [
                llvs.path, "remote", "add", "dest", "s3://\(bucket)/backup", "--endpoint", endpoint.absoluteString,
                "--store", store,
            ], environment: llvsEnvironment)
        let restic = keys.merging([
            "RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache-\(run)").path,
        ]) { _, new in new }
        let resticRepository = "s3:\(endpoint.absoluteString)/\(repository)"
        _ = try runMeasured(
            ["/usr/bin/env", "restic", "init", "--repo", resticRepository, "--quiet"], environment: restic)
        let (llvsRun, resticRun) = try firstBackups(
            run: run, llvs: ([llvs.path, "backup", tree.path, "--store", store, "--to", "dest"], llvsEnvironment),
            restic: (["/usr/bin/env", "restic", "backup", tree.path, "--repo", resticRepository, "--quiet"], restic))
        ours.append(llvsRun)
        theirs.append(resticRun)
        oursStored = try await bucketBytes(endpoint, bucket, signer: signer, http: http)
        theirsStored = try await bucketBytes(endpoint, repository, signer: signer, http: http)
    }
    printFirstBackups(
        to: "S3", ours: ours, theirs: theirs, stored: (oursStored, theirsStored), storedWhere: "in the bucket")
}

/// One first backup by each tool (arguments and environment), in an order that alternates from run to run, so
/// neither always meets the page cache the other warmed.
func firstBackups(
    run: Int, llvs: ([String], [String: String]), restic: ([String], [String: String])
) throws -> (llvs: MeasuredRun, restic: MeasuredRun) {
    if run % 2 == 0 {
        let ours = try runMeasured(llvs.0, environment: llvs.1)
        return (ours, try runMeasured(restic.0, environment: restic.1))
    }
    let theirs = try runMeasured(restic.0, environment: restic.1)
    return (try runMeasured(llvs.0, environment: llvs.1), theirs)
}

/// The first-backup figures of llvs and restic to one remote, and the bytes each left there.
func printFirstBackups(
    to place: String, ours: [MeasuredRun], theirs: [MeasuredRun], stored: (ours: Int64, theirs: Int64),
    storedWhere: String
) {
    func describe(_ runs: [MeasuredRun]) -> String {
        String(
            format: "%.2f s (median of %d), peak %.0f MiB", median(runs.map(\.seconds)), runs.count,
            runs.map(\.peakMiB).max() ?? 0)
    }
    let label = "  first backup --to \(place)"
    let width = max(label.count + 1, 25)
    print(label.padding(toLength: width, withPad: " ", startingAt: 0) + "llvs: \(describe(ours))")
    print(String(repeating: " ", count: width) + "restic: \(describe(theirs))")
    print(
        "  ratio".padding(toLength: width, withPad: " ", startingAt: 0)
            + String(
                format: "%.2f× (restic's time over llvs's)",
                median(theirs.map(\.seconds)) / max(0.001, median(ours.map(\.seconds)))))
    print(
        "  bytes \(storedWhere)".padding(toLength: width, withPad: " ", startingAt: 0)
            + String(
                format: "llvs %.1f MB, restic %.1f MB (%.2f×)", Double(stored.ours) / 1e6, Double(stored.theirs) / 1e6,
                Double(stored.ours) / Double(max(1, stored.theirs))))
}

/// The bytes of every object in a bucket, by ListObjectsV2 page after page.
private func bucketBytes(_ endpoint: URL, _ bucket: String, signer: SigV4, http: HTTPClient) async throws -> Int64 {
    var total: Int64 = 0
    var token: String?
    for _ in 0..<100_000 {
        var query = [("list-type", "2"), ("max-keys", "1000")]
        if let token { query.append(("continuation-token", token)) }
        var request = HTTPRequest(url: try URLEscaping.url(endpoint, "/" + bucket, query))
        signer.sign(&request)
        let text = try await http.send(request).text
        for match in text.matches(of: /<Size>(\d+)<\/Size>/) { total += Int64(match.1) ?? 0 }
        guard text.contains("<IsTruncated>true</IsTruncated>"),
            let next = text.firstMatch(of: /<NextContinuationToken>([^<]+)<\/NextContinuationToken>/)
        else { return total }
        token = String(next.1)
    }
    return total
}
