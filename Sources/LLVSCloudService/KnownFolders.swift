import Foundation
import LLVS
import Synchronization

/// For services addressed by path (WebDAV, OneDrive): the folders known to exist (made or seen), so an upload does
/// not probe every parent each time, and each missing folder made once however many uploads want it at once.
/// `caseInsensitive` for services whose names ignore case.
public final class KnownFolders: Sendable {
    private let known = Mutex<Set<String>>([""])
    private let making = SingleFlight<Void>()
    private let keys: PathKeys
    public var caseInsensitive: Bool { keys.caseInsensitive }

    public init(caseInsensitive: Bool = false, canonicallyEquivalentNamesCollide: Bool = false) {
        keys = PathKeys(
            caseInsensitive: caseInsensitive, canonicallyEquivalentNamesCollide: canonicallyEquivalentNamesCollide)
    }

    private func key(_ components: some Collection<String>) -> String { keys.key(components) }

    public func contains(_ components: some Collection<String>) -> Bool {
        let key = key(components)
        return known.withLock { $0.contains(key) }
    }

    /// Records a folder seen to exist, and so every folder above it.
    public func remember(_ components: [String]) {
        known.withLock { known in
            for depth in components.indices { known.insert(key(components[...depth])) }
        }
    }

    /// Drops a folder and everything below it (removed, or found missing).
    public func forget(_ components: [String]) {
        let prefix = key(components)
        known.withLock { folders in
            folders = folders.filter { $0.isEmpty || !keys.key($0, isAtOrBelow: prefix) }
        }
    }

    /// Makes sure every folder of `components` exists, calling `make` (parent first) for each one not known, once
    /// per folder however many callers ask at the same moment.
    public func ensure(_ components: [String], make: @escaping @Sendable ([String]) async throws -> Void) async throws {
        for depth in components.indices {
            let prefix = Array(components[...depth])
            if contains(prefix) { continue }
            try await making.run(key(prefix)) {
                if self.contains(prefix) { return }
                try await make(prefix)
                self.remember(prefix)
            }
        }
    }

    /// Runs `body` once the folders of `parent` exist (made by `make` where not known). When `body` finds the parent
    /// gone (`notFound` or `parentMissing`: removed since it was known), it is forgotten and made again, and `body`
    /// runs once more.
    public func intoFolder<T>(
        _ parent: [String], make: @escaping @Sendable ([String]) async throws -> Void,
        _ body: () async throws -> T
    ) async throws -> T {
        try await ensure(parent, make: make)
        do {
            return try await body()
        } catch let error as CloudFileSystemError where error.isMissingFolder {
            forget(parent)
            try await ensure(parent, make: make)
            return try await body()
        }
    }
}
