import Foundation
import LLVSCodecs
import LLVSSupport

/// An exchange that can also carry snapshots: a consistent copy of a whole store that a new device restores
/// instead of pulling every version.
public protocol SnapshotExchange: Exchange {
    /// The manifest of the remote's current snapshot, or nil when there is none.
    func snapshotManifest() async throws -> SnapshotManifest?
    /// Uploads a snapshot of the store in `format` (chunks, then the manifest), then removes the previous one,
    /// whatever its format.
    func sendSnapshot(format: String) async throws -> SnapshotManifest
    /// Downloads the snapshot `manifest` describes into a local file, checking sizes and SHA-256.
    func downloadSnapshot(_ manifest: SnapshotManifest, to url: URL) async throws
    /// The records an `llvs-bundles-v2` snapshot holds as released (none for another format).
    func releasedRecords(of manifest: SnapshotManifest) async throws -> Set<RecordLocation>
}

extension SnapshotExchange {
    /// Uploads a snapshot in the format every LLVS device restores (`zip-v1`).
    public func sendSnapshot() async throws -> SnapshotManifest { try await sendSnapshot(format: ZipV1Snapshot.format) }
}

/// What a bootstrap did.
public enum BootstrapOutcome: Sendable, Equatable {
    /// The snapshot was restored; what came after it was then synced.
    case restored(SnapshotManifest)
    /// The remote has no snapshot; a full sync was done.
    case noSnapshot
    /// The snapshot's format is not one this build reads (LLVS apps write `zip-v1`); a full sync was done.
    case skippedUnreadableFormat(String)
    /// The snapshot could not be used (a damaged chunk, a failed download); `reason` says why, and every version was
    /// pulled instead, so one bad chunk never stops a new device from starting.
    case fellBackToFullPull(reason: String)

    public var message: String {
        switch self {
        case .restored(let manifest):
            "Restored snapshot \(manifest.snapshotId) (\(manifest.versionCount) versions), then synced what came after."
        case .noSnapshot: "The remote has no snapshot; pulled every version instead."
        case .skippedUnreadableFormat(let format):
            "Skipped the remote's snapshot: its format \(format) is not one this build reads; pulled every version instead."
        case .fellBackToFullPull(let reason):
            "Warning: the remote's snapshot could not be used (\(reason)); pulled every version instead."
        }
    }
}

extension CloudFileSystemExchange: SnapshotExchange {
    var manifestPath: String { path("snapshots", "manifest.json") }

    public func snapshotManifest() async throws -> SnapshotManifest? {
        let data: Data
        do { data = try await fileSystem.download(manifestPath) } catch CloudFileSystemError.notFound { return nil }
        let manifest: SnapshotManifest
        do { manifest = try JSONDecoder().decode(SnapshotManifest.self, from: data) } catch {
            throw ExchangeError.malformedFile(path: manifestPath, reason: RemoteFormat.describe(error))
        }
        try manifest.validate(path: manifestPath)
        return manifest
    }

    public func sendSnapshot(format: String) async throws -> SnapshotManifest {
        let temporary = store.temporaryFile("snapshot")
        defer { try? FileManager.default.removeItem(at: temporary) }
        let summary = try store.writeSnapshot(to: temporary, format: format)
        let previous = try? await snapshotManifest()
        let manifest = SnapshotManifest(
            snapshotId: UUID().uuidString, format: summary.format, createdAt: Date().timeIntervalSinceReferenceDate,
            latestVersionId: summary.latestVersionId, versionCount: summary.versionCount,
            chunkCount: SnapshotManifest.chunkCount(forTotalSize: summary.size), totalSize: summary.size,
            sha256: summary.sha256)
        let snapshotId = manifest.snapshotId
        let file = try ReadableFile(path: temporary.path)
        let fileSystem = self.fileSystem
        let folder = path("snapshots", snapshotId)
        await removeAbandonedSnapshotUploads()
        let record = SnapshotUploadRecord(
            snapshotId: snapshotId, folder: folder, remote: remoteIdentity, writer: TemporaryWriter.tag)
        try record.save(in: store)
        // Chunks first, many at once; each is read from the local file only when its upload starts. The manifest,
        // which names them, goes up only after all of them.
        let results = await mapConcurrently(Array(0..<manifest.chunkCount), limit: concurrency) { index in
            let data = try file.read(at: manifest.offset(ofChunk: index), count: manifest.size(ofChunk: index))
            try await fileSystem.upload(data, to: CloudPath.join(folder, SnapshotManifest.chunkName(index)))
        }
        for result in results { try result.get() }
        // What the snapshot holds as released goes up before the manifest too.
        if !summary.released.isEmpty {
            try await fileSystem.upload(
                ReleasedRecordList.snapshotEncoding(summary.released), to: CloudPath.join(folder, Self.releasedName))
        }

        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        try await fileSystem.upload(try encoder.encode(manifest), to: manifestPath)
        record.remove(from: store)
        // Only now, with the new manifest in place, does the old snapshot go.
        // The previous snapshot's folder goes (whatever its format), when its ID is one that can name a folder here.
        if let previous, previous.snapshotId != snapshotId, previous.hasSafeID {
            try await fileSystem.removeFolder(path("snapshots", previous.snapshotId))
        }
        if previous?.format == Self.legacyChunkedFormat { try await removeLegacyChunks() }
        await removeOrphanSnapshotFolders(keeping: snapshotId)
        return manifest
    }

    /// The file beside an `llvs-bundles-v2` snapshot's chunks that lists its released records.
    static let releasedName = "released"

    public func releasedRecords(of manifest: SnapshotManifest) async throws -> Set<RecordLocation> {
        guard manifest.format == SnapshotArchive.formatWithReleased else { return [] }
        try manifest.validate(path: manifestPath)
        let path = path("snapshots", manifest.snapshotId, Self.releasedName)
        return try ReleasedRecordList.decodeSnapshotList(try await fileSystem.download(path), path: path)
    }

    /// The format of older LLVS, whose chunks lie directly in `snapshots/` (`chunk-000`, …) rather than in a folder.
    static let legacyChunkedFormat = "fileStorage-v1"

    /// Removes the chunks an older LLVS left directly in `snapshots/`, once a new snapshot replaces theirs.
    func removeLegacyChunks() async throws {
        for item in try await fileSystem.list(path("snapshots")) where !item.isFolder && item.name.hasPrefix("chunk-") {
            try await fileSystem.removeFile(path("snapshots", item.name))
        }
    }

    /// Who this remote is, for the store's records of it.
    var remoteIdentity: String { cursorFile?.identity ?? "" }

    /// Removes the folders of this remote's snapshot uploads that a process of this machine began and did not finish
    /// (killed, crashed), and their records. Best effort: a failure leaves the record for the next exchange.
    func removeAbandonedSnapshotUploads() async {
        for record in SnapshotUploadRecord.all(in: store) where record.remote == remoteIdentity && record.isAbandoned {
            do {
                try await fileSystem.removeFolder(record.folder)
            } catch CloudFileSystemError.notFound {
            } catch {
                continue
            }
            record.remove(from: store)
        }
    }

    /// How old a snapshot folder the manifest does not name must be before it counts as abandoned: another device may
    /// be uploading chunks into a new one right now (its manifest comes last).
    static let orphanAge: TimeInterval = 3600

    /// Removes snapshot folders no manifest names, left by uploads that were killed or failed part way. Only folders
    /// known to be older than `orphanAge` go; failures here never fail the snapshot.
    func removeOrphanSnapshotFolders(keeping current: String) async {
        guard let items = try? await fileSystem.list(path("snapshots")) else { return }
        let cutoff = Date().addingTimeInterval(-Self.orphanAge)
        for item in items where item.isFolder && item.name != current {
            guard let modified = item.modified, modified < cutoff else { continue }
            try? await fileSystem.removeFolder(path("snapshots", item.name))
        }
    }

    public func downloadSnapshot(_ manifest: SnapshotManifest, to url: URL) async throws {
        guard manifest.isReadable else {
            throw ExchangeError.malformedFile(
                path: manifestPath, reason: "its format \(manifest.format) is not one this build reads")
        }
        try manifest.validate(path: manifestPath)
        let folder = path("snapshots", manifest.snapshotId)
        let writer = try AtomicFileWriter(destination: url.path)
        let file = writer.positional
        let hash = DigestStream(.sha256)
        do {
            let fileSystem = self.fileSystem
            let window = max(1, concurrency)
            let destination = URL(fileURLWithPath: file.path)
            // A sliding window of `window` chunks in flight. Snapshots are cut at fixed offsets, so each chunk is
            // downloaded straight into its place in the file (where the connector can, with no buffer of its own), and
            // the next one starts as soon as any arrives: a slow chunk holds back no other. Only the hash must see the
            // chunks in order: each is read back from the file when its turn comes, a MiB at a time.
            let written = try ReadableFile(appendedFileAt: file.path)
            try await withThrowingTaskGroup(of: Int.self) { group in
                var started = 0
                func startNext() {
                    let index = started
                    started += 1
                    group.addTask {
                        let chunkPath = CloudPath.join(folder, SnapshotManifest.chunkName(index))
                        do {
                            try await fileSystem.download(
                                chunkPath, into: destination, at: manifest.offset(ofChunk: index),
                                length: Int64(manifest.size(ofChunk: index)))
                        } catch CloudFileSystemError.sizeMismatch(_, let expected, let received) {
                            let held = received > expected ? "more than \(expected)" : "\(received)"
                            throw ExchangeError.malformedFile(
                                path: chunkPath,
                                reason: "\(held) bytes; a snapshot of \(manifest.totalSize) bytes "
                                    + "cut into chunks of \(SnapshotManifest.maximumChunkSize) bytes has \(expected) here"
                            )
                        }
                        return index
                    }
                }
                while started < min(window, manifest.chunkCount) { startNext() }
                var arrived = Set<Int>()
                var hashed = 0
                while let index = try await group.next() {
                    if started < manifest.chunkCount { startNext() }
                    arrived.insert(index)
                    while arrived.remove(hashed) != nil {
                        let (start, size) = (manifest.offset(ofChunk: hashed), manifest.size(ofChunk: hashed))
                        var done = 0
                        while done < size {
                            let piece = min(1 << 20, size - done)
                            hash.update(try written.read(at: start + Int64(done), count: piece))
                            done += piece
                        }
                        hashed += 1
                    }
                }
            }
            let digest = hash.finalizeHex()
            if let expected = manifest.sha256, expected.lowercased() != digest {
                throw ExchangeError.malformedFile(
                    path: folder, reason: "the snapshot's SHA-256 is \(digest), the manifest says \(expected)")
            }
            try writer.commit(durable: false)
        } catch {
            writer.discard()
            throw error
        }
    }
}
