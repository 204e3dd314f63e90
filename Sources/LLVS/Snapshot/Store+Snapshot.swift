import Foundation
import LLVSCodecs
import LLVSSupport

/// What a snapshot written by `Store.writeSnapshot` holds.
public struct SnapshotSummary: Sendable, Equatable {
    public var format: String
    public var versionCount: Int
    /// The version with the latest timestamp (then the largest ID).
    public var latestVersionId: Version.ID
    public var size: Int64
    public var sha256: String
    /// The value records of those versions a prune released (`llvs-bundles-v2`): they go beside the snapshot, so the
    /// store restored from it lists them as released.
    public var released: Set<RecordLocation> = []
}

extension Store {
    private func snapshotStorage() throws -> any SnapshotCapable {
        guard let storage = storage as? any SnapshotCapable else {
            throw StoreError.snapshotsUnsupported(storage: storage.kind)
        }
        return storage
    }

    /// Writes a consistent copy of every version the store has now to a local file, in `format`: `zip-v1` (what LLVS
    /// apps write and restore; the default) or `llvs-bundles-v1` (this package's own). Saves made meanwhile are not
    /// in it and do not disturb it.
    public func writeSnapshot(to url: URL, format: String = ZipV1Snapshot.format) throws -> SnapshotSummary {
        let history = self.history
        let versions = history.topologicallySorted()
        guard let latest = versions.max(by: History.isOrderedBefore) else {
            throw StoreError.versionNotFound("(the store is empty)")
        }
        let ids = Set(versions.map(\.id))
        let released = try releasedRecords().filter { ids.contains($0.versionId) }
        switch format {
        case SnapshotArchive.format, SnapshotArchive.formatWithReleased:
            let storage = try snapshotStorage()
            let writer = try SnapshotArchiveWriter(destination: url)
            do {
                try storage.writeBundles(of: versions.map(\.id), to: writer, released: released)
                let (size, sha256) = try writer.finish()
                return SnapshotSummary(
                    format: released.isEmpty ? SnapshotArchive.format : SnapshotArchive.formatWithReleased,
                    versionCount: versions.count, latestVersionId: latest.id, size: size, sha256: sha256,
                    released: released)
            } catch {
                writer.discard()
                throw error
            }
        case ZipV1Snapshot.format:
            if let record = released.first {
                throw StoreError.snapshotNeedsReleasedRecords(version: record.versionId, count: released.count)
            }
            let zip = try ZipArchiveWriter(destination: url.path)
            let size: Int64
            do {
                try ZipV1Writer(store: self).write(versions: versions, to: zip)
                size = try zip.finish()
            } catch {
                zip.discard()
                throw error
            }
            return SnapshotSummary(
                format: format, versionCount: versions.count, latestVersionId: latest.id, size: size,
                sha256: try ChecksumStream.text(ofFileAt: url, .sha256))
        default:
            throw StoreError.corruptFile(
                path: url.path,
                reason: "snapshot format \(format) is not one this build writes (zip-v1, llvs-bundles-v1)")
        }
    }

    /// Fills an empty store from a snapshot file: all of it, or (on any failure) nothing, leaving the store empty
    /// and usable.
    /// `released`: the records the snapshot holds as zeros (`llvs-bundles-v2`), listed as released once the versions
    /// are in (a restore that fails lists nothing, so a pull that follows it starts clean).
    public func restoreSnapshot(from url: URL, released: Set<RecordLocation> = []) throws {
        let storage = try snapshotStorage()
        try reloadHistory()
        guard history.isEmpty else { throw StoreError.storeNotEmpty(path: rootURL.path) }
        try storage.restoreBundles(from: try SnapshotArchiveReader(url: url), released: released)
        try listReleased(Array(released))
        try reloadHistory()
    }

    /// Fills an empty store from an archive this process staged in the store's temporary folder (a zip-v1 import),
    /// whose headers and history its staging store built: the storage trusts the headers and may take the file over,
    /// and the history is taken as it is (building a 10,000-version history again took 40–50 ms of each import).
    func restoreStagedSnapshot(from archive: SnapshotArchiveReader, headers: [StoredVersion], history: History) throws {
        let storage = try snapshotStorage()
        guard self.history.isEmpty else { throw StoreError.storeNotEmpty(path: rootURL.path) }
        try storage.restoreBundles(from: archive, checkedHeaders: headers, takingOver: true, released: [])
        try adoptRestoredHistory(history, headers: headers)
        // Drains what the storage reported restored (all known now) and picks up anything else, as after any restore.
        try reloadHistory()
    }

    /// Fills an empty store from a snapshot file of `format` (`llvs-bundles-v1`, or an LLVS app's `zip-v1` holding
    /// at least `versionCount` versions): all of it or nothing. Returns the number of versions restored.
    @discardableResult
    public func restoreSnapshot(
        from url: URL, format: String, versionCount: Int, released: Set<RecordLocation> = []
    ) throws -> Int {
        switch format {
        case SnapshotArchive.format, SnapshotArchive.formatWithReleased:
            try restoreSnapshot(from: url, released: released)
            return history.count
        case ZipV1Snapshot.format:
            _ = try snapshotStorage()
            try reloadHistory()
            guard history.isEmpty else { throw StoreError.storeNotEmpty(path: rootURL.path) }
            let importer = try ZipV1Importer(archive: try ZipArchiveReader(path: url.path))
            let count = try importer.importAll(into: self, expectedCount: versionCount)
            releaseInBackground(importer)
            return count
        default:
            throw StoreError.corruptFile(
                path: url.path, reason: "snapshot format \(format) is not one this build reads")
        }
    }
}
