import Foundation
import LLVSSupport

/// A remote held in memory, shared by the stores that exchange through it. For tests and for apps that
/// move versions between stores in one process.
public actor MemoryRemote {
    private var versions: [Version.ID: Version] = [:]
    private var changes: [Version.ID: Data] = [:]

    /// An empty remote.
    public init() {}

    /// The versions it holds.
    public var versionIds: Set<Version.ID> { Set(versions.keys) }

    func version(_ id: Version.ID) throws -> Version {
        guard let version = versions[id] else { throw ExchangeError.missingOnRemote(id) }
        return version
    }

    func changes(of id: Version.ID) throws -> Data {
        guard let changes = changes[id] else { throw ExchangeError.missingOnRemote(id) }
        return changes
    }

    func put(_ version: Version, changes: Data) {
        self.changes[version.id] = changes
        versions[version.id] = version
    }
}

/// Exchanges a store's versions with a `MemoryRemote`.
public struct MemoryExchange: Exchange {
    public let store: Store
    /// The remote it exchanges with.
    public let remote: MemoryRemote
    public let concurrency: Int

    /// An exchange between `store` and `remote`, `concurrency` transfers at a time.
    public init(store: Store, remote: MemoryRemote, concurrency: Int = 8) {
        self.store = store
        self.remote = remote
        self.concurrency = concurrency
    }

    public func remoteVersionIds() async throws -> Set<Version.ID> { await remote.versionIds }
    public func fetchVersion(_ id: Version.ID) async throws -> Version { try await remote.version(id) }
    public func fetchChanges(of id: Version.ID) async throws -> EncodedChanges {
        .data(try await remote.changes(of: id))
    }
    public func send(_ version: Version, changes: EncodedChanges) async throws {
        await remote.put(version, changes: try changes.data())
    }
}
