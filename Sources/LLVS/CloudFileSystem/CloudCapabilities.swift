import Foundation
import LLVSSupport

/// What a connector declares about its service, so that callers and the conformance suite read the service's
/// rules from the connector instead of keeping constants per service in tests.
public struct CloudCapabilities: Sendable, Equatable {
    /// The checksums the service reports for every stored file; the conformance suite verifies each against what
    /// was uploaded. Empty when the service reports none (the suite then downloads and hashes).
    public var checksums: Set<ChecksumAlgorithm>
    /// Whether two names differing only in case name the same item (OneDrive, Box).
    public var caseInsensitiveNames: Bool
    /// Whether two names differing only in Unicode normalization (a composed `é` and `e` + U+0301) name the same
    /// item, though the service keeps each as written (OneDrive). Where false they are two items, as on a Linux disk.
    public var canonicallyEquivalentNamesCollide = false
    /// The reversible encoding the connector applies to names the service refuses; nil when it takes any name.
    public var nameEncoding: NameEncoding?
    /// The largest file sent in one request; larger files go through the resumable path. Nil when there is none.
    public var simpleUploadLimit: Int64?
    /// Pieces of a resumable upload are multiples of this many bytes (Drive 256 KiB, OneDrive 320 KiB).
    public var chunkGranularity: Int64?
    /// Whether a folder with nothing in it exists. False where folders are only the prefixes of the files' names (an S3
    /// server that keeps keys as files, as `rclone serve s3`): `makeFolder` then makes nothing, and a folder is gone
    /// once its last file is. Nothing LLVS writes needs an empty folder; the conformance suite checks folders made by
    /// files instead.
    public var keepsEmptyFolders = true
    /// Whether the service itself refuses an upload in `.create` mode when a file is there (S3's `If-None-Match: *`,
    /// Dropbox's `add` mode, a link or a rename that never replaces), so of two devices creating one name at once
    /// exactly one succeeds; for files sent in one request (a larger one is looked for first). Where false the
    /// connector looks first, and a race may let both write.
    public var exclusiveCreate = false

    public init(
        checksums: Set<ChecksumAlgorithm> = [], caseInsensitiveNames: Bool = false, nameEncoding: NameEncoding? = nil,
        simpleUploadLimit: Int64? = nil, chunkGranularity: Int64? = nil
    ) {
        self.checksums = checksums
        self.caseInsensitiveNames = caseInsensitiveNames
        self.nameEncoding = nameEncoding
        self.simpleUploadLimit = simpleUploadLimit
        self.chunkGranularity = chunkGranularity
    }

    /// A file system that declares nothing: exact names, no checksums.
    public static let plain = CloudCapabilities()
}
