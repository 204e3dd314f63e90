import Foundation
import LLVSSupport

/// Exchanges versions over any `CloudFileSystem`, in the remote layout LLVS apps use (docs/remote-format.md), under a
/// base path. Versions travel many at once; a version's changes file goes up before its version file, and only
/// versions with a version file count as present, so an interrupted send is simply completed next time.
public struct CloudFileSystemExchange: Exchange {
    public let store: Store
    public let fileSystem: any CloudFileSystem
    /// The folder on the file system that holds `versions/`, `changes/` and `snapshots/` ("" for its root).
    public let basePath: String
    public let concurrency: Int
    public let progress: (@Sendable (ExchangeProgress) -> Void)?
    /// Where the store keeps this remote's change feed position; nil to list the remote on every sync. Used only
    /// when the file system has a change feed.
    public let cursorFile: RemoteCursorFile?
    public let codec: any RemoteCodec

    public init(
        store: Store, fileSystem: any CloudFileSystem, basePath: String = "", concurrency: Int = 8,
        cursorFile: RemoteCursorFile? = nil, codec: any RemoteCodec = UpstreamRemoteCodec(),
        progress: (@Sendable (ExchangeProgress) -> Void)? = nil
    ) {
        self.store = store
        self.codec = codec
        self.fileSystem = fileSystem
        self.basePath = basePath
        self.concurrency = concurrency
        self.cursorFile = cursorFile
        self.progress = progress
    }

    func path(_ parts: String...) -> String {
        CloudPath.join(([basePath] + parts).joined(separator: "/"))
    }

    private func file(_ folder: String, _ id: Version.ID) throws -> String {
        try RemoteFormat.checkFileName(id.rawValue)
        return path(folder, id.rawValue)
    }

    public func remoteVersionIds() async throws -> Set<Version.ID> {
        let names = try await fileSystem.listNames(path(RemoteFormat.versionsFolder))
        return Set(names.filter { !$0.hasPrefix(".") }.map(Version.ID.init))
    }

    /// The folders a change feed watches: `versions/` says what is new; `changes/` is watched too so the connector
    /// learns the new changes files' IDs from the same answer and downloads them without a lookup.
    public var watchedFolders: [String] { [path(RemoteFormat.versionsFolder), path(RemoteFormat.changesFolder)] }

    /// From the change feed when the store has a position for this remote: the versions the remote held at that
    /// position, plus the version files added since, minus those removed. Otherwise (first sync, no feed, a
    /// position the service refuses) a full listing, with a new position taken just before it.
    public func remoteListing() async throws -> RemoteListing {
        guard let cursorFile, let feed = fileSystem as? any CloudChangeFeed else {
            return RemoteListing(versionIds: try await remoteVersionIds())
        }
        let versions = watchedFolders[0]
        var expired: String?
        if let state = cursorFile.load() {
            do {
                let changes = try await feed.changes(in: watchedFolders, since: state.cursor)
                var ids = state.versionIds
                for name in changes.removed[versions] ?? [] { ids.remove(Version.ID(name)) }
                for name in changes.added[versions] ?? [] where !name.hasPrefix(".") { ids.insert(Version.ID(name)) }
                return RemoteListing(versionIds: ids, source: .changeFeed, cursor: changes.cursor)
            } catch CloudFileSystemError.cursorExpired(let reason) {
                expired = reason
            }
        }
        let cursor = try await feed.changeCursor(watching: watchedFolders)
        let ids = try await remoteVersionIds()
        return RemoteListing(
            versionIds: ids, source: expired.map(RemoteListing.Source.fullListingAfterExpiredCursor) ?? .fullListing,
            cursor: cursor)
    }

    /// Waits up to `timeout` for the remote's change feed to report something after the saved position (a long poll
    /// where the service has one, else one look); nil when the remote has no feed or the store no position for it
    /// yet, so the caller just syncs after a pause.
    public func waitForRemoteChanges(timeout: Duration) async throws -> Bool? {
        guard let feed = fileSystem as? any CloudChangeFeed, let state = cursorFile?.load() else { return nil }
        do {
            return try await feed.waitForChanges(in: watchedFolders, since: state.cursor, timeout: timeout)
        } catch CloudFileSystemError.cursorExpired {
            return true  // the next sync lists in full and saves a new position
        }
    }

    /// How many syncs in a row may find a listed version's file missing before it is taken for removed (in a way
    /// the feed did not report) and no longer asked for: a few, as a service whose reads lag its feed serves it
    /// within a sync or two.
    public static let missesBeforeForgetting = 3

    /// Saves the position with what the remote holds now: what it held, plus what was sent, minus version files the
    /// remote has not had for `missesBeforeForgetting` syncs, so they are not asked for for ever.
    ///
    /// Housekeeping happens here too, not in the listing: what this machine's killed snapshot uploads left on the remote
    /// goes once an exchange has done its work, while a look at the remote (`llvs status`) changes nothing.
    public func syncCompleted(_ listing: RemoteListing, retrieved: RetrieveReport, sent: SendReport) async throws {
        await removeAbandonedSnapshotUploads()
        guard let cursorFile, let cursor = listing.cursor else { return }
        var ids = listing.versionIds.union(sent.sent)
        let previous = cursorFile.load()?.misses ?? [:]
        var misses: [Version.ID: Int] = [:]
        for id in retrieved.notYetReadable where ids.contains(id) {
            let count = previous[id, default: 0] + 1
            if count >= Self.missesBeforeForgetting { ids.remove(id) } else { misses[id] = count }
        }
        try cursorFile.save(.init(cursor: cursor, versionIds: ids, misses: misses))
    }

    public func fetchVersion(_ id: Version.ID) async throws -> Version {
        let path = try file(RemoteFormat.versionsFolder, id)
        return try codec.decodeVersion(try await fileSystem.download(path), path: path)
    }

    /// A changes file holds the version's values and can be any size: it goes to a temporary file, which the
    /// shared retrieve reads as a stream, so no connector has to hold it (or refuse it) in memory.
    public func changesLocation(of id: Version.ID) -> String { path(RemoteFormat.changesFolder, id.rawValue) }

    /// Changes whose values hold at most this many bytes (by the version's `valueDataSize`) are read into memory:
    /// most versions are small, and a temporary file each costs a clone more in file creation than in transfer. With
    /// up to `window` fetched changes waiting to be added, this keeps what a retrieve holds to a few tens of MiB.
    public static let inMemoryChangesLimit: Int64 = 256 * 1024

    /// Small changes in memory; large ones, those of a version that does not give its size, and any the in-memory read
    /// fails on (changes far larger than their values, as a merge's thousands of preserves, may pass the connector's
    /// in-memory limit) to a temporary file.
    public func fetchChanges(of version: Version) async throws -> EncodedChanges {
        guard let size = version.valueDataSize, size <= Self.inMemoryChangesLimit else {
            return try await fetchChanges(of: version.id)
        }
        // Retries are the HTTP client's; only an answer too long for memory (changes far larger than their values)
        // is read again, into a file.
        do {
            return .data(try await fileSystem.download(try file(RemoteFormat.changesFolder, version.id)))
        } catch CloudFileSystemError.tooLargeForMemory {
            return try await fetchChanges(of: version.id)
        }
    }

    public func fetchChanges(of id: Version.ID) async throws -> EncodedChanges {
        let path = try file(RemoteFormat.changesFolder, id)
        let temporary = store.temporaryFile("changes")
        do {
            try await fileSystem.download(path, toFileAt: temporary)
        } catch {
            try? FileManager.default.removeItem(at: temporary)
            throw error
        }
        return .file(temporary, owned: true)
    }

    /// Large changes are written through the file system's stager, so an encrypted remote's are sealed as they are
    /// encoded and the file is written once.
    public func encodeChanges(of version: Version) async throws -> EncodedChanges {
        let stager = try await fileSystem.stager(for: try file(RemoteFormat.changesFolder, version.id))
        return try codec.encodeChanges(madeInVersionIdentifiedBy: version.id, in: store, stager: stager)
    }

    /// The files are named by the version's ID, which never names another: they are written as new names, with no
    /// look for a file to replace. Compact changes go with their index (`indexes/<id>`), after the changes and before
    /// the version file, so a version on the remote has both (unless a build that writes none sent it).
    public func send(_ version: Version, changes: EncodedChanges) async throws {
        let changesPath = try file(RemoteFormat.changesFolder, version.id)
        try await fileSystem.upload(try changes.uploadSource(), to: changesPath, mode: .newName)
        if case .indexed(_, let index) = changes {
            try await fileSystem.upload(
                .data(index.encoded()), to: try file(CompactChangesIndex.folder, version.id), mode: .newName)
        }
        try await fileSystem.upload(
            .data(try codec.encodeVersion(version)), to: try file(RemoteFormat.versionsFolder, version.id),
            mode: .newName)
    }

    /// Where a version's index is (`CompactChangesIndex`).
    public func indexLocation(of id: Version.ID) -> String { path(CompactChangesIndex.folder, id.rawValue) }

    /// The folder of the remote's indexes.
    public var indexesFolder: String { path(CompactChangesIndex.folder) }

    /// Replaces a version's changes file with the changes as this store has them now, so the values a prune released
    /// here go as released (their sizes, no bytes) and the remote frees their bytes too. Only a compact remote can say
    /// "released"; for an upstream one the encoding refuses (`ExchangeError.releasedValue`). A reader that downloads
    /// the file meanwhile gets the old one or the new one, each whole.
    public func replaceChanges(of version: Version) async throws {
        let changes = try await encodeChanges(of: version)
        defer { changes.discard() }
        try await fileSystem.upload(
            try changes.uploadSource(), to: try file(RemoteFormat.changesFolder, version.id), mode: .replace)
        // Replaced after the changes: a reader that meets the old index with the new file sees the sizes differ
        // (a rewrite releases bytes) and reads the file whole.
        if case .indexed(_, let index) = changes {
            try await fileSystem.upload(
                .data(index.encoded()), to: try file(CompactChangesIndex.folder, version.id), mode: .replace)
        }
    }
}
