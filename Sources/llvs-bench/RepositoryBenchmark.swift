import Foundation
import LLVSSupport

/// `llvs-bench repository`: what a backup costs to keep, against restic at its default compression, in one run on a
/// mixed tree copied from this machine (documentation, headers, manual pages, Python sources, shared libraries; the
/// manual pages and many documents already compressed): bytes of the store and of a compact file:// remote against
/// the restic repository, and the times of a first backup, an unchanged one and a restore (against `cp -a`).
func repositoryBenchmark(_ arguments: [String]) throws {
    let runs = Int(option("runs", in: arguments) ?? "") ?? 1
    let llvs = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("llvs")
    guard FileManager.default.isExecutableFile(atPath: llvs.path) else {
        throw BenchmarkError("build llvs beside llvs-bench: \(llvs.path) is missing")
    }
    let resticVersion = try resticVersion()
    let work = URL(fileURLWithPath: option("work", in: arguments) ?? FileManager.default.temporaryDirectory.path)
        .appendingPathComponent("llvs-bench-repository-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let tree = work.appendingPathComponent("tree")
    try makeMixedTree(at: tree)
    let (treeBytes, treeFiles) = try bytesAndFiles(under: tree)
    print(
        String(
            format:
                "Repository: a mixed tree of %d files, %.0f MB, llvs against restic %@ (default compression); %d run(s)",
            treeFiles, Double(treeBytes) / 1e6, resticVersion, runs))
    let restic = [
        "RESTIC_PASSWORD": "llvs-bench", "XDG_CACHE_HOME": work.appendingPathComponent("restic-cache").path,
    ]
    var rows: [String: (ours: [Double], theirs: [Double])] = [:]
    var sizes: (store: Int64, remote: Int64, repository: Int64) = (0, 0, 0)
    for run in 0..<runs {
        let store = work.appendingPathComponent("store-\(run)").path
        let remote = work.appendingPathComponent("remote-\(run)").path
        let repository = work.appendingPathComponent("restic-\(run)").path
        _ = try runMeasured([llvs.path, "init", "--store", store])
        _ = try runMeasured([llvs.path, "remote", "add", "r", "file://" + remote, "--store", store])
        _ = try runMeasured(["/usr/bin/env", "restic", "init", "--repo", repository, "--quiet"], environment: restic)
        func both(_ row: String, _ ours: [String], _ theirs: [String]) throws {
            let a = { rows[row, default: ([], [])].ours.append(try runMeasured([llvs.path] + ours).seconds) }
            let b = {
                rows[row, default: ([], [])].theirs.append(
                    try runMeasured(["/usr/bin/env", "restic"] + theirs, environment: restic).seconds)
            }
            if run % 2 == 0 { try a(); try b() } else { try b(); try a() }
        }
        let backup = ["backup", tree.path, "--store", store]
        let resticBackup = ["backup", tree.path, "--repo", repository, "--quiet"]
        try both("first backup", backup, resticBackup)
        try both("unchanged backup", backup, resticBackup)
        rows["push to a file:// remote (compact)", default: ([], [])].ours.append(
            try runMeasured([llvs.path, "push", "r", "--store", store]).seconds)
        let restored = work.appendingPathComponent("restored-\(run)").path
        let resticRestored = work.appendingPathComponent("restic-restored-\(run)").path
        try both(
            "restore", ["restore", restored, "--store", store],
            ["restore", "latest", "--repo", repository, "--target", resticRestored, "--quiet"])
        let copied = work.appendingPathComponent("copied-\(run)").path
        rows["restore (against cp -a of the tree)", default: ([], [])].theirs.append(
            try runMeasured(["/bin/cp", "-a", tree.path, copied]).seconds)
        rows["restore (against cp -a of the tree)", default: ([], [])].ours = rows["restore"]!.ours
        sizes = (
            try bytesAndFiles(under: URL(fileURLWithPath: store)).bytes,
            try bytesAndFiles(under: URL(fileURLWithPath: remote)).bytes,
            try bytesAndFiles(under: URL(fileURLWithPath: repository)).bytes
        )
        for folder in [restored, resticRestored, copied] { try? FileManager.default.removeItem(atPath: folder) }
    }
    func mb(_ bytes: Int64) -> String { String(format: "%.1f MB", Double(bytes) / 1e6) }
    print(
        "  bytes: llvs store \(mb(sizes.store)), compact remote \(mb(sizes.remote)), restic repository \(mb(sizes.repository))"
    )
    print(
        String(
            format: "         store %.2f× restic's repository, remote %.2f× (target ≤ 1.1×)",
            Double(sizes.store) / Double(sizes.repository), Double(sizes.remote) / Double(sizes.repository)))
    for row in [
        "first backup", "unchanged backup", "push to a file:// remote (compact)", "restore",
        "restore (against cp -a of the tree)",
    ] {
        guard let figures = rows[row] else { continue }
        let ours = median(figures.ours)
        guard !figures.theirs.isEmpty else {
            print(String(format: "  %@: llvs %.2f s", row, ours))
            continue
        }
        let theirs = median(figures.theirs)
        let peer = row.hasPrefix("restore (") ? "cp -a" : "restic"
        print(String(format: "  %@: llvs %.2f s, %@ %.2f s (%.2f× faster)", row, ours, peer, theirs, theirs / ours))
    }
}

/// Copies part of this machine's own files into `root`: about 500 MB of documentation, C headers, manual pages,
/// Python sources and shared libraries (the kinds a home directory or a server holds, some already compressed).
func makeMixedTree(at root: URL) throws {
    try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    let sources =
        ["/usr/share/doc", "/usr/include", "/usr/share/man"]
        + ((try? FileManager.default.contentsOfDirectory(atPath: "/usr/lib"))?.filter { $0.hasPrefix("python3.") }
            .map { "/usr/lib/" + $0 } ?? [])
    for source in sources where FileManager.default.fileExists(atPath: source) {
        _ = try runMeasured(["/bin/cp", "-a", source, root.path + "/"])
    }
    let libraries = root.appendingPathComponent("lib")
    try FileManager.default.createDirectory(at: libraries, withIntermediateDirectories: true)
    let folder = "/usr/lib/x86_64-linux-gnu"
    let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).sorted().filter {
        $0.contains(".so")
    }
    var copied = 0
    for name in names where copied < 400 {
        var info = stat()
        guard lstat(folder + "/" + name, &info) == 0, info.st_mode & S_IFMT == S_IFREG, info.st_size < 20 << 20 else {
            continue
        }
        try FileManager.default.copyItem(atPath: folder + "/" + name, toPath: libraries.path + "/" + name)
        copied += 1
    }
}

/// The bytes of the regular files under `root` and how many there are.
func bytesAndFiles(under root: URL) throws -> (bytes: Int64, files: Int) {
    var bytes: Int64 = 0, files = 0
    guard let walk = FileManager.default.enumerator(atPath: root.path) else { return (0, 0) }
    while let relative = walk.nextObject() as? String {
        var info = stat()
        guard lstat(root.path + "/" + relative, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { continue }
        bytes += Int64(info.st_size)
        files += 1
    }
    return (bytes, files)
}
