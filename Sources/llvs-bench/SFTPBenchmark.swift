import Foundation
import LLVSMocks
import LLVSSupport

/// `llvs-bench sftp`: `llvs backup --to` an SFTP remote against `restic backup` to an SFTP repository, the mixed tree
/// of `repository`, both into one OpenSSH sshd on the loopback (Debian's `openssh-server`), signed in with the same
/// key. restic talks SFTP through `ssh -s sftp`; llvs through libcurl's SFTP on 4 connections. Each figure is one
/// process's time and peak memory, and the bytes each leaves on the server (what it sent, for a first backup).
func sftpBenchmark(_ arguments: [String]) async throws {
    let runs = Int(option("runs", in: arguments) ?? "") ?? 1
    let llvs = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("llvs")
    guard FileManager.default.isExecutableFile(atPath: llvs.path) else {
        throw BenchmarkError("build llvs beside llvs-bench: \(llvs.path) is missing")
    }
    if let reason = RealSSHServer.unavailable() { throw BenchmarkError(reason) }
    let resticVersion = try resticVersion()
    let work = URL(fileURLWithPath: option("work", in: arguments) ?? FileManager.default.temporaryDirectory.path)
        .appendingPathComponent("llvs-bench-sftp-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let tree = work.appendingPathComponent("tree")
    try makeMixedTree(at: tree)
    let (treeBytes, treeFiles) = try bytesAndFiles(under: tree)
    let server = try await RealSSHServer()
    print(
        String(
            format:
                "SFTP: a mixed tree of %d files, %.0f MB, into sshd on 127.0.0.1:%d; llvs against restic %@; %d run(s)",
            treeFiles, Double(treeBytes) / 1e6, Int(server.port), resticVersion, runs))
    let ssh = [
        "ssh", "-p", String(server.port), "-i", server.identityFile, "-o",
        "UserKnownHostsFile=\(server.knownHostsFile)",
        "-o", "StrictHostKeyChecking=yes", "-o", "BatchMode=yes", "\(server.user)@127.0.0.1", "-s", "sftp",
    ].joined(separator: " ")
    var ours: [MeasuredRun] = [], theirs: [MeasuredRun] = []
    var oursStored: Int64 = 0, theirsStored: Int64 = 0
    for run in 0..<runs {
        let remote = work.appendingPathComponent("llvs-remote-\(run)")
        let repository = work.appendingPathComponent("restic-repository-\(run)")
        let store = work.appendingPathComponent("store-\(run)").path
        let llvsEnvironment = ["XDG_CONFIG_HOME": work.appendingPathComponent("config-\(run)").path]
        _ = try runMeasured([llvs.path, "init", "--store", store], environment: llvsEnvironment)
        _ = try runMeasured(
            [
                llvs.path, "remote", "add", "dest", server.url(remote.path), "--identity", server.identityFile,
                "--known-hosts", server.knownHostsFile, "--store", store,
            ], environment: llvsEnvironment)
        let restic = [
            "RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache-\(run)").path,
        ]
        let resticRepository = "sftp:\(server.user)@127.0.0.1:\(repository.path)"
        _ = try runMeasured(
            ["/usr/bin/env", "restic", "init", "--repo", resticRepository, "-o", "sftp.command=\(ssh)", "--quiet"],
            environment: restic)
        let (llvsRun, resticRun) = try firstBackups(
            run: run, llvs: ([llvs.path, "backup", tree.path, "--store", store, "--to", "dest"], llvsEnvironment),
            restic: (
                [
                    "/usr/bin/env", "restic", "backup", tree.path, "--repo", resticRepository, "-o",
                    "sftp.command=\(ssh)", "--quiet",
                ], restic
            ))
        ours.append(llvsRun)
        theirs.append(resticRun)
        oursStored = try bytesAndFiles(under: remote).bytes
        theirsStored = try bytesAndFiles(under: repository).bytes
    }
    printFirstBackups(
        to: "SFTP", ours: ours, theirs: theirs, stored: (oursStored, theirsStored), storedWhere: "on the server")
}
