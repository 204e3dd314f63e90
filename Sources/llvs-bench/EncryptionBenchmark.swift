import Foundation
import LLVSSupport

/// `llvs-bench encryption`: what `--encrypt` costs, side by side in one run. Two rows, each the same `llvs` command
/// against a plaintext remote and an encrypted one on a local folder (the strictest place to measure: no network
/// hides the sealing), the two taking turns going first:
/// - a first `llvs backup TREE --to REMOTE` of `--files` files (100 B to 8 KiB) into a fresh store;
/// - `llvs push` of one value of `--size-mib` MiB, then `llvs clone` of it into a new store.
/// Each figure is a separate process's wall time and peak memory; the ratio is encrypted over plaintext.
func encryptionBenchmark(_ arguments: [String]) throws {
    let files = Int(option("files", in: arguments) ?? "") ?? 20_000
    let mebibytes = Int(option("size-mib", in: arguments) ?? "") ?? 1024
    let runs = Int(option("runs", in: arguments) ?? "") ?? 3
    let llvs = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("llvs")
    guard FileManager.default.isExecutableFile(atPath: llvs.path) else { throw BenchmarkError("build llvs beside llvs-bench: \(llvs.path) is missing") }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-encryption-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: work) }
    let tree = work.appendingPathComponent("tree")
    let bytes = try makeTree(at: tree, count: files, sizes: 100...8192, seed: 29)
    let large = work.appendingPathComponent("large.bin")
    try writeSeededFile(large, mebibytes: mebibytes)
    print("Encryption: \(files) files (\(String(format: "%.0f MB", Double(bytes) / 1e6))) backed up, and one \(mebibytes) MiB value pushed and cloned, to a local-folder remote; \(runs) runs")

    enum Mode: String, CaseIterable { case plain, encrypted }
    var figures: [String: [Mode: [MeasuredRun]]] = [:]
    func record(_ row: String, _ mode: Mode, _ run: MeasuredRun) { figures[row, default: [:]][mode, default: []].append(run) }
    for run in 0..<runs {
        let order: [Mode] = run % 2 == 0 ? [.plain, .encrypted] : [.encrypted, .plain]
        for mode in order {
            let folder = work.appendingPathComponent("\(mode.rawValue)-\(run)")
            let environment = ["XDG_CONFIG_HOME": folder.appendingPathComponent("config").path, "LLVS_PASSPHRASE": "llvs-bench passphrase"]
            func llvsCommand(_ words: String...) throws -> MeasuredRun { try runMeasured([llvs.path] + words, environment: environment) }
            let store = folder.appendingPathComponent("store").path, bigStore = folder.appendingPathComponent("big").path
            let remote = "file://" + folder.appendingPathComponent("remote").path, bigRemote = "file://" + folder.appendingPathComponent("big-remote").path
            let encrypt = mode == .encrypted ? ["--encrypt"] : []
            _ = try runMeasured([llvs.path, "init", "--store", store], environment: environment)
            _ = try runMeasured([llvs.path, "remote", "add", "home", remote, "--store", store] + encrypt, environment: environment)
            settleWriteback()
            record("backup", mode, try llvsCommand("backup", tree.path, "--to", "home", "--store", store))

            _ = try runMeasured([llvs.path, "init", "--store", bigStore], environment: environment)
            _ = try runMeasured([llvs.path, "put", "large", large.path, "--store", bigStore], environment: environment)
            _ = try runMeasured([llvs.path, "remote", "add", "--all-stores", "big-\(mode.rawValue)", bigRemote] + encrypt, environment: environment)
            settleWriteback()
            record("push", mode, try llvsCommand("push", "big-\(mode.rawValue)", "--store", bigStore))
            settleWriteback()
            record("clone", mode, try llvsCommand("clone", "big-\(mode.rawValue)", folder.appendingPathComponent("cloned").path))
            try? FileManager.default.removeItem(at: folder)
        }
    }
    let titles = [("backup", "first `backup --to` of \(files) files", 1.10), ("push", "`push` of one \(mebibytes) MiB value", 1.20),
                  ("clone", "`clone` of that value into a new store", 1.20)]
    print("\n| what | plaintext | encrypted | encrypted ÷ plaintext | target |\n|---|---|---|---|---|")
    for (key, title, target) in titles {
        guard let plain = figures[key]?[.plain], let sealed = figures[key]?[.encrypted] else { continue }
        func describe(_ runs: [MeasuredRun]) -> String {
            let seconds = runs.map(\.seconds)
            return String(format: "%@, peak %.0f MiB", formatSeconds((median(seconds), seconds.min()!, seconds.max()!)), runs.map(\.peakMiB).max()!)
        }
        let ratio = median(sealed.map(\.seconds)) / median(plain.map(\.seconds))
        print("| \(title) | \(describe(plain)) | \(describe(sealed)) | \(String(format: "%.2f", ratio)) | ≤ \(String(format: "%.2f", target)) \(ratio <= target ? "met" : "**not met**") |")
    }
}

/// A file of seeded bytes, written a MiB at a time.
func writeSeededFile(_ url: URL, mebibytes: Int) throws {
    FileManager.default.createFile(atPath: url.path, contents: nil)
    let handle = try FileHandle(forWritingTo: url)
    defer { try? handle.close() }
    var generator = SeededGenerator(seed: 31)
    for _ in 0..<mebibytes {
        var block = Data(count: 1 << 20)
        block.withUnsafeMutableBytes { raw in
            for i in raw.bindMemory(to: UInt64.self).indices { raw.bindMemory(to: UInt64.self)[i] = generator.next() }
        }
        try handle.write(contentsOf: block)
    }
}
