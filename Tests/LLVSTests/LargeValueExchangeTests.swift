import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// Large values travel between stores through files, streamed in pieces, in exactly the remote format.
@Suite struct LargeValueExchangeTests {
    let directory = TemporaryDirectory()

    func bytes(_ count: Int, seed: UInt64) -> Data { SeededGenerator.bytes(count, seed: seed) }

    @Test(arguments: StorageKind.allCases)
    func aLargeValueIsEncodedToAFileExactlyAsJSONEncoderWouldWriteIt(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let base = try store.makeVersionForTest(
            nil, [Value(id: "small", data: Data("x".utf8)), Value(id: "big/one", data: bytes(300_000, seed: 1))])
        let next = try store.makeVersion(
            basedOnPredecessor: base.id, updating: [Value(id: "big/one", data: bytes(200_001, seed: 2))],
            removing: ["small"])
        for version in [base, next] {
            let encoded = try store.encodedChanges(madeInVersionIdentifiedBy: version.id, inlineLimit: 1024)
            defer { encoded.discard() }
            guard case .file = encoded else { Issue.record("a large value should go through a file"); continue }
            let expected = try RemoteFormat.encodeChanges(try store.valueChanges(madeInVersionIdentifiedBy: version.id))
            #expect(
                try encoded.data() == expected,
                "the streamed encoding differs from JSONEncoder's (sorted keys) byte for byte")
            #expect(
                try RemoteFormat.decodeChanges(try encoded.data(), path: "x")
                    == store.valueChanges(madeInVersionIdentifiedBy: version.id))
        }
    }

    @Test func theReaderStreamsLargeDataToFilesAndDecodesTheRest() throws {
        let big = bytes(3_000_000, seed: 3)
        let changes: [Value.Change] = [
            .insert(Value(id: "a/b", data: big)), .remove("gone"), .update(Value(id: "c", data: Data("small".utf8))),
            .preserve(Value.Reference(valueId: "kept", storedVersionId: "V1")), .preserveRemoval("old"),
        ]
        // Plain JSONEncoder output: `/` written `\/` inside the base64, keys in any order.
        let file = directory.child("changes")
        try JSONEncoder().encode(changes).write(to: file)
        #expect(try Data(contentsOf: file).range(of: Data(#"\/"#.utf8)) != nil)
        let received = try ChangesReader.read(.file(file, owned: false), path: "changes/V2", inlineLimit: 4096)
        defer { received.discard() }
        #expect(received.files.count == 1)
        #expect(received.files.first?.id == "a/b" && received.files.first?.isUpdate == false)
        #expect(try Data(contentsOf: try #require(received.files.first?.url)) == big)
        #expect(received.changes == Array(changes.dropFirst()))
        // A small limit changes nothing for small values; a large one keeps everything inline.
        let inline = try ChangesReader.read(.file(file, owned: false), path: "changes/V2", inlineLimit: 8 << 20)
        #expect(inline.files.isEmpty && inline.changes == changes)
    }

    @Test func aBrokenChangesFileIsNamedAndLeavesNoTemporaryFiles() throws {
        let good = try JSONEncoder().encode([Value.Change.insert(Value(id: "v", data: bytes(100_000, seed: 4)))])
        let scratch = directory.child("scratch")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        for (name, data) in [
            ("truncated", good.prefix(good.count / 2)),
            (
                "not base64",
                Data(#"[{"insert":{"id":"v","data":""#.utf8) + Data(repeating: UInt8(ascii: "!"), count: 9000)
                    + Data(#""}}]"#.utf8)
            ),
            ("trailing", good + Data("x".utf8)), ("not an array", Data(#"{"insert":1}"#.utf8)),
        ] {
            let file = directory.child(name)
            try data.write(to: file)
            #expect(throws: ExchangeError.self, "\(name)") {
                try ChangesReader.read(
                    .file(file, owned: false), path: "changes/\(name)", inlineLimit: 2048, temporaryDirectory: scratch)
            }
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).isEmpty,
            "a failed read leaves no temporary file")
    }

    @Test(arguments: StorageKind.allCases)
    func aVersionWithALargeValueSyncsThroughACloudFolder(storage: StorageKind) async throws {
        let source = try makeStore(in: directory, name: "source", storage: storage)
        let big = bytes(Int(Store.inlineValueLimit) + 123_457, seed: 5)
        let version = try source.makeVersionForTest(
            nil, [Value(id: "big", data: big), Value(id: "small", data: Data("s".utf8))])
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let sent = try await CloudFileSystemExchange(store: source, fileSystem: remote).send()
        #expect(sent.failures.isEmpty)
        let target = try makeStore(in: directory, name: "target", storage: storage)
        let report = try await CloudFileSystemExchange(store: target, fileSystem: remote).retrieve()
        #expect(report.failures.isEmpty)
        #expect(try target.value(id: "big", at: version.id)?.data == big)
        #expect(target.version(identifiedBy: version.id)?.valueDataSize == Int64(big.count + 1))
        // A file exchange takes the same path.
        let shared = FileSystemExchange(rootDirectoryURL: directory.child("shared"), store: source)
        _ = try await shared.send()
        let third = try makeStore(in: directory, name: "third", storage: storage)
        _ = try await FileSystemExchange(rootDirectoryURL: directory.child("shared"), store: third).retrieve()
        #expect(try third.value(id: "big", at: version.id)?.data == big)
    }
}

extension Store {
    func makeVersionForTest(_ predecessor: Version.ID?, _ values: [Value]) throws -> Version {
        try makeVersion(basedOnPredecessor: predecessor, inserting: values)
    }
}
