import Foundation
import LLVS
import LLVSSupport

/// A store made from a remote without bringing its values over: every version file is read and each version's map
/// built from its index (`CompactChangesIndex`, `indexes/<id>`), with each value placed at its byte range in the
/// version's changes file (`RemoteValueStorage`), so a value costs a ranged read only when someone reads it
/// (`llvs mount --from`). A version without an index (sent by a build that wrote none, or by an LLVS app) or whose
/// index describes another changes file than the one there (a prune by such a build rewrote it) has its changes read
/// whole, as a pull reads them. The store lives in a folder of its own, which `remove()` deletes.
///
/// ```swift
/// let opened = try await RemoteBackedStore.open(fileSystem: remote, basePath: "", codec: CompactRemoteCodec(), in: folder)
/// let value = try opened.store.value(id: "a", at: head)   // one ranged read of changes/<version that stored it>
/// ```
public struct RemoteBackedStore: Sendable {
    public let store: Store
    public let storage: RemoteValueStorage
    /// The store's folder (versions and map nodes only).
    public let folder: URL
    /// Versions placed from their index.
    public let placedVersions: Int
    /// Versions whose changes were read whole.
    public let versionsReadWhole: Int
    /// Versions left out, with why: a version that could not be read, and its descendants.
    public let failures: [ExchangeFailure]
    /// Indexes written for versions read whole (`writingMissingIndexes`), and those that could not be.
    public let indexesWritten: Int
    public let indexesNotWritten: [ExchangeFailure]

    /// Records kept for a second read, in bytes, unless told otherwise.
    public static let defaultCacheLimit = 64 << 20

    /// With `writingMissingIndexes`, a compact changes file read whole for want of a usable index gets one, made from
    /// the very bytes read (`CompactChangesReader.index(of:)`), so the next reader places that version too (a remote
    /// sent by builds before indexes gains them once). Writing one can fail (a read-only account): it is reported in
    /// `indexesNotWritten`, and the store is made all the same.
    public static func open(
        fileSystem: any CloudFileSystem, basePath: String, codec: any RemoteCodec, in folder: URL,
        cacheLimit: Int = defaultCacheLimit, concurrency: Int = 8, writingMissingIndexes: Bool = false
    ) async throws -> RemoteBackedStore {
        let versionsFolder = CloudPath.join(basePath, RemoteFormat.versionsFolder)
        let names = try await fileSystem.listNames(versionsFolder).filter { !$0.hasPrefix(".") }
        guard !names.isEmpty else { throw RemoteStoreError.emptyRemote(path: versionsFolder) }
        for name in names { try RemoteFormat.checkFileName(name) }
        let changesSizes = try await sizes(in: CloudPath.join(basePath, RemoteFormat.changesFolder), of: fileSystem)
        let indexed = Set(
            try await sizes(in: CloudPath.join(basePath, CompactChangesIndex.folder), of: fileSystem).keys)

        let reader = RemoteRecordReader(fileSystem: fileSystem, basePath: basePath, cacheLimit: cacheLimit)
        let store = try Store(
            creatingAt: folder, descriptor: StoreDescriptor(storage: "file"),
            makeStorage: { root, _, _ in RemoteValueStorage(local: try FileStorage(storeRoot: root), reader: reader) })
        do {
            guard let storage = store.storage as? RemoteValueStorage else { throw RemoteStoreError.readOnly }
            let fetched = await mapConcurrently(names, limit: concurrency) { name in
                let path = CloudPath.join(versionsFolder, name)
                return try codec.decodeVersion(try await fileSystem.download(path), path: path)
            }
            var versions: [Version] = []
            var failures: [ExchangeFailure] = []
            for (name, result) in zip(names, fetched) {
                switch result {
                case .success(let version): versions.append(version)
                case .failure(let error): failures.append(ExchangeFailure(versionId: Version.ID(name), error: error))
                }
            }
            let ordered = CloudFileSystemExchange.orderedForAdding(versions, present: store.history)
            let exchange = CloudFileSystemExchange(
                store: store, fileSystem: fileSystem, basePath: basePath, concurrency: concurrency, codec: codec)
            var counts = (placed: 0, whole: 0, indexed: 0)
            var indexesNotWritten: [ExchangeFailure] = []
            try await store.receivingInBulk {
                var failed = Set(failures.map(\.versionId))
                await forEachConcurrentlyInOrder(ordered, limit: concurrency, ahead: 4 * concurrency) { version in
                    try await Self.changes(
                        of: version, exchange: exchange, indexed: indexed,
                        changesSize: changesSizes[version.id.rawValue], writingIndex: writingMissingIndexes)
                } consume: { version, result in
                    if let blocked = version.predecessors?.ids.first(where: failed.contains) {
                        (try? result.get())?.discard()
                        failed.insert(version.id)
                        failures.append(
                            ExchangeFailure(versionId: version.id, error: ExchangeError.predecessorFailed(blocked)))
                        return
                    }
                    do {
                        switch try result.get() {
                        case .indexed(let index):
                            try Self.add(version, from: index, to: store, storage: storage)
                            counts.placed += 1
                        case .whole(let received, let indexWrite):
                            defer { received.discard() }
                            try store.addVersion(version, receiving: received)
                            counts.whole += 1
                            switch indexWrite {
                            case .none: break
                            case .some(.success): counts.indexed += 1
                            case .some(.failure(let error)):
                                indexesNotWritten.append(ExchangeFailure(versionId: version.id, error: error))
                            }
                        }
                    } catch {
                        failed.insert(version.id)
                        failures.append(ExchangeFailure(versionId: version.id, error: error))
                    }
                }
            }
            return RemoteBackedStore(
                store: store, storage: storage, folder: folder, placedVersions: counts.placed,
                versionsReadWhole: counts.whole, failures: failures, indexesWritten: counts.indexed,
                indexesNotWritten: indexesNotWritten)
        } catch {
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
    }

    /// Deletes the store's folder.
    public func remove() { try? FileManager.default.removeItem(at: folder) }

    private enum FetchedChanges: Sendable {
        case indexed(CompactChangesIndex)
        /// The changes read whole, and how writing their index went (nil: not asked, or not a compact file).
        case whole(ReceivedChanges, indexWrite: Result<Void, any Error>?)

        func discard() { if case .whole(let received, _) = self { received.discard() } }
    }

    /// A version's index when it has one that describes its changes file as listed, else its changes read whole.
    private static func changes(
        of version: Version, exchange: CloudFileSystemExchange, indexed: Set<String>, changesSize: Int64??,
        writingIndex: Bool
    ) async throws -> FetchedChanges {
        if indexed.contains(version.id.rawValue) {
            let path = exchange.indexLocation(of: version.id)
            let index = try CompactChangesIndex.decode(try await exchange.fileSystem.download(path), path: path)
            // Trusted when the changes file is listed with its size, or listed without one (a listing that gives no
            // sizes cannot tell; every range is still checked against its CRC-32 when read). A changes file not
            // listed at all is asked for whole, which says what is wrong.
            if let listed = changesSize, (listed ?? index.changesSize) == index.changesSize {
                return .indexed(index)
            }
        }
        let encoded = try await exchange.fetchChanges(of: version)
        defer { encoded.discard() }
        let path = exchange.changesLocation(of: version.id)
        let received = try exchange.codec.decodeChanges(
            encoded, path: path, temporaryDirectory: exchange.store.temporaryDirectory)
        // An upstream (JSON) changes file has no index to give.
        guard writingIndex, let index = try? CompactChangesReader.index(of: encoded, path: path) else {
            return .whole(received, indexWrite: nil)
        }
        do {
            try await exchange.fileSystem.upload(
                .data(index.encoded()), to: exchange.indexLocation(of: version.id), mode: .replace)
            return .whole(received, indexWrite: .success(()))
        } catch {
            return .whole(received, indexWrite: .failure(error))
        }
    }

    private static func add(
        _ version: Version, from index: CompactChangesIndex, to store: Store, storage: RemoteValueStorage
    ) throws {
        var placed: [PlacedValue] = []
        var changes: [Value.Change] = []
        for (number, entry) in index.entries.enumerated() {
            switch entry {
            case .value(let id, let isUpdate, let encoding, let size, let offset, let length, let crc32):
                let location = RecordLocation(versionId: version.id, offset: offset, length: length)
                storage.place(location, as: RemoteRecord(encoding: encoding, crc32: crc32))
                placed.append(PlacedValue(id: id, isUpdate: isUpdate, size: size, location: location))
            case .released(let id, let isUpdate, let size):
                // No bytes anywhere: a place of its own past the end of the file, which the store lists as released.
                let location = RecordLocation(
                    versionId: version.id, offset: index.changesSize + Int64(number), length: 0)
                storage.place(location, as: .released)
                placed.append(
                    PlacedValue(id: id, isUpdate: isUpdate, size: size, location: location, isReleased: true))
            case .remove, .preserve, .preserveRemoval:
                if let change = entry.changeWithoutData { changes.append(change) }
            }
        }
        try store.addVersion(version, placing: placed, changes: changes)
    }

    /// The files of a remote folder and their listed sizes; none when the folder is not there.
    private static func sizes(in folder: String, of fileSystem: any CloudFileSystem) async throws -> [String: Int64?] {
        do {
            let items = try await fileSystem.list(folder)
            return Dictionary(
                items.filter { !$0.isFolder && !$0.name.hasPrefix(".") }.map { ($0.name, $0.size) },
                uniquingKeysWith: { first, _ in first })
        } catch CloudFileSystemError.notFound {
            return [:]
        }
    }
}
