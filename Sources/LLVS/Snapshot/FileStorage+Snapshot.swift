import Foundation
#if canImport(Glibc)
import Glibc
#endif

extension FileStorage: SnapshotCapable {
    public func writeBundles(of versions: [Version.ID], to archive: SnapshotArchiveWriter) throws {
        // Version files never change once written, so copying the files of a fixed list is a consistent copy
        // while other saves go on.
        for id in versions { try archive.append(bundleFile: try ReadableFile(path: path(for: id))) }
    }

    public func restoreBundles(from archive: SnapshotArchiveReader) throws {
        let headers = try checkedHeaders(of: archive)
        guard try newlyCommittedVersionsPeek().isEmpty else {
            throw StoreError.invalidChanges(headers.first?.version.id ?? "", reason: "a snapshot can only be restored into an empty store")
        }
        // Everything goes into a staging folder first; it replaces the empty versions folder in one rename.
        let staging = stagingPath()
        try POSIX.makeDirectories(staging)
        do {
            for (entry, header) in zip(archive.entries, headers) {
                let destination = staging + path(for: header.version.id).dropFirst(versionsPath.count)
                try POSIX.makeDirectories((destination as NSString).deletingLastPathComponent)
                let writer = try AtomicFileWriter(destination: destination)
                do {
                    try archive.copy(entry, to: writer)
                    try writer.commit(replacing: false, durable: false)
                } catch {
                    writer.discard()
                    throw error
                }
            }
            try syncFileSystem(of: staging)
            try replaceEmptyVersionsFolder(with: staging)
        } catch {
            try? POSIX.removeTree(staging)
            throw error
        }
    }

    /// Version files present on disk (without marking them loaded).
    private func newlyCommittedVersionsPeek() throws -> [String] {
        try POSIX.listNames(versionsPath).filter { $0.count == 2 }.flatMap { try POSIX.listNames(versionsPath + "/" + $0) }
    }

    func stagingPath() -> String {
        (versionsPath as NSString).deletingLastPathComponent + "/" + Self.stagingPrefix + UUID().uuidString
    }

    static let stagingPrefix = "versions-restoring-"

    /// One `sync` makes every restored file durable, instead of one fsync per version (thousands of them).
    /// (`syncfs`, which would limit it to this file system, is not visible to Swift through Glibc.)
    private func syncFileSystem(of path: String) throws {
        sync()
    }

    private func replaceEmptyVersionsFolder(with staging: String) throws {
        for folder in try POSIX.listNames(versionsPath, includingHidden: true) {
            guard rmdir(versionsPath + "/" + folder) == 0 else { throw POSIX.fail(versionsPath + "/" + folder, "remove the empty folder") }
        }
        guard rmdir(versionsPath) == 0 else { throw POSIX.fail(versionsPath, "remove the empty folder") }
        guard rename(staging, versionsPath) == 0 else { throw POSIX.fail(versionsPath, "move the restored versions into place") }
        try POSIX.syncDirectory((versionsPath as NSString).deletingLastPathComponent)
    }
}
