import Foundation
import Testing
import LLVSSQLite
@testable import LLVS
import LLVSSupport

@Suite struct StorageTests {
    let directory = TemporaryDirectory()

    func versionFile(_ store: Store, _ id: Version.ID) -> String {
        (store.storage as! FileStorage).path(for: id)
    }

    @Test func aTruncatedVersionFileIsNamedWhenOpening() throws {
        let url = directory.child("store")
        let path: String
        do {
            let store = try Store(creatingAt: url)
            let v1 = try store.save(nil, insert: ["a": "1"])
            path = versionFile(store, v1.id)
        }
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: path))
        try handle.truncate(atOffset: 20)
        try handle.close()
        #expect {
            try Store(openingAt: url)
        } throws: { error in
            guard case StoreError.corruptFile(let named, _) = error else { return false }
            return named == path
        }
    }

    @Test func aDamagedRecordIsDetectedByItsChecksum() throws {
        let store = try makeStore(in: directory)
        let v1 = try store.save(nil, insert: ["a": String(repeating: "z", count: 100)])
        let path = versionFile(store, v1.id)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[RecordFraming.recordHeaderSize + 10] ^= 0xff  // inside the value's data, the file's first record
        try bytes.write(to: URL(fileURLWithPath: path))
        let reopened = try Store(openingAt: store.rootURL)
        #expect {
            try reopened.value(id: "a", at: v1.id)
        } throws: { error in
            guard case StoreError.corruptFile(let named, let reason) = error else { return false }
            return named == path && reason.contains("checksum")
        }
    }

    /// Reading many changes at once (neighbouring records in one request) gives what reading each alone gives, in
    /// the order asked, and still checks every record.
    @Test(arguments: StorageKind.allCases) func changesReadTogetherAreThoseReadOneByOne(storage: StorageKind) throws {
        let store = try makeStore(in: directory, storage: storage)
        let v1 = try store.save(nil, insert: Self.runOfValues)
        let v2 = try store.save(v1.id, update: ["v010": "changed", "v200": "changed too"], remove: ["v100"])
        for (from, to) in [(nil, v1.id), (v1.id, v2.id)] {
            let list = try store.valueChangeList(madeBetween: from, and: to)
            let oneByOne = try (0..<list.count).map { try list.change(at: $0) }
            let indices = Array((0..<list.count).reversed()) + [0, 0]
            #expect(try list.changes(at: indices) == indices.map { oneByOne[$0] })
            #expect(oneByOne == (try store.valueChanges(madeBetween: from, and: to)))
        }
    }

    /// 300 values of growing sizes, stored one after the other in a version's file.
    static let runOfValues = Dictionary(
        uniqueKeysWithValues: (0..<300).map { (String(format: "v%03d", $0), String(repeating: "x", count: $0 * 7)) })

    /// A damaged byte inside a run of records read together is found by that record's checksum.
    @Test func aDamagedRecordInsideARunReadTogetherIsNamed() throws {
        let store = try makeStore(in: directory, storage: .file)
        let v1 = try store.save(nil, insert: Self.runOfValues)
        let path = versionFile(store, v1.id)
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[RecordFraming.recordHeaderSize * 3 + 50] ^= 0xff  // inside one of the first records, read within a span
        try bytes.write(to: URL(fileURLWithPath: path))
        let reopened = try Store(openingAt: store.rootURL)
        let list = try reopened.valueChangeList(madeBetween: nil, and: v1.id)
        #expect {
            try list.changes(at: Array(0..<list.count))
        } throws: { error in
            guard case StoreError.corruptFile(let named, _) = error else { return false }
            return named == path
        }
    }

    /// Versions committed in a group (a bulk receive) are readable at once in this process, and in place and
    /// durable for any process after the group ends, including those of a batch made durable before the end.
    @Test(arguments: StorageKind.allCases) func groupedCommitsAreReadableAtOnceAndInPlaceAfterTheGroup(
        storage: StorageKind
    ) throws {
        let store = try makeStore(in: directory, storage: storage)
        store.storage.beginGroupedCommits()
        var head: Version.ID?
        let count = GroupedCommits.batchSize + 8
        for i in 0..<count { head = try store.save(head, insert: ["v\(i)": "\(i)"]).id }
        let last = try #require(head)
        #expect(try store.value(id: "v7", at: last)?.string == "7")
        if storage == .file {
            // The first batch is in place already; the last few wait for the group's end under temporary names.
            let placed = try Store(openingAt: store.rootURL, makeStorage: SQLiteStorage.storageMaker).history.count
            #expect(placed == GroupedCommits.batchSize)
        }
        try store.storage.endGroupedCommits()
        let reopened = try openStore(store.rootURL)
        #expect(reopened.history.count == count)
        #expect(try reopened.strings(at: last).count == count)
        if storage == .file {
            // Two packs (the first batch, then the rest), no version files, and nothing left under a temporary name.
            let packs = try FileManager.default.contentsOfDirectory(atPath: store.rootURL.path + "/packs")
            #expect(packs.count == 2 && packs.allSatisfy { $0.hasSuffix(FileStorage.packExtension) }, "\(packs)")
            let files = try FileManager.default.subpathsOfDirectory(atPath: store.rootURL.path + "/versions").filter {
                $0.contains("/")
            }
            #expect(files.isEmpty, "\(files)")
        }
    }

    /// A store synced often holds a pack per sync that received anything: more packs than a process may keep open
    /// are all readable, and no more than a bounded number are open at once.
    @Test func manyPacksAreReadWithABoundedNumberOpen() throws {
        let store = try makeStore(in: directory, storage: .file)
        var head: Version.ID?
        for index in 0..<100 {
            store.storage.beginGroupedCommits()
            head = try store.save(head, insert: ["v\(index)": "\(index)"]).id
            try store.storage.endGroupedCommits()
        }
        let packs = try FileManager.default.contentsOfDirectory(atPath: store.rootURL.path + "/packs")
        #expect(packs.count == 100)
        let reopened = try openStore(store.rootURL)
        let last = try #require(head)
        for index in 0..<100 { #expect(try reopened.value(id: Value.ID("v\(index)"), at: last)?.string == "\(index)") }
        for version in reopened.history.versions.keys { _ = try reopened.storedVersion(version) }
        let storage = try #require(reopened.storage as? FileStorage)
        #expect(storage.openPackCount <= 64)
    }

    /// A version larger than a group holds in memory becomes a version file of its own (its bytes written once), placed
    /// right after the pack of the versions before it; the versions after it go to a new pack. A second commit of it is
    /// refused as one that exists. Everything reads back, before and after the group ends.
    @Test func aLargeVersionInAGroupIsItsOwnFileBetweenPacks() throws {
        let store = try makeStore(in: directory, storage: .file)
        store.storage.beginGroupedCommits()
        // Bytes that do not compress, so the record is as large as the value.
        let large = SeededGenerator.bytes(SpillingBundle.memoryLimit + 12345, seed: 5)
        let first = try store.save(nil, insert: ["small": "1"])
        try store.addVersion(
            Version(id: "big", predecessors: .init(idOfFirst: first.id), valueDataSize: Int64(large.count)),
            storing: [.insert(Value(id: "large", data: large))])
        let last = try store.save("big", insert: ["after": "2"])
        #expect(try store.value(id: "large", at: last.id)?.data == large)
        #expect(throws: StoreError.versionAlreadyExists("big")) {
            try store.storage.makeVersionWriter(for: "big")
        }
        try store.storage.endGroupedCommits()
        let packs = try FileManager.default.contentsOfDirectory(atPath: store.rootURL.path + "/packs")
        #expect(packs.count == 2 && packs.allSatisfy { $0.hasSuffix(FileStorage.packExtension) }, "\(packs)")
        let files = try FileManager.default.subpathsOfDirectory(atPath: store.rootURL.path + "/versions").filter {
            $0.contains("/")
        }
        #expect(files.count == 1 && !files[0].contains(".tmp-"), "\(files)")
        let reopened = try openStore(store.rootURL)
        #expect(reopened.history.count == 3)
        #expect(try reopened.value(id: "large", at: last.id)?.data == large)
        #expect(try reopened.strings(at: last.id)["small"] == "1")
    }

    @Test func aGarbageDescriptorIsReported() throws {
        let url = directory.child("store")
        _ = try Store(creatingAt: url)
        try Data("{nope".utf8).write(to: url.appendingPathComponent(StoreDescriptor.fileName))
        #expect(throws: StoreError.self) { try Store(openingAt: url) }
    }

    func runHelper(_ arguments: [String]) throws -> (ChildProcess, Pipe) {
        let process = ChildProcess()
        process.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        process.executableURL = TestPaths.builtProduct("llvs-test-helper")
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        return (process, pipe)
    }

    /// Reads "saved i id" lines from the child until `count` arrived or it ended.
    func readSaved(_ pipe: Pipe, atLeast count: Int) -> [String] {
        var buffer = Data()
        var lines: [String] = []
        while lines.count < count {
            let chunk = pipe.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            buffer.append(chunk)
            lines = String(decoding: buffer, as: UTF8.self).split(separator: "\n").map(String.init)
        }
        return lines
    }

    @Test(arguments: StorageKind.allCases)
    func aChildKilledMidSaveLeavesTheLastCompleteState(storage: StorageKind) throws {
        // The kill lands at a seeded random moment; the seed is in every failure message.
        let seed = UInt64.random(in: 1...UInt64.max)
        var generator = SeededGenerator(seed: seed)
        for round in 0..<5 {
            let url = directory.child("killed-\(round)")
            _ = try makeStore(at: url, storage: storage)
            // Enough saves that the kill lands among them, and few enough that a child the kill missed ends.
            let (process, pipe) = try runHelper(["save-loop", url.path, "v", "400", "300000"])
            let seen = readSaved(pipe, atLeast: 3 + round)
            usleep(UInt32.random(in: 0...20_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let printed = seen.count + readSaved(pipe, atLeast: .max).count

            let store = try openStore(url)
            let count = store.history.count
            // Every printed save is there; at most the one in flight landed besides.
            #expect(count >= printed && count <= printed + 1, "seed \(seed), round \(round)")
            #expect(store.heads.count == 1, "seed \(seed), round \(round)")
            let head = try #require(store.mostRecentHead)
            #expect(try store.valueCount(at: head.id) == count)
            for value in try store.values(at: head.id) { #expect(value.data.count == 300_000) }
            // The store takes new saves after the crash, and the killed writer's temporary file is gone.
            _ = try store.save(head.id, insert: ["after": "crash"])
            if storage == .file {
                let leftovers = try FileManager.default.subpathsOfDirectory(
                    atPath: url.appendingPathComponent("versions").path
                )
                .filter { ($0 as NSString).lastPathComponent.hasPrefix(".tmp-") }
                #expect(leftovers.isEmpty)
            }
        }
    }

    @Test(arguments: StorageKind.allCases)
    func twoProcessesWriteOneStore(storage: StorageKind) throws {
        let url = directory.child("shared")
        let store = try makeStore(at: url, storage: storage)
        let a = try runHelper(["save-loop", url.path, "a", "40"])
        let b = try runHelper(["save-loop", url.path, "b", "40"])
        a.0.waitUntilExit()
        b.0.waitUntilExit()
        #expect(a.0.terminationStatus == 0 && b.0.terminationStatus == 0)
        let added = try store.reloadHistory()
        #expect(added.count == 80)
        #expect(store.heads.count == 2)
        for head in store.heads {
            let values = try store.values(at: head)
            #expect(values.count == 40)
        }
    }

    @Test func aFileThatIsNotSQLiteIsRefusedAndLeftAlone() throws {
        let url = directory.child("store")
        _ = try makeStore(at: url, storage: .sqlite)
        let database = url.appendingPathComponent(SQLiteStorage.fileName)
        for file in try FileManager.default.contentsOfDirectory(atPath: url.path)
        where file.hasPrefix(SQLiteStorage.fileName) {
            try FileManager.default.removeItem(at: url.appendingPathComponent(file))
        }
        let garbage = Data((0..<4096).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        try garbage.write(to: database)
        #expect {
            try openStore(url)
        } throws: { error in
            guard case StoreError.corruptFile(let path, let reason) = error else { return false }
            return path == database.path && reason.contains("not a SQLite database")
        }
        #expect(try Data(contentsOf: database) == garbage)
        #expect(!FileManager.default.fileExists(atPath: database.path + "-wal"))
    }

    @Test func aDamagedSQLiteDatabaseGivesAnErrorNotACrash() throws {
        let url = directory.child("store")
        do {
            let store = try makeStore(at: url, storage: .sqlite)
            var values: [String: String] = [:]
            for i in 0..<3000 { values["k\(i)"] = String(repeating: "v", count: 200) }
            _ = try store.save(nil, insert: values)
        }
        let database = url.appendingPathComponent(SQLiteStorage.fileName)
        var bytes = try Data(contentsOf: database)
        // Keep the header page, scribble over the rest.
        for i in stride(from: 4096, to: bytes.count, by: 7) { bytes[i] = 0xA5 }
        try bytes.write(to: database)
        #expect {
            let store = try openStore(url)
            for head in store.heads { _ = try store.values(at: head) }
        } throws: { error in
            switch error {
            case StoreError.corruptFile(let path, _), StoreError.database(let path, _, _): path == database.path
            default: false
            }
        }
    }

    @Test func aMissingDatabaseIsNotSilentlyRecreated() throws {
        let url = directory.child("store")
        _ = try makeStore(at: url, storage: .sqlite)
        try FileManager.default.removeItem(at: url.appendingPathComponent(SQLiteStorage.fileName))
        #expect(throws: StoreError.self) { try openStore(url) }
        #expect(!FileManager.default.fileExists(atPath: url.appendingPathComponent(SQLiteStorage.fileName).path))
    }
}
