import Foundation

/// Exchanges versions over any `CloudFileSystem`, in the remote layout LLVS apps use (llvs-format.md), under a
/// base path. Versions travel many at once; a version's changes file goes up before its version file, and only
/// versions with a version file count as present, so an interrupted send is simply completed next time.
public struct CloudFileSystemExchange: Exchange {
    public let store: Store
    public let fileSystem: any CloudFileSystem
    /// The folder on the file system that holds `versions/`, `changes/` and `snapshots/` ("" for its root).
    public let basePath: String
    public let concurrency: Int
    public let progress: (@Sendable (ExchangeProgress) -> Void)?

    public init(store: Store, fileSystem: any CloudFileSystem, basePath: String = "", concurrency: Int = 8,
                progress: (@Sendable (ExchangeProgress) -> Void)? = nil) {
        self.store = store
        self.fileSystem = fileSystem
        self.basePath = basePath
        self.concurrency = concurrency
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

    public func fetchVersion(_ id: Version.ID) async throws -> Version {
        let path = try file(RemoteFormat.versionsFolder, id)
        return try RemoteFormat.decodeVersion(try await fileSystem.download(path), path: path)
    }

    /// A changes file holds the version's values and can be any size: it goes to a temporary file, which the
    /// shared retrieve reads as a stream, so no connector has to hold it (or refuse it) in memory.
    public func changesLocation(of id: Version.ID) -> String { path(RemoteFormat.changesFolder, id.rawValue) }

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

    public func send(_ version: Version, changes: EncodedChanges) async throws {
        let changesPath = try file(RemoteFormat.changesFolder, version.id)
        switch changes {
        case .data(let data): try await fileSystem.upload(data, to: changesPath)
        case .file(let url, _): try await fileSystem.upload(fileAt: url, to: changesPath)
        }
        try await fileSystem.upload(try RemoteFormat.encodeVersion(version), to: try file(RemoteFormat.versionsFolder, version.id))
    }
}
