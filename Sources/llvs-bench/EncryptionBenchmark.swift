import Foundation
import LLVSSupport

/// `llvs-bench encryption`: what `--encrypt` costs, side by side in one run. Each row is the same `llvs` command
/// against a local-folder remote (the strictest place to measure: no network hides the sealing) three ways, taking
/// turns going first: plaintext; encrypted with the passphrase kept (`--passphrase-stdin`, so the opened key is
/// kept too); encrypted with `$LLVS_PASSPHRASE` (the key derived by every command). Rows:
/// - a first `llvs backup TREE --to REMOTE` of `--files` files (100 B to 8 KiB) from a fresh store;
/// - `llvs push` of one value of `--size-mib` MiB, then `llvs clone` of it into a new store.
/// Each remote is made ready first (an empty push, which makes an encrypted remote's key: once per remote, one
/// derivation). Each figure is a separate process's wall time and peak memory; ratios are over plaintext.
func encryptionBenchmark(_ arguments: [String]) throws {
    let files = Int(option("files", in: arguments) ?? "") ?? 20_000
    let mebibytes = Int(option("size-mib", in: arguments) ?? "") ?? 1024
    let runs = Int(option("runs", in: arguments) ?? "") ?? 3
    let llvs = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("llvs")
    guard FileManager.default.isExecutableFile(atPath: llvs.path) else {
        throw BenchmarkError("build llvs beside llvs-bench: \(llvs.path) is missing")
    }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent(
        "llvs-bench-encryption-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let tree = work.appendingPathComponent("tree")
    let bytes = try makeTree(at: tree, count: files, sizes: 100...8192, seed: 29)
    let large = work.appendingPathComponent("large.bin")
    try writeSeededFile(large, mebibytes: mebibytes)
    print(
        "Encryption: \(files) files (\(String(format: "%.0f MB", Double(bytes) / 1e6))) backed up, and one \(mebibytes) MiB value pushed and cloned, to a local-folder remote; \(runs) runs"
    )

    enum Mode: String, CaseIterable { case plain, kept, given }
    var figures: [String: [Mode: [MeasuredRun]]] = [:]
    func record(_ row: String, _ mode: Mode, _ run: MeasuredRun) {
        figures[row, default: [:]][mode, default: []].append(run)
    }
    for run in 0..<runs {
        let modes = Mode.allCases
        for mode in (0..<modes.count).map({ modes[($0 + run) % modes.count] }) {
            let folder = work.appendingPathComponent("\(mode.rawValue)-\(run)")
            var environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("config").path]
            if mode == .given { environment["LLVS_PASSPHRASE"] = "llvs-bench passphrase" }
            func llvsCommand(_ words: [String]) throws -> MeasuredRun {
                try runMeasured([llvs.path] + words, environment: environment)
            }
            /// Adds a remote for all stores and makes it ready with an empty push from `store`.
            func addRemote(_ name: String, _ url: String, store: String) throws {
                let add = "\(llvs.path) remote add --all-stores \(name) \(url)"
                switch mode {
                case .plain: _ = try runMeasured(["/bin/sh", "-c", add], environment: environment)
                case .kept:
                    _ = try runMeasured(
                        ["/bin/sh", "-c", "printf 'llvs-bench passphrase' | \(add) --encrypt --passphrase-stdin"],
                        environment: environment)
                case .given: _ = try runMeasured(["/bin/sh", "-c", add + " --encrypt"], environment: environment)
                }
                _ = try llvsCommand(["push", name, "--store", store])
            }
            let store = folder.appendingPathComponent("store").path,
                bigStore = folder.appendingPathComponent("big").path
            _ = try llvsCommand(["init", "--store", store])
            try addRemote("home", "file://" + folder.appendingPathComponent("remote").path, store: store)
            settleWriteback()
            record("backup", mode, try llvsCommand(["backup", tree.path, "--to", "home", "--store", store]))

            _ = try llvsCommand(["init", "--store", bigStore])
            try addRemote("big", "file://" + folder.appendingPathComponent("big-remote").path, store: bigStore)
            _ = try llvsCommand(["put", "large", large.path, "--store", bigStore])
            settleWriteback()
            record("push", mode, try llvsCommand(["push", "big", "--store", bigStore]))
            settleWriteback()
            record("clone", mode, try llvsCommand(["clone", "big", folder.appendingPathComponent("cloned").path]))
            try? FileManager.default.removeItem(at: folder)
        }
    }
    let titles = [
        ("backup", "first `backup --to` of \(files) files", 1.10),
        ("push", "`push` of one \(mebibytes) MiB value", 1.20),
        ("clone", "`clone` of that value into a new store", 1.20),
    ]
    print(
        "\n| what | plaintext | encrypted, passphrase kept | ratio | encrypted, $LLVS_PASSPHRASE | ratio | target |\n|---|---|---|---|---|---|---|"
    )
    func describe(_ runs: [MeasuredRun]) -> String {
        let seconds = runs.map(\.seconds)
        return String(
            format: "%@, peak %.0f MiB", formatSeconds((median(seconds), seconds.min()!, seconds.max()!)),
            runs.map(\.peakMiB).max()!)
    }
    for (key, title, target) in titles {
        guard let plain = figures[key]?[.plain], let kept = figures[key]?[.kept], let given = figures[key]?[.given]
        else { continue }
        let ratios = [kept, given].map { median($0.map(\.seconds)) / median(plain.map(\.seconds)) }
        let met = ratios.map { $0 <= target ? "met" : "**not met**" }
        print(
            "| \(title) | \(describe(plain)) | \(describe(kept)) | \(String(format: "%.2f", ratios[0])) | \(describe(given)) | \(String(format: "%.2f", ratios[1])) "
                + "| ≤ \(String(format: "%.2f", target)): \(met[0]), \(met[1]) |")
    }
}

/// A file of seeded bytes, written a MiB at a time.
func writeSeededFile(_ url: URL, mebibytes: Int) throws {
    try SeededGenerator.writeFile(url, count: mebibytes << 20, seed: 31)
}
