import Foundation
import LLVSSupport

/// Exchanges through a shared folder (a mounted share, a synced folder) in the LLVS remote layout, readable by
/// LLVS apps' own `FileSystemExchange`. A version counts as present only when both its files are there.
public struct FileSystemExchange: Exchange {
    public let store: Store
    public let rootURL: URL
    public let concurrency: Int

    public init(rootDirectoryURL: URL, store: Store, concurrency: Int = 8) {
        self.rootURL = rootDirectoryURL
        self.store = store
        self.concurrency = concurrency
    }

    private func path(_ folder: String, _ id: Version.ID) throws -> String {
        try RemoteFormat.checkFileName(id.rawValue)
        return rootURL.path + "/" + folder + "/" + id.rawValue
    }

    public func remoteVersionIds() async throws -> Set<Version.ID> {
        let versions = try POSIX.listNames(rootURL.path + "/" + RemoteFormat.versionsFolder)
        let changes = Set(try POSIX.listNames(rootURL.path + "/" + RemoteFormat.changesFolder))
        return Set(versions.filter(changes.contains).map(Version.ID.init))
    }

    public func fetchVersion(_ id: Version.ID) async throws -> Version {
        let path = try path(RemoteFormat.versionsFolder, id)
        return try codec.decodeVersion(try POSIX.readFile(path), path: path)
    }

    public func changesLocation(of id: Version.ID) -> String {
        rootURL.path + "/" + RemoteFormat.changesFolder + "/" + id.rawValue
    }

    public func fetchChanges(of id: Version.ID) async throws -> EncodedChanges {
        let path = try path(RemoteFormat.changesFolder, id)
        guard POSIX.fileExists(path) else { throw ExchangeError.missingOnRemote(id) }
        return .file(URL(fileURLWithPath: path), owned: false)
    }

    public func send(_ version: Version, changes: EncodedChanges) async throws {
        let changesPath = try path(RemoteFormat.changesFolder, version.id)
        let versionPath = try path(RemoteFormat.versionsFolder, version.id)
        try POSIX.makeDirectories((changesPath as NSString).deletingLastPathComponent)
        try POSIX.makeDirectories((versionPath as NSString).deletingLastPathComponent)
        try write(changes, to: changesPath)
        try POSIX.writeAtomically(try codec.encodeVersion(version), to: versionPath)
    }

    /// A shared folder keeps no index beside the changes: every reader there reads the files whole.
    private func write(_ changes: EncodedChanges, to changesPath: String) throws {
        switch changes {
        case .data(let data): try POSIX.writeAtomically(data, to: changesPath)
        case .file(let url, _): try POSIX.copyAtomically(url.path, to: changesPath)
        case .staged(let url): throw ExchangeError.stagedChangesNotReadable(path: url.path)
        case .indexed(let changes, _): try write(changes, to: changesPath)
        }
    }
}
