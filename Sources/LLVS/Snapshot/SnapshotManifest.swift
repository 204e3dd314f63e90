import Foundation
import LLVSCodecs
import LLVSSupport

/// Describes the snapshot on a remote (`snapshots/manifest.json`), with LLVS's fields.
public struct SnapshotManifest: Codable, Sendable, Equatable {
    public var snapshotId: String
    /// What the chunks hold: `zip-v1` (what LLVS apps write, and this package by default) or `llvs-bundles-v1` (this
    /// package's own, by choice). A reader that does not know the format skips the snapshot and syncs normally.
    public var format: String
    /// Seconds since 2001-01-01, as LLVS encodes dates.
    public var createdAt: TimeInterval
    public var latestVersionId: Version.ID
    public var versionCount: Int
    public var chunkCount: Int
    public var totalSize: Int64
    /// Lowercase hex SHA-256 of the whole snapshot; optional when reading.
    public var sha256: String?

    public static let maximumChunkSize = 5_000_000

    public init(
        snapshotId: String, format: String, createdAt: TimeInterval, latestVersionId: Version.ID,
        versionCount: Int, chunkCount: Int, totalSize: Int64, sha256: String?
    ) {
        self.snapshotId = snapshotId
        self.format = format
        self.createdAt = createdAt
        self.latestVersionId = latestVersionId
        self.versionCount = versionCount
        self.chunkCount = chunkCount
        self.totalSize = totalSize
        self.sha256 = sha256
    }

    /// Whether this build reads the snapshot's chunks. Any other format is skipped before any check of the rest:
    /// its sizes and chunks follow its own rules (an LLVS app's zip-v1 may hold chunks of any size).
    public var isReadable: Bool { Self.readableFormats.contains(format) }

    /// The formats this build reads: LLVS apps' `zip-v1` and this package's `llvs-bundles-v1`.
    public static let readableFormats = [
        ZipV1Snapshot.format, SnapshotArchive.format, SnapshotArchive.formatWithReleased,
    ]

    /// Whether `snapshotId` is safe to use as a folder name on the remote (1 to 128 ASCII letters, digits, - or _).
    public var hasSafeID: Bool {
        !snapshotId.isEmpty && snapshotId.count <= 128
            && snapshotId.unicodeScalars.allSatisfy {
                $0.isASCII && (CharacterSet.alphanumerics.contains($0) || $0 == "-" || $0 == "_")
            }
    }

    /// The rules LLVS applies before trusting a manifest of a format this build reads, plus bounds that keep a
    /// hostile one from asking for absurd work; a manifest of another format passes unread. `path` names the
    /// manifest in errors.
    public func validate(path: String) throws {
        guard isReadable else { return }
        func invalid(_ reason: String) -> ExchangeError { .malformedFile(path: path, reason: reason) }
        guard hasSafeID else {
            throw invalid("snapshotId must be 1 to 128 ASCII letters, digits, - or _")
        }
        guard totalSize >= 0, versionCount >= 0, chunkCount >= 0 else {
            throw invalid("sizes and counts must not be negative")
        }
        let needed = Self.chunkCount(forTotalSize: totalSize)
        guard chunkCount >= needed, Int64(chunkCount) <= max(1, totalSize) else {
            throw invalid(
                "\(chunkCount) chunks cannot hold \(totalSize) bytes at most \(Self.maximumChunkSize) bytes each")
        }
        if let sha256, !(sha256.count == 64 && sha256.allSatisfy { $0.isHexDigit }) {
            throw invalid("sha256 must be 64 hex digits")
        }
    }

    /// How many chunks a snapshot of `totalSize` bytes is cut into.
    public static func chunkCount(forTotalSize totalSize: Int64) -> Int {
        Int((totalSize + Int64(maximumChunkSize) - 1) / Int64(maximumChunkSize))
    }

    /// Where chunk `index` starts in the snapshot: LLVS cuts a snapshot at every `maximumChunkSize` bytes.
    public func offset(ofChunk index: Int) -> Int64 { Int64(index) * Int64(Self.maximumChunkSize) }

    /// How many bytes chunk `index` holds: `maximumChunkSize`, less for the last (none for any beyond it).
    public func size(ofChunk index: Int) -> Int {
        Int(max(0, min(Int64(Self.maximumChunkSize), totalSize - offset(ofChunk: index))))
    }

    public static func chunkName(_ index: Int) -> String {
        "chunk-" + String(repeating: "0", count: max(0, 3 - String(index).count)) + String(index)
    }
}
