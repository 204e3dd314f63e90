import Foundation
import LLVSConformance
import LLVSRemoteStore
import LLVSSupport
import Synchronization
import Testing

@testable import LLVS

/// Indexes of compact changes files, and a store made from a remote through them (`RemoteBackedStore`): every value of
/// every version reads the same as in the store that sent it, each with a ranged read of its changes file and none
/// twice; versions without a usable index are read whole; a damaged range fails that value alone.
@Suite struct RemoteBackedStoreTests {
    let directory = TemporaryDirectory()

    /// Counts what is asked of a local folder: whole downloads and ranged reads, by folder.
    final class CountingFileSystem: ForwardingFileSystem {
        let base: any CloudFileSystem
        let counts = Mutex<[String: Int]>([:])

        init(base: any CloudFileSystem) { self.base = base }

        private func count(_ what: String, _ path: String) {
            let folder = path.split(separator: "/").dropLast().last.map(String.init) ?? ""
            counts.withLock { $0["\(what) \(folder)", default: 0] += 1 }
        }

        func read(_ path: String, range: ByteRange?) async throws -> Data {
            count(range == nil ? "whole" : "range", path)
            return try await base.read(path, range: range)
        }

        func download(_ path: String, to destination: DownloadDestination) async throws {
            count("whole", path)
            try await base.download(path, to: destination)
        }

        subscript(_ key: String) -> Int { counts.withLock { $0[key, default: 0] } }
    }

    /// A store with every kind of change: small, compressible past the inline limit, incompressible past it, an
    /// update, a removal, a merge that preserves and one whose arbiter wrote a value, an empty value.
    func makeSource() throws -> (Store, [Version.ID]) {
        let store = try makeStore(in: directory, name: "source")
        let text = Data(String(repeating: "compressible text, ", count: 300_000).utf8)
        let noise = SeededGenerator.bytes(Int(Store.inlineValueLimit) + 100, seed: 4)
        let root = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: [
                Value(id: "small", data: Data("s".utf8)), Value(id: "folder/text", data: text),
                Value(id: "noise", data: noise), Value(id: "empty", data: Data()),
            ])
        let left = try store.makeVersion(
            basedOnPredecessor: root.id, updating: [Value(id: "small", data: Data("left".utf8))])
        let right = try store.makeVersion(
            basedOnPredecessor: root.id,
            inserting: [Value(id: "folder/more", data: SeededGenerator.bytes(9_000, seed: 5))],
            removing: ["noise"])
        let merged = try store.merge(version: left.id, with: right.id)
        return (store, [root.id, left.id, right.id, merged.id])
    }

    func push(_ store: Store, to remote: any CloudFileSystem) async throws {
        let exchange = CloudFileSystemExchange(
            store: store, fileSystem: remote, basePath: "sync", concurrency: 4, codec: CompactRemoteCodec())
        #expect(try await exchange.send().failures.isEmpty)
    }

    @Test func eachPushedVersionHasAnIndexThatDescribesItsChangesFile() async throws {
        let (source, versions) = try makeSource()
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        try await push(source, to: remote)
        for version in versions {
            let changes = try await remote.download("sync/changes/\(version.rawValue)")
            let index = try CompactChangesIndex.decode(
                try await remote.download("sync/indexes/\(version.rawValue)"), path: "index")
            #expect(index.changesSize == Int64(changes.count))
            // The entries are the changes, in the file's order, and each range holds the value's stored bytes.
            let received = try CompactRemoteCodec().decodeChanges(
                .data(changes), path: "changes", temporaryDirectory: directory.url)
            var values = received.stored.makeIterator()
            var others = received.changes.makeIterator()
            for entry in index.entries {
                switch entry {
                case .value(let id, let isUpdate, let encoding, let size, let offset, let length, let crc32):
                    let next = values.next()
                    let value = try #require(next)
                    #expect(value.id == id && value.isUpdate == isUpdate && value.size == size)
                    #expect(value.encoding == encoding)
                    let range = changes[Int(offset)..<Int(offset + length)]
                    var crc = CRC32.Running()
                    crc.update(Data(range))
                    #expect(crc.value == crc32)
                    switch value.bytes {
                    case .data(let data): #expect(Data(range) == data)
                    case .file(let url): #expect(Data(range) == (try Data(contentsOf: url)))
                    case .released: Issue.record("no value is released here")
                    }
                case .released: Issue.record("no value is released here")
                case .remove, .preserve, .preserveRemoval:
                    let next = others.next()
                    #expect(entry.changeWithoutData == next)
                }
            }
            let rest = (values.next(), others.next())
            #expect(rest.0 == nil && rest.1 == nil)
        }
        // A changes file gives its own index, which is the one sent; an index that misplaces a value is told.
        for version in versions {
            let changes = EncodedChanges.data(try await remote.download("sync/changes/\(version.rawValue)"))
            let sent = try CompactChangesIndex.decode(
                try await remote.download("sync/indexes/\(version.rawValue)"), path: "index")
            #expect(try CompactChangesReader.index(of: changes, path: "changes") == sent)
            #expect(try sent.mismatches(with: changes, path: "changes").isEmpty)
            var wrong = sent
            if let at = wrong.entries.firstIndex(where: { if case .value = $0 { true } else { false } }),
                case .value(let id, let isUpdate, let encoding, let size, let offset, let length, let crc32) =
                    wrong.entries[at]
            {
                wrong.entries[at] = .value(
                    id: id, isUpdate: isUpdate, encoding: encoding, size: size, offset: offset + 1, length: length,
                    crc32: crc32)
                let told = try wrong.mismatches(with: changes, path: "changes")
                #expect(told.count == 1 && told[0].contains("entry \(at + 1)"), "\(told)")
            }
        }
        // Damage anywhere is refused by name.
        var index = try await remote.download("sync/indexes/\(versions[0].rawValue)")
        index[12] ^= 1
        #expect(throws: ExchangeError.self) { try CompactChangesIndex.decode(index, path: "x") }
    }

    @Test func aRemoteBackedStoreReadsEveryValueByRangeAndEachOnce() async throws {
        let (source, versions) = try makeSource()
        let local = LocalFolderFileSystem(root: directory.child("remote"))
        try await push(source, to: local)
        let remote = CountingFileSystem(base: local)
        let opened = try await RemoteBackedStore.open(
            fileSystem: remote, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("backed"))
        #expect(opened.placedVersions == 4 && opened.versionsReadWhole == 0 && opened.failures.isEmpty)
        #expect(remote["whole changes"] == 0 && remote["range changes"] == 0)
        #expect(opened.store.history.heads == source.history.heads)
        for version in versions {
            #expect(try opened.store.values(at: version) == source.values(at: version))
        }
        let reads = remote["range changes"]
        #expect(reads > 0 && opened.storage.remoteReads.count == reads)
        for version in versions {
            #expect(try opened.store.values(at: version) == source.values(at: version))
        }
        #expect(remote["range changes"] == reads)
        #expect(remote["whole changes"] == 0)
        opened.remove()
        #expect(!FileManager.default.fileExists(atPath: directory.child("backed").path))
    }

    @Test func versionsWithoutAUsableIndexAreReadWhole() async throws {
        let (source, versions) = try makeSource()
        let local = LocalFolderFileSystem(root: directory.child("remote"))
        try await push(source, to: local)
        // No index (an earlier build sent it), and one that describes another changes file (here the upstream form
        // of the same changes, as a device of the other format may write).
        try await local.removeFile("sync/indexes/\(versions[0].rawValue)")
        let upstream = try source.encodedChanges(madeInVersionIdentifiedBy: versions[2]).data()
        try await local.upload(.data(upstream), to: "sync/changes/\(versions[2].rawValue)", mode: .replace)
        let remote = CountingFileSystem(base: local)
        let opened = try await RemoteBackedStore.open(
            fileSystem: remote, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("backed"))
        #expect(opened.placedVersions == 2 && opened.versionsReadWhole == 2 && opened.failures.isEmpty)
        #expect(remote["whole changes"] == 2)
        for version in versions {
            #expect(try opened.store.values(at: version) == source.values(at: version))
        }

        // Asked to, a reader writes the index a compact file lacked (from the bytes it read); the JSON file has none
        // to give. The next reader places that version too.
        let writing = try await RemoteBackedStore.open(
            fileSystem: local, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("writing"),
            writingMissingIndexes: true)
        #expect(writing.indexesWritten == 1 && writing.indexesNotWritten.isEmpty)
        let sent = try CompactChangesIndex.decode(
            try await local.download("sync/indexes/\(versions[0].rawValue)"), path: "index")
        let file = EncodedChanges.data(try await local.download("sync/changes/\(versions[0].rawValue)"))
        #expect(try sent.mismatches(with: file, path: "changes").isEmpty)
        let after = try await RemoteBackedStore.open(
            fileSystem: local, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("after"))
        #expect(after.placedVersions == 3 && after.versionsReadWhole == 1)
        for version in versions {
            #expect(try after.store.values(at: version) == source.values(at: version))
        }
    }

    @Test func aDamagedRangeFailsThatValueAlone() async throws {
        let store = try makeStore(in: directory, name: "source")
        let version = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: [
                Value(id: "a", data: SeededGenerator.bytes(5_000, seed: 1)),
                Value(id: "b", data: SeededGenerator.bytes(5_000, seed: 2)),
            ])
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        try await push(store, to: remote)
        let path = "sync/changes/\(version.id.rawValue)"
        let index = try CompactChangesIndex.decode(
            try await remote.download("sync/indexes/\(version.id.rawValue)"), path: "index")
        let firstValue = index.entries.lazy.compactMap { entry -> (Value.ID, Int64)? in
            if case .value(let id, _, _, _, let offset, _, _) = entry { (id, offset) } else { nil }
        }.first
        let (damagedId, offset) = try #require(firstValue)
        var changes = try await remote.download(path)
        changes[Int(offset) + 100] ^= 0x20
        try await remote.upload(.data(changes), to: path, mode: .replace)
        let opened = try await RemoteBackedStore.open(
            fileSystem: remote, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("backed"))
        #expect(throws: RemoteStoreError.self) { try opened.store.value(id: damagedId, at: version.id) }
        let other: Value.ID = damagedId == "a" ? "b" : "a"
        #expect(try opened.store.value(id: other, at: version.id) == store.value(id: other, at: version.id))
    }

    /// A local folder that tells each ranged read of a changes file as it arrives.
    final class ToldReads: ForwardingFileSystem {
        let base: any CloudFileSystem
        let arrivals = AsyncStream<String>.makeStream()

        init(base: any CloudFileSystem) { self.base = base }

        func read(_ path: String, range: ByteRange?) async throws -> Data {
            if range != nil, path.contains("/changes/") { arrivals.continuation.yield(path) }
            return try await base.read(path, range: range)
        }
    }

    /// A prefetch starts the reads of the values named, without waiting; the reads that follow join them or find
    /// their bytes, so each value still costs one request.
    @Test func aPrefetchStartsTheReadsThatFollowingReadsJoin() async throws {
        let store = try makeStore(in: directory, name: "source")
        let values = (0..<3).map {
            Value(id: Value.ID("v\($0)"), data: SeededGenerator.bytes(50_000, seed: UInt64($0)))
        }
        let version = try store.makeVersion(basedOnPredecessor: nil, inserting: values)
        let local = LocalFolderFileSystem(root: directory.child("remote"))
        try await push(store, to: local)
        let remote = ToldReads(base: local)
        let opened = try await RemoteBackedStore.open(
            fileSystem: remote, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("backed"))
        opened.store.prefetchValues(["v0", "v2", "missing"], at: version.id)
        var arrived = 0
        for await _ in remote.arrivals.stream {
            arrived += 1
            if arrived == 2 { break }
        }
        for value in values {
            #expect(try opened.store.value(id: value.id, at: version.id)?.data == value.data)
        }
        #expect(opened.storage.remoteReads.count == 3)
    }

    /// A store of one version holding "kept" (returned) and "gone".
    func storeWithTwoValues() throws -> (Store, Version, Data) {
        let store = try makeStore(in: directory, name: "source")
        let kept = SeededGenerator.bytes(20_000, seed: 1)
        let root = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: [Value(id: "kept", data: kept), Value(id: "gone", data: SeededGenerator.bytes(30_000, seed: 2))])
        return (store, root, kept)
    }

    /// What a prune does to a value's record: lists it, then releases it.
    func release(_ id: Value.ID, at version: Version, in store: Store) throws {
        let entry = try #require(try store.storedEntry(id: id, at: version.id))
        try store.listReleased([entry.location])
        _ = try store.releaseRecords([entry.location])
    }

    /// A prune's rewrite of a changes file (values released after they were sent) rewrites its index: the version is
    /// still placed from it, and the released value reads as released.
    @Test func aRewrittenChangesFileGetsAFreshIndex() async throws {
        let (store, root, kept) = try storeWithTwoValues()
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        try await push(store, to: remote)
        let before = try await remote.download("sync/indexes/\(root.id.rawValue)")
        try release("gone", at: root, in: store)
        let exchange = CloudFileSystemExchange(
            store: store, fileSystem: remote, basePath: "sync", concurrency: 4, codec: CompactRemoteCodec())
        try await exchange.replaceChanges(of: root)
        #expect(try await remote.download("sync/indexes/\(root.id.rawValue)") != before)
        let opened = try await RemoteBackedStore.open(
            fileSystem: remote, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("backed"))
        #expect(opened.placedVersions == 1 && opened.versionsReadWhole == 0)
        #expect(throws: StoreError.valueReleased("gone", storedIn: root.id)) {
            try opened.store.value(id: "gone", at: root.id)
        }
        #expect(try opened.store.value(id: "kept", at: root.id)?.data == kept)
    }

    @Test func aReleasedValueReadsAsReleased() async throws {
        let (store, root, kept) = try storeWithTwoValues()
        try release("gone", at: root, in: store)
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        try await push(store, to: remote)
        let opened = try await RemoteBackedStore.open(
            fileSystem: remote, basePath: "sync", codec: CompactRemoteCodec(), in: directory.child("backed"))
        #expect(try opened.store.valueSize(id: "gone", at: root.id) == 30_000)
        #expect(throws: StoreError.valueReleased("gone", storedIn: root.id)) {
            try opened.store.value(id: "gone", at: root.id)
        }
        #expect(try opened.store.value(id: "kept", at: root.id)?.data == kept)
    }
}
