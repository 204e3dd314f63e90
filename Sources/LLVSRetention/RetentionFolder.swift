import Foundation
import LLVS
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a prune keeps in the store's folder, under `retention/`, beside the versions: the collection its first step
/// made (the records it found unneeded, waiting for the second step) and the lock a backup shares and a release takes
/// alone. The list of released records belongs to the store (`Store.releasedRecords`): exchanges read it too.
///
/// The collection is local on purpose, as duplicacy keeps its fossil collections: the second step frees this store's
/// records, so the store that collected them finishes the work.
public struct RetentionFolder: Sendable {
    public let path: String

    public init(store: Store) { path = store.rootURL.path + "/retention" }

    var collectionPath: String { path + "/collection.json" }

    // MARK: The collection

    public func collection() throws -> PruneCollection? {
        guard FileManager.default.fileExists(atPath: collectionPath) else { return nil }
        let data = try POSIX.readFile(collectionPath)
        let decoder = JSONDecoder()
        decoder.dateDecodingStrategy = .iso8601
        do {
            let collection = try decoder.decode(PruneCollection.self, from: data)
            guard collection.format == PruneCollection.currentFormat else {
                throw StoreError.corruptFile(
                    path: collectionPath, reason: "collection format \(collection.format) is not one this build reads")
            }
            return collection
        } catch let error as DecodingError {
            throw StoreError.corruptFile(path: collectionPath, reason: "it is not a prune collection (\(error))")
        }
    }

    func save(_ collection: PruneCollection) throws {
        try POSIX.makeDirectories(path)
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        encoder.dateEncodingStrategy = .iso8601
        try POSIX.writeAtomically(try encoder.encode(collection), to: collectionPath)
    }

    func removeCollection() throws {
        guard unlink(collectionPath) == 0 || errno == ENOENT else {
            throw FileError.io(path: collectionPath, operation: "remove", errno: errno)
        }
    }

    // MARK: The lock

    /// Held shared by every backup while it runs and alone by a release, so records are never released under a
    /// backup of this store that may name them. An advisory lock (`flock`): the kernel drops it when its holder dies.
    public final class Lock: Sendable {
        private let fd: Int32

        init(path: String, exclusive: Bool, wait: Bool) throws {
            try POSIX.makeDirectories((path as NSString).deletingLastPathComponent)
            fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644)
            guard fd >= 0 else { throw FileError.io(path: path, operation: "open", errno: errno) }
            let operation = (exclusive ? LOCK_EX : LOCK_SH) | (wait ? 0 : LOCK_NB)
            while flock(fd, operation) != 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                if code == EWOULDBLOCK { throw RetentionError.storeBusy }
                throw FileError.io(path: path, operation: "lock", errno: code)
            }
        }

        deinit { close(fd) }
    }

    /// The lock a backup holds while it runs (it waits for a release in progress, which is short).
    public func backupLock() throws -> Lock { try Lock(path: path + "/lock", exclusive: false, wait: true) }

    /// The lock a release needs; `storeBusy` while a backup of this store runs.
    func releaseLock() throws -> Lock { try Lock(path: path + "/lock", exclusive: true, wait: false) }
}

/// What the first step of a prune found, kept until the second step frees it.
public struct PruneCollection: Codable, Equatable, Sendable {
    public static let currentFormat = 1
    public var format = PruneCollection.currentFormat
    /// When the first step ran (by this machine's clock; compared only with backups' dates, days apart).
    public var created: Date
    /// The version the first step committed (it removes the unneeded chunks and listings from the current version):
    /// a backup that descends from it cannot name them without writing them again.
    public var version: String
    /// Every version the store had then: each must be on every remote before records go, since sending a version
    /// reads the records its changes hold.
    public var versions: [String]
    /// The records no kept backup needed, as `version offset length`.
    public var records: [Record]
    /// For a prune `--before`: the date from which versions were kept whole (the release marks the same way).
    public var before: Date?

    public struct Record: Codable, Equatable, Sendable {
        public var version: String
        public var offset: Int64
        public var length: Int64

        var location: RecordLocation {
            RecordLocation(versionId: Version.ID(version), offset: offset, length: length)
        }
    }
}

/// Why retention could not go on, for a caller to switch on.
public enum RetentionError: Error, Equatable, CustomStringConvertible {
    /// A backup of this store is running (it holds the store's retention lock).
    case storeBusy

    public var description: String {
        switch self {
        case .storeBusy: "a backup of this store is running"
        }
    }
}
