import Foundation
import Testing
@testable import LLVS

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
        bytes[RecordFraming.recordHeaderSize + 10] ^= 0xff // inside the value's data, the file's first record
        try bytes.write(to: URL(fileURLWithPath: path))
        let reopened = try Store(openingAt: store.rootURL)
        #expect {
            try reopened.value(id: "a", at: v1.id)
        } throws: { error in
            guard case StoreError.corruptFile(let named, let reason) = error else { return false }
            return named == path && reason.contains("checksum")
        }
    }

    @Test func aGarbageDescriptorIsReported() throws {
        let url = directory.child("store")
        _ = try Store(creatingAt: url)
        try Data("{nope".utf8).write(to: url.appendingPathComponent(StoreDescriptor.fileName))
        #expect(throws: StoreError.self) { try Store(openingAt: url) }
    }

    func runHelper(_ arguments: [String]) throws -> (Process, Pipe) {
        let process = Process()
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

    @Test func aChildKilledMidSaveLeavesTheLastCompleteState() throws {
        for round in 0..<5 {
            let url = directory.child("killed-\(round)")
            _ = try Store(creatingAt: url)
            let (process, pipe) = try runHelper(["save-loop", url.path, "v", "100000", "300000"])
            let seen = readSaved(pipe, atLeast: 3 + round)
            usleep(UInt32.random(in: 0...20_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            let printed = seen.count + readSaved(pipe, atLeast: .max).count

            let store = try Store(openingAt: url)
            let count = store.history.count
            // Every printed save is there; at most the one in flight landed besides.
            #expect(count >= printed && count <= printed + 1)
            #expect(store.heads.count == 1)
            let head = try #require(store.mostRecentHead)
            #expect(try store.valueCount(at: head.id) == count)
            for value in try store.values(at: head.id) { #expect(value.data.count == 300_000) }
            // The store takes new saves after the crash, and the killed writer's temporary file is gone.
            _ = try store.save(head.id, insert: ["after": "crash"])
            let leftovers = try FileManager.default.subpathsOfDirectory(atPath: url.appendingPathComponent("versions").path)
                .filter { ($0 as NSString).lastPathComponent.hasPrefix(".tmp-") }
            #expect(leftovers.isEmpty)
        }
    }

    @Test func twoProcessesWriteOneStore() throws {
        let url = directory.child("shared")
        let store = try Store(creatingAt: url)
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
}
