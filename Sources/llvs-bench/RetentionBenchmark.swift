import Foundation
import LLVSSupport

/// `llvs-bench retention`: what backups cost to keep under a policy, against restic, in one run. A mixed tree is
/// backed up `rounds` times (llvs with `--to` a compact file:// remote), about a fifth of its files edited before each
/// round (a 4 KiB stretch of each rewritten in place); then both forget all but the last `keep` backups and prune:
/// restic `forget --prune`; llvs `forget --prune` (which collects, since the store shares a remote), the next
/// backup (nothing changed), and `prune --remote` (which releases, and frees the remote too). It prints the store's,
/// the remote's and the repository's bytes on disk, the times, and whether every kept backup restores identical.
func retentionBenchmark(_ arguments: [String]) throws {
    let rounds = Int(option("rounds", in: arguments) ?? "") ?? 10
    let keep = Int(option("keep", in: arguments) ?? "") ?? 3
    let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(
        "llvs")
    guard FileManager.default.isExecutableFile(atPath: binary.path) else {
        throw BenchmarkError("build llvs beside llvs-bench: \(binary.path) is missing")
    }
    let resticVersion = try resticVersion()
    let work = URL(fileURLWithPath: option("work", in: arguments) ?? FileManager.default.temporaryDirectory.path)
        .appendingPathComponent("llvs-bench-retention-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    // A configuration of its own: remotes added for every store in the user's would be asked by the prune too.
    let llvs = ["/usr/bin/env", "XDG_CONFIG_HOME=" + work.appendingPathComponent("config").path, binary.path]
    let tree = work.appendingPathComponent("tree")
    try makeMixedTree(at: tree)
    let files = try regularFiles(under: tree.path)
    let (treeBytes, _) = try bytesAndFiles(under: tree)
    print(
        String(
            format: "Retention: a mixed tree of %d files, %.0f MB, %d rounds (about 20%% of files edited each), "
                + "keep the last %d; llvs against restic %@", files.count, Double(treeBytes) / 1e6, rounds, keep,
            resticVersion))
    let store = work.appendingPathComponent("store").path
    let repository = work.appendingPathComponent("restic").path
    let restic = [
        "RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache").path,
    ]
    let remote = work.appendingPathComponent("remote").path
    _ = try runMeasured(llvs + ["init", "--store", store])
    _ = try runMeasured(llvs + ["remote", "add", "r", "file://" + remote, "--store", store])
    _ = try runMeasured(["/usr/bin/env", "restic", "init", "--repo", repository, "--quiet"], environment: restic)
    var random = SeededGenerator(seed: 0x5245_5445_4E54)
    var states: [[String: String]] = []
    for round in 0..<rounds {
        if round > 0 {
            for file in files where random.next() % 5 == 0 { try edit(file, with: &random) }
        }
        _ = try runMeasured(llvs + ["backup", tree.path, "--name", "tree", "--store", store, "--to", "r"])
        _ = try runMeasured(
            ["/usr/bin/env", "restic", "backup", tree.path, "--repo", repository, "--quiet"], environment: restic)
        if round >= rounds - keep { states.append(try digests(of: tree.path)) }
    }
    let storeBefore = diskBytes(store), remoteBefore = diskBytes(remote), repositoryBefore = diskBytes(repository)
    let plan = try runWithOutput(
        llvs + [
            "forget", "--keep-last", "\(keep)", "--dry-run", "--json", "--store", store,
        ])
    let kept = try keptVersions(plan)
    let collect = try runMeasured(llvs + ["forget", "--keep-last", "\(keep)", "--prune", "--store", store])
    _ = try runMeasured(llvs + ["backup", tree.path, "--name", "tree", "--store", store, "--to", "r"])
    let release = try runMeasured(llvs + ["prune", "--remote", "r", "--store", store])
    let theirs = try runMeasured(
        ["/usr/bin/env", "restic", "forget", "--keep-last", "\(keep)", "--prune", "--repo", repository, "--quiet"],
        environment: restic)
    let storeAfter = diskBytes(store), remoteAfter = diskBytes(remote), repositoryAfter = diskBytes(repository)
    let check = try runMeasured(llvs + ["check", "--read-data", "--store", store])
    var identical = 0
    for (index, version) in kept.reversed().enumerated() where index < states.count {
        let out = work.appendingPathComponent("restored-\(index)").path
        _ = try runMeasured(llvs + ["restore", out, "--at", version, "--store", store])
        if try digests(of: out) == states[index] { identical += 1 }
        try FileManager.default.removeItem(atPath: out)
    }
    func mb(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
    print(
        "  before: llvs store \(mb(storeBefore)), compact file:// remote \(mb(remoteBefore)), restic repository "
            + mb(repositoryBefore))
    print(
        "  after forget --keep-last \(keep) and prune: llvs store \(mb(storeAfter)) "
            + String(format: "(%.2f×)", Double(storeAfter) / Double(repositoryAfter))
            + ", remote \(mb(remoteAfter)) "
            + String(format: "(%.2f×)", Double(remoteAfter) / Double(repositoryAfter))
            + ", restic repository \(mb(repositoryAfter)) (target ≤ 1.15×)")
    print(
        String(
            format: "  forget and prune: llvs %.2f s (collect %.2f s, %.0f MiB peak; release and remote %.2f s, "
                + "%.0f MiB peak), restic %.2f s (%.0f MiB peak); llvs check --read-data %.2f s",
            collect.seconds + release.seconds, collect.seconds, collect.peakMiB, release.seconds, release.peakMiB,
            theirs.seconds, theirs.peakMiB, check.seconds))
    print("  kept backups restored identical: \(identical) of \(min(kept.count, states.count))")
}

/// Regular files under `root`, sorted (so the edits of a seed are the same on every machine with the same tree).
private func regularFiles(under root: String) throws -> [String] {
    var found: [String] = []
    guard let walk = FileManager.default.enumerator(atPath: root) else {
        throw BenchmarkError("cannot list \(root)")
    }
    while let relative = walk.nextObject() as? String {
        var info = stat()
        if lstat(root + "/" + relative, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size > 0 {
            found.append(root + "/" + relative)
        }
    }
    return found.sorted()
}

/// Rewrites a 4 KiB stretch of the file (all of a smaller one) at a random place with random bytes.
private func edit(_ path: String, with random: inout SeededGenerator) throws {
    let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    let size = try handle.seekToEnd()
    let length = min(UInt64(4096), size)
    let offset = size > length ? random.next() % (size - length) : 0
    try handle.seek(toOffset: offset)
    try handle.write(contentsOf: SeededGenerator.bytes(Int(length), seed: random.next()))
}

/// Each file's SHA-256 by its path under `root`.
private func digests(of root: String) throws -> [String: String] {
    var result: [String: String] = [:]
    for file in try regularFiles(under: root) {
        result[String(file.dropFirst(root.count))] = try ChecksumStream.text(
            ofFileAt: URL(fileURLWithPath: file), .sha256)
    }
    return result
}

/// The versions `llvs forget --dry-run --json` keeps, newest first.
private func keptVersions(_ json: Data) throws -> [String] {
    guard let object = try JSONSerialization.jsonObject(with: json) as? [String: Any],
        let sources = object["sources"] as? [[String: Any]], let keep = sources.first?["keep"] as? [[String: Any]]
    else { throw BenchmarkError("llvs forget --json did not say what it keeps") }
    return keep.compactMap { $0["version"] as? String }
}

/// Runs a program and returns its standard output; fails when it fails.
private func runWithOutput(_ arguments: [String]) throws -> Data {
    guard let text = output(of: arguments) else {
        throw BenchmarkError("\(arguments.joined(separator: " ")) failed")
    }
    return Data(text.utf8)
}
