import Foundation
import LLVSSupport
import Testing

@testable import LLVS

/// The compact remote format: values travel as the store keeps them (compressed or not, small or past the inline
/// limit), every kind of change round-trips, a damaged file is refused naming it, and the remote's record decides the
/// format for every device.
@Suite struct CompactRemoteTests {
    let directory = TemporaryDirectory()

    func exchange(_ store: Store, _ remote: LocalFolderFileSystem) -> CloudFileSystemExchange {
        CloudFileSystemExchange(
            store: store, fileSystem: remote, basePath: "sync", concurrency: 4, codec: CompactRemoteCodec())
    }

    @Test(arguments: StorageKind.allCases) func everyKindOfChangeRoundTrips(storage: StorageKind) async throws {
        let remote = LocalFolderFileSystem(root: directory.child("remote-\(storage)"))
        let a = try makeStore(in: directory, name: "a-\(storage)", storage: storage)
        let b = try makeStore(in: directory, name: "b-\(storage)", storage: storage)
        let text = Data(String(repeating: "compressible text, ", count: 400_000).utf8)  // past the inline limit
        let noise = SeededGenerator.bytes(Int(Store.inlineValueLimit) + 100, seed: 9)  // past it, and incompressible
        let root = try a.makeVersion(
            basedOnPredecessor: nil,
            inserting: [
                Value(id: "small", data: Data("s".utf8)), Value(id: "text", data: text),
                Value(id: "noise", data: noise),
            ])
        let left = try a.makeVersion(
            basedOnPredecessor: root.id, updating: [Value(id: "small", data: Data("left".utf8))])
        let right = try a.makeVersion(basedOnPredecessor: root.id, removing: ["noise"])
        let merged = try a.merge(version: left.id, with: right.id)
        #expect(try await exchange(a, remote).send().failures.isEmpty)
        let report = try await exchange(b, remote).retrieve()
        #expect(report.failures.isEmpty && report.retrieved.count == 4)
        for version in [root.id, left.id, right.id, merged.id] {
            #expect(try b.values(at: version) == a.values(at: version))
        }
        #expect(try b.value(id: "text", at: root.id)?.data == text)
        // No base64, no JSON: the changes file holds the text compressed and the noise as it is.
        let changes = try await remote.download("sync/changes/\(root.id.rawValue)")
        #expect(changes.starts(with: Data("LLVSCHG1".utf8)))
        #expect(changes.count < noise.count + text.count / 10)
    }

    /// A value whose bytes a prune released goes as released, on both storages: the receiver has the same maps (the
    /// value, its size), lists the record as released, and sends it on the same way; the other values arrive whole.
    @Test(arguments: StorageKind.allCases) func aReleasedValueTravelsAsReleased(storage: StorageKind) async throws {
        let a = try makeStore(in: directory, name: "a-\(storage)", storage: storage)
        let kept = SeededGenerator.bytes(20_000, seed: 1)
        let root = try a.makeVersion(
            basedOnPredecessor: nil,
            inserting: [Value(id: "kept", data: kept), Value(id: "gone", data: SeededGenerator.bytes(30_000, seed: 2))])
        let next = try a.makeVersion(basedOnPredecessor: root.id, removing: ["gone"])
        let gone = try #require(try a.storedEntry(id: "gone", at: root.id))
        try a.listReleased([gone.location])
        _ = try a.releaseRecords([gone.location])
        #expect(throws: (any Error).self) { try a.readStoredValue(gone) { _ in } }

        var stores = [a]
        for hop in 1...2 {
            let remote = LocalFolderFileSystem(root: directory.child("remote-\(storage)-\(hop)"))
            let receiver = try makeStore(in: directory, name: "hop-\(hop)-\(storage)", storage: storage)
            #expect(try await exchange(stores[hop - 1], remote).send().failures.isEmpty)
            let report = try await exchange(receiver, remote).retrieve()
            #expect(report.failures.isEmpty && report.retrieved.count == 2)
            #expect(try receiver.valueSize(id: "gone", at: root.id) == 30_000)
            #expect(try receiver.value(id: "kept", at: next.id)?.data == kept)
            #expect(try receiver.value(id: "gone", at: next.id) == nil)
            let received = try #require(try receiver.storedEntry(id: "gone", at: root.id))
            #expect(try receiver.releasedRecords().contains(received.location))
            stores.append(receiver)
        }
        // The upstream form cannot say "released": it refuses, naming the value.
        #expect(throws: ExchangeError.releasedValue(version: root.id, value: "gone")) {
            try a.encodedChanges(madeInVersionIdentifiedBy: root.id)
        }
    }

    @Test func aCutOrDamagedChangesFileIsRefusedByName() throws {
        let store = try makeStore(in: directory, name: "store")
        let version = try store.makeVersion(
            basedOnPredecessor: nil, inserting: [Value(id: "v", data: Data(repeating: 3, count: 10_000))])
        let encoded = try CompactRemoteCodec().encodeChanges(
            madeInVersionIdentifiedBy: version.id, in: store, stager: nil
        ).data()
        var damaged = encoded
        damaged[20] ^= 0x40
        for bytes in [encoded.dropLast(3), damaged, encoded + Data([0])] {
            #expect(throws: ExchangeError.self) {
                try CompactRemoteCodec().decodeChanges(
                    .data(Data(bytes)), path: "changes/x", temporaryDirectory: directory.url)
            }
        }
        let decoded = try CompactRemoteCodec().decodeChanges(
            .data(encoded), path: "changes/x", temporaryDirectory: directory.url)
        #expect(decoded.stored.count == 1 && decoded.stored[0].size == 10_000 && decoded.stored[0].encoding == .zstd)
    }

    /// A value that claims another size than its bytes hold is refused before anything is stored.
    @Test func aValueThatLiesAboutItsSizeIsNotStored() throws {
        let store = try makeStore(in: directory, name: "store")
        let root = Version(id: "root", predecessors: nil, valueDataSize: 10)
        let compressed = StoredRecord.compressedIfSmaller(Data(repeating: 1, count: 5000)).bytes
        let lie = ReceivedValue(id: "v", isUpdate: false, size: 10, encoding: .zstd, bytes: .data(compressed))
        #expect(throws: StoreError.self) {
            try store.addVersion(root, receiving: ReceivedChanges(changes: [], stored: [lie]))
        }
        #expect(store.history.count == 0)
    }

    @Test func theRecordDecidesAndAFormatFromANewerBuildStops() async throws {
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        // An empty remote becomes what was preferred, recorded; every later look agrees, whatever it prefers.
        #expect(try await RemoteFormatRecord.settle(on: remote, basePath: "a").name == "compact")
        #expect(try await RemoteFormatRecord.settle(on: remote, basePath: "a", preferred: "upstream").name == "compact")
        await #expect(
            throws: ExchangeError.remoteFormatMismatch(path: "a/llvs-remote.json", holds: "compact", asked: "upstream")
        ) {
            _ = try await RemoteFormatRecord.settle(on: remote, basePath: "a", required: "upstream")
        }
        // A remote that holds versions without a record is upstream (LLVS apps and earlier builds wrote it).
        try await remote.upload(Data("{}".utf8), to: "b/versions/V1")
        #expect(try await RemoteFormatRecord.settle(on: remote, basePath: "b").name == "upstream")
        // A build that meets a format, or a version of one, it does not know stops before reading anything.
        for record in [#"{"format":"compact","version":2}"#, #"{"format":"columnar","version":1}"#] {
            try await remote.upload(Data(record.utf8), to: "c/llvs-remote.json")
            await #expect(throws: ExchangeError.self) {
                _ = try await RemoteFormatRecord.settle(on: remote, basePath: "c")
            }
        }
        do {
            _ = try await RemoteFormatRecord.settle(on: remote, basePath: "c")
        } catch let error as ExchangeError {
            #expect("\(error)".contains("a newer llvs wrote it"))
        }
    }

    /// Two devices that settled one empty remote in the same instant with different formats each write their own
    /// changes files; every device reads both, whichever codec it settled on.
    @Test func changesFilesOfBothFormatsOnOneRemoteAreReadByEitherCodec() async throws {
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let a = try makeStore(in: directory, name: "a", storage: .file)
        let text = Data(String(repeating: "a line that compresses well\n", count: 4_000).utf8)
        let first = try a.makeVersion(basedOnPredecessor: nil, inserting: [Value(id: "text", data: text)])
        let upstream = CloudFileSystemExchange(
            store: a, fileSystem: remote, basePath: "sync", concurrency: 4, codec: UpstreamRemoteCodec())
        #expect(try await upstream.send().failures.isEmpty)
        let second = try a.makeVersion(
            basedOnPredecessor: first.id, updating: [Value(id: "text", data: text + Data("more\n".utf8))])
        #expect(try await exchange(a, remote).send().failures.isEmpty)
        #expect(try await remote.download("sync/changes/\(first.id.rawValue)").starts(with: Data("[".utf8)))
        #expect(try await remote.download("sync/changes/\(second.id.rawValue)").starts(with: Data("LLVSCHG1".utf8)))
        for codec in [CompactRemoteCodec() as any RemoteCodec, UpstreamRemoteCodec()] {
            let b = try makeStore(in: directory, name: "b-\(codec.name)", storage: .file)
            let report = try await CloudFileSystemExchange(
                store: b, fileSystem: remote, basePath: "sync", concurrency: 4, codec: codec
            ).retrieve()
            #expect(report.failures.isEmpty && report.retrieved.count == 2, "\(codec.name): \(report.failures)")
            #expect(try b.value(id: "text", at: second.id)?.data == text + Data("more\n".utf8))
        }
    }
}
