import Foundation
import LLVS
import LLVSConformance

/// Full pull against snapshot bootstrap on a local-folder remote, and the cost of an incremental sync.
func syncBenchmark(_ arguments: [String]) async throws {
    let counts = (option("versions", in: arguments) ?? "1000,10000").split(separator: ",").compactMap { Int($0) }
    let runs = Int(option("runs", in: arguments) ?? "") ?? 3
    // Where to leave each count's remote (as DIR/N) for profiling a bootstrap on its own (`llvs clone file://DIR/N`).
    let keptRemotes = option("keep-remote", in: arguments).map { URL(fileURLWithPath: $0) }
    let root = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-sync-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: root) }

    print("Sync benchmark: local-folder remote, one small value per version, median of \(runs) runs [min–max]")
    print(
        "versions   full pull (s)            bootstrap (s)            speed-up   incremental push ops   incremental pull ops"
    )
    for count in counts {
        let base = root.appendingPathComponent("\(count)")
        let source = try StoreCoordinator(store: try Store(creatingAt: base.appendingPathComponent("source")))
        for i in 0..<count {
            // UUIDs, as LLVS apps use: ids sharing a 2-Character prefix share one zip-v1 sub-node, rewritten whole by each version.
            try await source.save(inserting: [
                Value(id: Value.ID(UUID().uuidString), data: Data("value \(i) of the benchmark".utf8))
            ])
        }
        let remoteFolder = keptRemotes?.appendingPathComponent("\(count)") ?? base.appendingPathComponent("remote")
        if keptRemotes != nil { try? FileManager.default.removeItem(at: remoteFolder) }
        let remote = FaultInjectingFileSystem(LocalFolderFileSystem(root: remoteFolder))
        let sourceExchange = CloudFileSystemExchange(store: source.store, fileSystem: remote)
        _ = try await source.exchange(with: sourceExchange)
        _ = try await sourceExchange.sendSnapshot()

        var pulls: [Double] = [], bootstraps: [Double] = []
        for run in 0..<runs {
            let pulled = try StoreCoordinator(store: try Store(creatingAt: base.appendingPathComponent("pull-\(run)")))
            let start = DispatchTime.now().uptimeNanoseconds
            let report = try await pulled.exchange(
                with: CloudFileSystemExchange(store: pulled.store, fileSystem: remote))
            pulls.append(Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9)
            precondition(report.retrieve.retrieved.count == count, "the full pull missed versions")

            let booted = try StoreCoordinator(store: try Store(creatingAt: base.appendingPathComponent("boot-\(run)")))
            let bootStart = DispatchTime.now().uptimeNanoseconds
            let outcome = try await booted.bootstrapFromSnapshot(
                using: CloudFileSystemExchange(store: booted.store, fileSystem: remote))
            bootstraps.append(Double(DispatchTime.now().uptimeNanoseconds - bootStart) / 1e9)
            guard case .restored = outcome, booted.store.history.count == count else {
                throw BenchmarkError("the bootstrap did not restore every version")
            }
        }

        // One new version: what the sender and a receiver each cost in file operations.
        let receiver = try StoreCoordinator(store: try Store(creatingAt: base.appendingPathComponent("receiver")))
        _ = try await receiver.bootstrapFromSnapshot(
            using: CloudFileSystemExchange(store: receiver.store, fileSystem: remote))
        try await source.save(inserting: [Value(id: "one-more", data: Data("new".utf8))])
        remote.resetCounts()
        _ = try await source.exchange(with: sourceExchange)
        let pushOps = describe(remote.counts)
        remote.resetCounts()
        _ = try await receiver.exchange(with: CloudFileSystemExchange(store: receiver.store, fileSystem: remote))
        let pullOps = describe(remote.counts)

        let pull = median(pulls), boot = median(bootstraps)
        print(
            String(
                format: "%8d   %7.3f [%6.3f–%6.3f]   %7.3f [%6.3f–%6.3f]   %6.1f×   ", count, pull, pulls.min()!,
                pulls.max()!,
                boot, bootstraps.min()!, bootstraps.max()!, pull / boot)
                + pushOps.padding(toLength: 23, withPad: " ", startingAt: 0) + pullOps)
        try? FileManager.default.removeItem(at: base)
        if keptRemotes != nil { print("         remote kept in \(remoteFolder.path)") }
    }
    print(
        "Targets: bootstrap at least 20× faster than a full pull at 10,000 versions; an incremental sync costs one listing plus the new version's two files."
    )
}

func describe(_ counts: [FaultInjectingFileSystem.Operation: Int]) -> String {
    counts.sorted { $0.key.rawValue < $1.key.rawValue }.map { "\($0.value) \($0.key.rawValue)" }.joined(separator: ", ")
}

struct BenchmarkError: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
