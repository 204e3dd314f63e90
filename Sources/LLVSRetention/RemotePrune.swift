import Foundation
import LLVS
import LLVSSupport

/// Frees on a remote what a prune released here: each changes file the remote holds that carries a released value
/// is written again from this store, the value as released (its size, no bytes). Versions stay; every store still
/// builds the same maps from them. Only a compact remote can say "released" (`docs/remote-format.md`).
///
/// A changes file is written again once the bytes of released values it still holds are a tenth of it or more
/// (`rewriteShare`): writing a file again uploads all it keeps, so a few released bytes are left where they are, as
/// restic leaves packs with a little unused data. What each file was written again without is remembered per remote
/// (`retention/remote-<name>.json`, `RemotePruneRecord`), so a later prune that releases more values of the same
/// version counts only those; while the store's list of released records has not grown, only versions not looked at
/// yet are looked at.
public struct RemotePrune: Sendable {
    /// A changes file is written again once released values are this fraction of it (1/10) or more.
    static let rewriteShare: Int64 = 10

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
        /// Changes files that hold released values' bytes under a tenth of their size, left as they are.
        public var leftAsTheyAre = 0
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
            (record.releasedCount == releasedCount ? there.filter { record.releasedBytes[$0.rawValue] == nil } : there)
            .sorted { $0.rawValue < $1.rawValue }
        let found = try store.releasedInChanges(among: candidates)
        let carrying = candidates.filter { id in
            guard let here = found[id] else { return false }
            let left = record.releasedBytes[id.rawValue] ?? 0
            let held = here.releasedBytes - left
            return held > 0 && held * Self.rewriteShare >= here.bytes - left
        }
        report.leftAsTheyAre =
            candidates.filter { id in
                (found[id]?.releasedBytes ?? 0) > (record.releasedBytes[id.rawValue] ?? 0)
            }.count - carrying.count
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
        for id in carrying where !failed.contains(id) {
            record.releasedBytes[id.rawValue] = found[id]?.releasedBytes ?? 0
        }
        for id in candidates where record.releasedBytes[id.rawValue] == nil {
            record.releasedBytes[id.rawValue] = 0
        }
        // A version that failed is looked at again next time: the count is kept only once all are written.
        record.releasedCount = failed.isEmpty ? releasedCount : -1
        try POSIX.makeDirectories(RetentionFolder(store: store).path)
        try POSIX.writeAtomically(try JSONEncoder().encode(record), to: recordPath)
        return report
    }
}

/// What a remote's prune last found: the size of the store's released list then, and for each version looked at the
/// released values' bytes its changes file on the remote was last written without (0: never written again).
struct RemotePruneRecord: Codable, Sendable {
    var releasedCount = -1
    var releasedBytes: [String: Int64] = [:]

    init() {}

    /// The record at `path`; an empty one when there is none, or when it is the list of versions written again that
    /// earlier builds kept (every version is then looked at once more).
    static func read(from path: String) throws -> RemotePruneRecord {
        guard FileManager.default.fileExists(atPath: path) else { return RemotePruneRecord() }
        let data = try POSIX.readFile(path)
        if let record = try? JSONDecoder().decode(RemotePruneRecord.self, from: data) { return record }
        _ = try JSONDecoder().decode([String].self, from: data)
        return RemotePruneRecord()
    }
}
