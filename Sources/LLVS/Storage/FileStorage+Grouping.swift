import Foundation
import LLVSSupport

/// Versions received in bulk, made durable together: each committed version's bundle is appended to a pack under a
/// temporary name in `packs/` (an `llvs-bundles-v1` archive, as a restored snapshot is kept), and every `batchSize`
/// versions or `batchBytes` bytes (and at the end) the pack is synced once and linked into place. A bulk receive of
/// 10,000 versions then makes 20 files instead of 10,000, and a store that opens reads 20 instead of 10,000.
///
/// The promise is the one single saves keep: a pack under its own name is whole and durable, so a process killed
/// (or a machine that loses power) at any point leaves a store that opens, holding whole versions, and the versions
/// of the unfinished pack are fetched again by the next run; its temporary file is removed as abandoned when the
/// store is next opened. Within this process a version is readable as soon as it is committed. Bundles go into the
/// pack in commit order, so a version's predecessors, whose records its map may share, are always placed with it or
/// before it. A version whose bundle passes `SpillingBundle.memoryLimit` is written to its own version file instead
/// (its bytes written once, not copied into a pack), committed durably right after the pack before it is placed.
struct GroupedCommits {
    /// How deep the nested `beginGroupedCommits` calls are; zero when commits are durable one by one.
    var depth = 0

    static let batchSize = 512
    static let batchBytes: Int64 = 64 << 20
}

/// The pack a group's versions are being appended to; only touched inside `FileStorage.groupPack`'s lock.
final class GroupPack {
    let name: String
    let writer: AtomicFileWriter
    var versions: [Version.ID] = []

    init(folder: String) throws {
        name = UUID.drawn().uuidString + FileStorage.packExtension
        writer = try AtomicFileWriter(destination: folder + "/" + name)
        try writer.write(SnapshotArchive.header)
    }
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

    /// Appends a committed version's bundle to the group's pack (started on the first), readable at once; places the
    /// pack when it is full. An append that fails part way is cut off again, so the pack holds whole bundles only.
    /// A bundle that spilled to its own file (large values) is committed as that file instead, durably, once the
    /// pack before it is placed: the versions its map may share records with are in place first, as in a pack.
    func appendToGroupPack(_ id: Version.ID, bundle: SpillingBundle) throws {
        defer { bundle.discard() }
        try groupPack.withLock { pack in
            // Two writers of one version in one group: the first one's bundle is the version.
            guard !isPacked(id) else { throw StoreError.versionAlreadyExists(id) }
            if let file = bundle.spill {
                try placeGroupPack(&pack)
                return try Self.placeVersionFile(file, id)
            }
            let current = try pack ?? GroupPack(folder: packsPath)
            pack = current
            let start = current.writer.bytesWritten
            do {
                var length = ByteWriter()
                length.uint64(UInt64(bundle.bytesWritten))
                try current.writer.write(length.bytes)
                try current.writer.write(bundle.heldBytes)
                try current.writer.flush()
            } catch {
                try? current.writer.truncate(to: start)
                throw error
            }
            registerPacked(id, inPackAt: current.writer.temporaryPath, offset: start + 8, length: bundle.bytesWritten)
            current.versions.append(id)
            if current.versions.count >= GroupedCommits.batchSize
                || current.writer.bytesWritten >= GroupedCommits.batchBytes
            {
                try placeGroupPack(&pack)
            }
        }
    }

    /// Ends the group's pack, syncs it and links it into place (then syncs the folder); nothing when it is empty.
    private func placeGroupPack(_ pack: inout GroupPack?) throws {
        guard let current = pack else { return }
        pack = nil
        // A pack whose first append failed holds no version: it goes, rather than being placed empty.
        guard !current.versions.isEmpty else { return current.writer.discard() }
        // Known before its name appears, so a concurrent `newlyCommittedVersions` does not load it a second time.
        markLoaded(current.name)
        try current.writer.write(SnapshotArchive.endMarker(count: current.versions.count))
        try current.writer.commit(replacing: false, durable: true)
        adoptPlacedPack(named: current.name, from: current.writer.temporaryPath, versions: current.versions)
    }

    /// Places the group's pack, if it holds any version.
    func makeGroupDurable() throws {
        try groupPack.withLock { try placeGroupPack(&$0) }
    }
}

extension Store {
    /// Runs a bulk receive (a retrieve: clone, pull, sync): the versions committed meanwhile are made durable
    /// together, as `Storage.beginGroupedCommits` says, and all of them before this returns or throws.
    nonisolated(nonsending)
        public func receivingInBulk<T>(_ body: () async throws -> T) async throws -> T
    {
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
