import Foundation
import LLVS
import LLVSSupport

/// Frees on a remote what a prune released here: each changes file the remote holds that carries a released value
/// is written again from this store, the value as released (its size, no bytes). Versions stay; every store still
/// builds the same maps from them. Only a compact remote can say "released" (`docs/remote-format.md`).
///
/// The versions rewritten are remembered per remote (`retention/remote-<name>.json`), so a later prune rewrites only
/// the versions its own release touched.
public struct RemotePrune: Sendable {
    public let exchange: CloudFileSystemExchange
    /// The remote's name, for the record of what was rewritten.
    public let name: String

    public init(exchange: CloudFileSystemExchange, name: String) {
        self.exchange = exchange
        self.name = name
    }

    public struct Report: Encodable, Sendable {
        public var remote: String
        public var rewritten = 0
        public var failed: [String] = []
    }

    public func run(dryRun: Bool = false) async throws -> Report {
        var report = Report(remote: name)
        let store = exchange.store
        let recordPath =
            RetentionFolder(store: store).path + "/remote-" + SHA256.hexString(SHA256.digest(name)) + ".json"
        var done = Set<String>()
        if FileManager.default.fileExists(atPath: recordPath) {
            done = Set(try JSONDecoder().decode([String].self, from: try POSIX.readFile(recordPath)))
        }
        let there = try await exchange.remoteVersionIds()
        let candidates = there.filter { store.history.contains($0) && !done.contains($0.rawValue) }
            .sorted { $0.rawValue < $1.rawValue }
        let carrying = try store.versionsCarryingReleasedValues(among: candidates)
        guard !dryRun else {
            report.rewritten = carrying.count
            return report
        }
        let exchange = self.exchange
        let outcomes = await mapConcurrently(carrying, limit: max(1, exchange.concurrency)) { id in
            guard let version = exchange.store.version(identifiedBy: id) else { throw StoreError.versionNotFound(id) }
            try await exchange.replaceChanges(of: version)
        }
        for (id, outcome) in zip(carrying, outcomes) {
            switch outcome {
            case .success:
                report.rewritten += 1
                done.insert(id.rawValue)
            case .failure(let error):
                report.failed.append("\(id): \(error)")
            }
        }
        try POSIX.makeDirectories(RetentionFolder(store: store).path)
        try POSIX.writeAtomically(try JSONEncoder().encode(done.sorted()), to: recordPath)
        return report
    }
}
