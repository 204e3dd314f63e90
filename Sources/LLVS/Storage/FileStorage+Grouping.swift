import Foundation
import LLVSSupport

/// Version files received in bulk, made durable together: written under temporary names without a sync each, then
/// every `batchSize` versions (and at the end) the file system is synced once, the files are linked into place in
/// the order they were committed, and the file system is synced once more for the new names.
///
/// The promise is the one single saves keep: a version file under its own name is whole and durable, so a process
/// killed (or a machine that loses power) at any point leaves a store that opens, holding whole versions, and the
/// versions of the unfinished batch are fetched again by the next run; their temporary files are removed as
/// abandoned when the store is next opened. Within this process they are readable as soon as they are committed.
struct GroupedCommits {
    /// How deep the nested `beginGroupedCommits` calls are; zero when commits are durable one by one.
    var depth = 0
    /// Temporary paths of committed versions not yet in place, and their order of commit.
    var pending: [Version.ID: String] = [:]
    var order: [(id: Version.ID, temporary: String, destination: String)] = []

    static let batchSize = 512
}

extension FileStorage {
    public func beginGroupedCommits() {
        grouped.withLock { $0.depth += 1 }
    }

    public func endGroupedCommits() throws {
        let last = grouped.withLock { state -> Bool in
            state.depth = max(0, state.depth - 1)
            return state.depth == 0
        }
        if last { try makeGroupDurable() }
    }

    /// Keeps a finished version file for the group when one is open (true); false when it is to be committed alone.
    func deferIfGrouping(_ file: AtomicFileWriter, versionId: Version.ID) throws -> Bool {
        guard grouped.withLock({ $0.depth > 0 }) else { return false }
        try file.finish()
        let full = grouped.withLock { state -> Bool in
            state.pending[versionId] = file.temporaryPath
            state.order.append((versionId, file.temporaryPath, file.destination))
            return state.order.count >= GroupedCommits.batchSize
        }
        if full { try makeGroupDurable() }
        return true
    }

    /// Syncs the pending files, links them into place in commit order (so a version's predecessors, whose records
    /// its map may share, are in place first), and syncs the new names.
    func makeGroupDurable() throws {
        // One batch at a time: two committers that both filled it would otherwise link the same files twice.
        groupFlush.lock()
        defer { groupFlush.unlock() }
        let batch = grouped.withLock { $0.order }
        guard !batch.isEmpty else { return }
        try POSIX.syncFileSystem(containing: versionsPath)
        for file in batch {
            // Taken by another process meanwhile: the same version, already whole there.
            _ = try POSIX.linkIntoPlace(file.temporary, file.destination)
        }
        try POSIX.syncFileSystem(containing: versionsPath)
        grouped.withLock { state in
            state.order.removeFirst(batch.count)
            for file in batch { state.pending[file.id] = nil }
        }
    }
}

extension Store {
    /// Runs a bulk receive (a retrieve: clone, pull, sync): the versions committed meanwhile are made durable
    /// together, as `Storage.beginGroupedCommits` says, and all of them before this returns or throws.
    nonisolated(nonsending)
    public func receivingInBulk<T>(_ body: () async throws -> T) async throws -> T {
        storage.beginGroupedCommits()
        let result: T
        do {
            result = try await body()
        } catch {
            try? storage.endGroupedCommits()
            throw error
        }
        try storage.endGroupedCommits()
        return result
    }
}
