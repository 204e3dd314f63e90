import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// The default storage: one immutable file per version under `versions/`, written through a temporary name and
/// linked into place, so a version appears whole or not at all and any number of processes can share the folder.
///
/// Files are named by the SHA-256 of the version ID (IDs from a remote may hold any character) and spread over
/// 256 sub-folders so no folder grows huge.
public final class FileStorage: Storage {
    public let kind = "file"
    public let versionsPath: String
    /// File names already returned by `newlyCommittedVersions`.
    private let loadedNames = Mutex<Set<String>>([])
    /// Open version files, kept so repeated reads skip `open`. Bounded; evicted files close when their last reader ends.
    private let openFiles = Mutex<[Version.ID: ReadableFile]>([:])
    private static let openFileLimit = 256

    public init(storeRoot: String) throws {
        versionsPath = storeRoot + "/versions"
        try POSIX.makeDirectories(versionsPath)
        for folder in try POSIX.listNames(versionsPath) where folder.count == 2 {
            try removeAbandonedTemporaryFiles(in: versionsPath + "/" + folder)
        }
        // A restore that died before moving its staging folder into place left the store empty; drop the rest.
        for name in try POSIX.listNames(storeRoot) where name.hasPrefix(Self.stagingPrefix) {
            try POSIX.removeTree(storeRoot + "/" + name)
        }
    }

    func path(for id: Version.ID) -> String {
        let name = SHA256.hexString(SHA256.digest(id.rawValue))
        return versionsPath + "/" + name.prefix(2) + "/" + name
    }

    public func newlyCommittedVersions() throws -> [StoredVersion] {
        var newNames: [(folder: String, name: String)] = []
        let known = loadedNames.withLock { $0 }
        for folder in try POSIX.listNames(versionsPath) where folder.count == 2 {
            for name in try POSIX.listNames(versionsPath + "/" + folder) where !known.contains(name) {
                newNames.append((folder, name))
            }
        }
        var loaded: [StoredVersion] = []
        loaded.reserveCapacity(newNames.count)
        for (folder, name) in newNames {
            let path = versionsPath + "/" + folder + "/" + name
            let header = try RecordFraming.readHeader(of: try ReadableFile(path: path))
            guard self.path(for: header.version.id) == path else {
                throw StoreError.corruptFile(path: path, reason: "it holds version \(header.version.id), whose file name differs")
            }
            loaded.append(header)
        }
        loadedNames.withLock { $0.formUnion(newNames.map(\.name)) }
        return loaded
    }

    public func makeVersionWriter(for id: Version.ID) throws -> any VersionWriter {
        let path = path(for: id)
        if POSIX.fileExists(path) { throw StoreError.versionAlreadyExists(id) }
        try POSIX.makeDirectories((path as NSString).deletingLastPathComponent)
        return try FileVersionWriter(versionId: id, file: AtomicFileWriter(destination: path))
    }

    public func readRecord(at location: RecordLocation, zone: StorageZone) throws -> Data {
        let file = try openFile(location.versionId)
        let framed = try file.read(at: location.offset, count: RecordFraming.recordHeaderSize + Int(location.length))
        return try RecordFraming.unframe(framed, expectedLength: location.length, zone: zone, path: file.path, offset: location.offset)
    }

    private func openFile(_ id: Version.ID) throws -> ReadableFile {
        if let file = openFiles.withLock({ $0[id] }) { return file }
        let file = try ReadableFile(path: path(for: id))
        openFiles.withLock { files in
            if files.count >= Self.openFileLimit { files.removeAll(keepingCapacity: true) }
            files[id] = file
        }
        return file
    }
}

/// Streams one version's records into its temporary file; `commit` appends the header and links the file into place.
final class FileVersionWriter: VersionWriter {
    let versionId: Version.ID
    private let file: AtomicFileWriter

    init(versionId: Version.ID, file: AtomicFileWriter) {
        self.versionId = versionId
        self.file = file
    }

    func append(_ record: Data, zone: StorageZone) throws -> RecordLocation {
        let offset = file.bytesWritten
        try file.write(RecordFraming.frame(record, zone: zone))
        try file.write(record)
        return RecordLocation(versionId: versionId, offset: offset, length: Int64(record.count))
    }

    func commit(_ header: StoredVersion) throws {
        let json = try JSONEncoder().encode(header)
        try file.write(json)
        try file.write(RecordFraming.trailer(headerLength: json.count, headerCRC: json.withUnsafeBytes { CRC32.checksum($0) }))
        do {
            try file.commit(replacing: false)
        } catch StoreError.io(_, _, let code) where code == EEXIST {
            throw StoreError.versionAlreadyExists(versionId)
        }
    }

    func discard() { file.discard() }
}
