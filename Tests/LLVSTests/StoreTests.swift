import Foundation
import Testing
@testable import LLVS
import LLVSSupport

@Suite struct StoreTests {
    let directory = TemporaryDirectory()

    @Test(arguments: StorageKind.allCases) func savesAndReadsValuesAtEveryVersion(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let v1 = try store.save(nil, insert: ["a": "1", "b": "2"])
        let v2 = try store.save(v1.id, insert: ["c": "3"], update: ["a": "1'"], remove: ["b"])
        #expect(try store.strings(at: v1.id) == ["a": "1", "b": "2"])
        #expect(try store.strings(at: v2.id) == ["a": "1'", "c": "3"])
        #expect(try store.value(id: "b", at: v2.id) == nil)
        #expect(try store.value(id: "a", at: v2.id)?.storedVersionId == v2.id)
        #expect(try store.value(id: "c", at: v2.id)?.storedVersionId == v2.id)
        #expect(try store.valueCount(at: v2.id) == 2)
        #expect(v2.valueDataSize == 3)
        #expect(try store.valueReferences(at: v2.id).map(\.valueId) == ["a", "c"])
    }

    @Test(arguments: StorageKind.allCases) func aValueIsWrittenToAFileInPieces(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let big = Data((0..<(3 << 20) + 17).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        let version = try store.makeVersion(
            basedOnPredecessor: nil, inserting: [Value(id: "big", data: big), Value("small", "x")])
        let out = directory.child("out-\(storage)")
        #expect(try store.writeValue(id: "big", at: version.id, to: out))
        #expect(try Data(contentsOf: out) == big)
        #expect(try store.writeValue(id: "missing", at: version.id, to: directory.child("none")) == false)
        #expect(!FileManager.default.fileExists(atPath: directory.child("none").path))
    }

    @Test(arguments: StorageKind.allCases) func localFilesAreStoredAsValues(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let source = directory.child("source-\(storage)")
        let data = Data((0..<(2 << 20) + 5).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try data.write(to: source)
        let v1 = try store.makeVersion(
            basedOn: nil, storing: [.insert(Value("meta", "m"))], files: [("file", source, false)])
        #expect(v1.valueDataSize == Int64(data.count) + 1)
        #expect(try store.value(id: "file", at: v1.id)?.data == data)
        #expect(try store.valueChanges(madeInVersionIdentifiedBy: v1.id).count == 2)
        #expect(throws: StoreError.self) {
            try store.makeVersion(
                basedOn: .init(idOfFirst: v1.id), storing: [.remove("file")], files: [("file", source, true)])
        }
    }

    /// A local file stored as a value is compressed as it is read (file storage streams it; SQLite reads it whole),
    /// and reads back whole, in pieces and by size; one that does not compress is kept as it is.
    @Test(arguments: StorageKind.allCases) func aLocalFileIsStoredCompressedWhenItCompresses(
        storage: StorageKind
    ) throws {
        let store = try makeStore(in: directory, storage: storage)
        let text = Data(String(repeating: "line of a log file that repeats\n", count: 200_000).utf8)  // 6.4 MB
        let noise = SeededGenerator.bytes(3 << 20, seed: 12)
        try text.write(to: directory.child("text"))
        try noise.write(to: directory.child("noise"))
        let version = try store.makeVersion(
            basedOn: nil, storing: [],
            files: [("text", directory.child("text"), false), ("noise", directory.child("noise"), false)])
        #expect(version.valueDataSize == Int64(text.count + noise.count))
        #expect(try store.value(id: "text", at: version.id)?.data == text)
        #expect(try store.valueSize(id: "text", at: version.id) == Int64(text.count))
        #expect(try store.writeValue(id: "text", at: version.id, to: directory.child("out")))
        #expect(try Data(contentsOf: directory.child("out")) == text)
        #expect(try store.value(id: "noise", at: version.id)?.data == noise)
        if storage == .file {
            let stored = try Data(
                contentsOf: URL(fileURLWithPath: (store.storage as! FileStorage).path(for: version.id)))
            #expect(stored.count < noise.count + text.count / 10)
        }
    }

    /// Damage inside a value's record (plain: bytes that do not compress; or compressed) is found before anything is
    /// written out.
    @Test(arguments: [true, false]) func aDamagedValueIsNotWrittenOut(compressible: Bool) throws {
        let store = try makeStore(in: directory)
        let data = compressible ? Data(repeating: 1, count: 500_000) : SeededGenerator.bytes(5000, seed: 3)
        let version = try store.makeVersion(basedOnPredecessor: nil, inserting: [Value(id: "v", data: data)])
        let path = (store.storage as! FileStorage).path(for: version.id)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(bytes.count < 5000 || !compressible)
        bytes[30] ^= 0xff
        try bytes.write(to: URL(fileURLWithPath: path))
        let reopened = try Store(openingAt: store.rootURL)
        let out = directory.child("out")
        #expect(throws: StoreError.self) { try reopened.writeValue(id: "v", at: version.id, to: out) }
        #expect(!FileManager.default.fileExists(atPath: out.path))
    }

    @Test(arguments: StorageKind.allCases) func valuesAreStoredOnceAndReferencedAfter(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let v1 = try store.save(nil, insert: ["kept": "data"])
        let v2 = try store.save(v1.id, insert: ["other": "x"])
        #expect(try store.value(id: "kept", at: v2.id)?.storedVersionId == v1.id)
        #expect(v2.valueDataSize == 1)
    }

    @Test(arguments: StorageKind.allCases) func changesOfRootLinearAndBetweenVersions(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let v1 = try store.save(nil, insert: ["a": "1", "b": "2"])
        let v2 = try store.save(v1.id, insert: ["c": "3"], update: ["a": "x"], remove: ["b"])
        #expect(
            try store.valueChanges(madeInVersionIdentifiedBy: v1.id) == [
                .insert(Value(id: "a", data: Data("1".utf8), storedVersionId: v1.id)),
                .insert(Value(id: "b", data: Data("2".utf8), storedVersionId: v1.id)),
            ])
        #expect(
            try store.valueChanges(madeInVersionIdentifiedBy: v2.id) == [
                .update(Value(id: "a", data: Data("x".utf8), storedVersionId: v2.id)),
                .remove("b"),
                .insert(Value(id: "c", data: Data("3".utf8), storedVersionId: v2.id)),
            ])
        #expect(try store.valueChanges(madeBetween: v2.id, and: v1.id).count == 3)
    }

    @Test(arguments: StorageKind.allCases) func headsAncestryAndMostRecentHead(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let root = try store.save(nil, insert: ["a": "1"], timestamp: 100)
        let left = try store.save(root.id, update: ["a": "L"], timestamp: 200)
        let right = try store.save(root.id, update: ["a": "R"], timestamp: 300)
        #expect(store.heads == [left.id, right.id])
        #expect(store.mostRecentHead?.id == right.id)
        #expect(store.isAncestor(root.id, of: left.id))
        #expect(!store.isAncestor(left.id, of: right.id))
        #expect(try store.greatestCommonAncestor(left.id, right.id) == root.id)
        #expect(try store.greatestCommonAncestor(right.id, left.id) == root.id)
        #expect(try store.greatestCommonAncestor(left.id, left.id) == left.id)
    }

    @Test(arguments: StorageKind.allCases) func greatestCommonAncestorOfACrissCrossIsDeterministic(
        storage: StorageKind
    ) throws {
        let store = try makeStore(in: directory, storage: storage)
        let root = try store.save(nil, insert: ["x": "0"], timestamp: 1)
        let a = try store.save(root.id, insert: ["a": "a"], timestamp: 2)
        let b = try store.save(root.id, insert: ["b": "b"], timestamp: 3)
        // Criss-cross: each side merges the other, so a and b are both greatest common ancestors.
        let ab = try store.makeVersion(basedOn: .init(idOfFirst: a.id, idOfSecond: b.id), storing: [], timestamp: 4)
        let ba = try store.makeVersion(basedOn: .init(idOfFirst: b.id, idOfSecond: a.id), storing: [], timestamp: 5)
        #expect(try store.greatestCommonAncestor(ab.id, ba.id) == b.id)  // the later of the two candidates
        #expect(try store.greatestCommonAncestor(ba.id, ab.id) == b.id)
    }

    @Test(arguments: StorageKind.allCases) func unknownPredecessorAndDuplicateChangesAreRefused(
        storage: StorageKind
    ) throws {
        let store = try makeStore(in: directory, storage: storage)
        #expect(throws: StoreError.missingPredecessor("nope", of: "v")) {
            try store.addVersion(Version(id: "v", predecessors: .init(idOfFirst: "nope")), storing: [])
        }
        #expect(throws: StoreError.self) {
            try store.makeVersion(basedOn: nil, storing: [.insert(Value("a", "1")), .update(Value("a", "2"))])
        }
        #expect(store.history.isEmpty)
    }

    @Test(arguments: StorageKind.allCases) func storeSurvivesReopening(storage: StorageKind) throws {
        let url = directory.child("store")
        let v2: Version
        do {
            let store = try makeStore(at: url, storage: storage)
            let v1 = try store.save(nil, insert: ["a": "1"])
            v2 = try store.save(v1.id, insert: ["b": "2"])
        }
        let reopened = try openStore(url)
        #expect(reopened.history.count == 2)
        #expect(try reopened.strings(at: v2.id) == ["a": "1", "b": "2"])
        #expect(throws: StoreError.alreadyAStore(path: url.path)) { try makeStore(at: url, storage: storage) }
        #expect(throws: StoreError.notAStore(path: directory.child("none").path)) {
            try Store(openingAt: directory.child("none"))
        }
    }

    @Test(arguments: StorageKind.allCases) func versionsSavedByAnotherStoreInstanceAppearAfterReload(
        storage: StorageKind
    ) throws {
        let url = directory.child("store")
        let first = try makeStore(at: url, storage: storage)
        let second = try openStore(url)
        let v1 = try first.save(nil, insert: ["a": "1"])
        #expect(second.version(identifiedBy: v1.id) == nil)
        #expect(try second.reloadHistory() == [v1.id])
        #expect(try second.strings(at: v1.id) == ["a": "1"])
        #expect(try second.reloadHistory().isEmpty)
    }

    @Test(arguments: StorageKind.allCases) func concurrentSavesFromManyTasksAllLand(storage: StorageKind) async throws {
        let store = try makeStore(in: directory, storage: storage)
        let root = try store.save(nil, insert: ["seed": "0"])
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<16 {
                group.addTask { try store.save(root.id, insert: ["k\(i)": "\(i)"]) }
            }
            try await group.waitForAll()
        }
        #expect(store.history.count == 17)
        #expect(store.heads.count == 16)
    }

    @Test(arguments: StorageKind.allCases) func receivedChangesAreCheckedAgainstTheirVersion(
        storage: StorageKind
    ) throws {
        let store = try makeStore(in: directory, storage: storage)
        #expect(
            throws: StoreError.invalidChanges(
                "v", reason: "the version declares 10 bytes of value data but its changes carry 1")
        ) {
            try store.addVersion(Version(id: "v", valueDataSize: 10), storing: [.insert(Value("a", "1"))])
        }
        #expect(throws: StoreError.self) {
            try store.addVersion(Version(id: "v"), storing: [.remove("a")])
        }
        #expect(throws: StoreError.self) {
            try store.addVersion(
                Version(id: "v"), storing: [.preserve(.init(valueId: "a", storedVersionId: "elsewhere"))])
        }
        #expect(store.history.isEmpty)
        try store.addVersion(Version(id: "v", valueDataSize: 1), storing: [.insert(Value("a", "1"))])
        #expect(try store.strings(at: "v") == ["a": "1"])
    }

    /// User data that happens to begin with `LLZF` (the marker older LLVS builds put before LZFSE data) is taken as
    /// it is, as LLVS does with anything that is not a valid LZFSE stream: never refused for its first four bytes.
    @Test(arguments: StorageKind.allCases) func dataBeginningWithTheLZFSEMarkerIsKeptAsItIs(storage: StorageKind) throws
    {
        let store = try makeStore(in: directory, storage: storage)
        let data = Data("LLZF".utf8) + Data(repeating: 7, count: 80)
        try store.addVersion(
            Version(id: "v", valueDataSize: Int64(data.count)), storing: [.insert(Value(id: "z", data: data))])
        #expect(try store.value(id: "z", at: "v")?.data == data)
    }
}

@Suite struct SourceFileTests {
    let directory = TemporaryDirectory()

    /// The bytes a caller hashed are the bytes stored, or nothing is: a wrong expected SHA-256 (the file changed
    /// after it was hashed) fails the save with `sourceChanged` and leaves no version.
    @Test(arguments: StorageKind.allCases) func aFileThatIsNotWhatWasHashedIsNotStored(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let file = directory.url.appendingPathComponent("source.bin")
        let data = Data(repeating: 7, count: 3 << 20)
        try data.write(to: file)
        #expect(throws: StoreError.sourceChanged(path: file.path)) {
            try store.makeVersion(
                basedOn: nil, storing: [], files: [(Value.ID("f"), file, false)],
                expectedSHA256: ["f": SHA256.hex(Data("other".utf8))])
        }
        #expect(store.history.isEmpty)
        let version = try store.makeVersion(
            basedOn: nil, storing: [], files: [(Value.ID("f"), file, false)], expectedSHA256: ["f": SHA256.hex(data)])
        #expect(try store.value(id: "f", at: version.id)?.data == data)
    }
}
