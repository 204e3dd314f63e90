import Foundation
import LLVS
import LLVSSupport

/// Frees on a remote what a prune released here: each changes file the remote holds that carries a released value
/// is written again from this store, the value as released (its size, no bytes). Versions stay; every store still
/// builds the same maps from them. Only a compact remote can say "released" (`docs/remote-format.md`).
///
/// What each version's changes file carried when it was last looked at is remembered per remote
/// (`retention/remote-<name>.json`, `RemotePruneRecord`): a file is written again when its version carries more
/// released values than then (a later prune can release more values of the same version), and while the store's
/// list of released records has not grown only versions not looked at yet are looked at.
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
        var record = try RemotePruneRecord.read(from: recordPath)
        let releasedCount = try store.releasedRecords().count
        let there = try await exchange.remoteVersionIds().filter { store.history.contains($0) }
        let candidates =
            (record.releasedCount == releasedCount ? there.filter { record.carried[$0.rawValue] == nil } : there)
            .sorted { $0.rawValue < $1.rawValue }
        let carried = try store.releasedValuesCarried(among: candidates)
        let carrying = candidates.filter { (carried[$0] ?? 0) > (record.carried[$0.rawValue] ?? 0) }
        guard !dryRun else {
            report.rewritten = carrying.count
            return report
        }
        let exchange = self.exchange
        let outcomes = await mapConcurrently(carrying, limit: max(1, exchange.concurrency)) { id in
            guard let version = exchange.store.version(identifiedBy: id) else { throw StoreError.versionNotFound(id) }
            try await exchange.replaceChanges(of: version)
        }
        var failed = Set<Version.ID>()
        for (id, outcome) in zip(carrying, outcomes) {
            switch outcome {
            case .success:
                report.rewritten += 1
            case .failure(let error):
                report.failed.append("\(id): \(error)")
                failed.insert(id)
            }
        }
        for id in candidates where !failed.contains(id) {
            record.carried[id.rawValue] = carried[id] ?? 0
        }
        // A version that failed is looked at again next time: the count is kept only once all are written.
        record.releasedCount = failed.isEmpty ? releasedCount : -1
        try POSIX.makeDirectories(RetentionFolder(store: store).path)
        try POSIX.writeAtomically(try JSONEncoder().encode(record), to: recordPath)
        return report
    }
}

/// What a remote's prune last found: the size of the store's released list then, and how many released values
/// each version's changes file on the remote carried once written again.
struct RemotePruneRecord: Codable, Sendable {
    var releasedCount = -1
    var carried: [String: Int] = [:]

    init() {}

    /// The record at `path`; an empty one when there is none. Builds before counts wrote a list of the versions
    /// written again: each is taken as carrying none, so it is looked at (and written) again once.
    static func read(from path: String) throws -> RemotePruneRecord {
        guard FileManager.default.fileExists(atPath: path) else { return RemotePruneRecord() }
        let data = try POSIX.readFile(path)
        if let record = try? JSONDecoder().decode(RemotePruneRecord.self, from: data) { return record }
        var record = RemotePruneRecord()
        for id in try JSONDecoder().decode([String].self, from: data) { record.carried[id] = 0 }
        return record
    }
}
