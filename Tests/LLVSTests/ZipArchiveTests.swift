import Foundation
import Testing
@testable import LLVS
import LLVSCodecs
import LLVSMocks
import LLVSSupport

/// The zip reader and writer on their own: ZIP64 end records, and damaged archives giving errors that say what
/// and where, never a crash or garbage.
@Suite struct ZipArchiveTests {
    let directory = TemporaryDirectory()

    func smallArchive() throws -> (URL, [String: Data]) {
        let url = directory.child("small.zip")
        let writer = try ZipArchiveWriter(destination: url.path)
        var generator = SeededGenerator(seed: 9)
        let files: [String: Data] = [
            "a/b/text.txt": Data(String(repeating: "some text that deflates well. ", count: 2000).utf8),
            "a/random.bin": Data((0..<300_000).map { _ in UInt8.random(in: 0...255, using: &generator) }),
            "empty": Data(),
            "nai\u{308}ve/☕.json": Data("{}".utf8),
        ]
        for (name, data) in files.sorted(by: { $0.key < $1.key }) { try writer.addFile(name, data: data) }
        _ = try writer.finish()
        return (url, files)
    }

    static let unzipInstalled = FileManager.default.isExecutableFile(atPath: "/usr/bin/unzip")

    /// What `unzip -t`, an independent reader, answers for the archive.
    func unzipTest(_ url: URL) throws -> Int32 {
        let process = ChildProcess()
        process.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        process.executableURL = URL(fileURLWithPath: "/usr/bin/unzip")
        process.arguments = ["-tq", url.path]
        process.standardOutput = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        return process.terminationStatus
    }

    @Test func writtenFilesReadBackWithTheirFolders() throws {
        let (url, files) = try smallArchive()
        let reader = try ZipArchiveReader(path: url.path)
        #expect(Set(reader.entries.filter(\.isDirectory).map(\.name)) == ["a/", "a/b/", "nai\u{308}ve/"])
        for entry in reader.entries where !entry.isDirectory {
            #expect(try reader.data(entry) == files[entry.name], "\(entry.name)")
        }
    }

    /// An archive mixing files given whole, files streamed and folders added alone; what was added, in order.
    func mixedArchive() throws -> (url: URL, added: [(name: String, data: Data)]) {
        let url = directory.child("ordered.zip")
        let writer = try ZipArchiveWriter(destination: url.path)
        var added: [(name: String, data: Data)] = []
        var generator = SeededGenerator(seed: 21)
        for index in 0..<1_000 {
            let name = "f\(index % 7)/g\(index % 3)/file-\(index).json"
            let data = Data(
                String(repeating: "entry \(index) ", count: Int.random(in: 0...300, using: &generator)).utf8)
            switch index % 250 {
            case 100:
                try writer.addFile(name, size: Int64(data.count)) { write in try write(data) }
            case 200:
                try writer.addDirectory("alone-\(index)")
                added.append(("alone-\(index)/", Data()))
                try writer.addFile(name, data: data)
            default:
                try writer.addFile(name, data: data)
            }
            added.append((name, data))
        }
        _ = try writer.finish()
        return (url, added)
    }

    /// Files given whole (compressed in one call, their CRC and sizes written with their local header) and files
    /// streamed (written back after their data) mix in one archive: every entry is where it was added, each folder's
    /// entry before what is in it, and every file reads back whole.
    @Test func wholeAndStreamedFilesKeepTheirOrderAmongFolders() throws {
        let (url, added) = try mixedArchive()
        let reader = try ZipArchiveReader(path: url.path)
        let files = reader.entries.filter { !$0.isDirectory || $0.name.hasPrefix("alone-") }
        #expect(files.map(\.name) == added.map(\.name))
        var seenFolders = Set<String>()
        for entry in reader.entries {
            if entry.isDirectory { seenFolders.insert(entry.name); continue }
            let folder = String(entry.name[...entry.name.lastIndex(of: "/")!])
            #expect(seenFolders.contains(folder), "\(entry.name) before its folder's entry")
        }
        for (entry, file) in zip(files, added) where !entry.isDirectory {
            #expect(try reader.data(entry) == file.data, "\(entry.name)")
        }
    }

    /// 70,000 folders and a file: more entries than the classic end record counts.
    func manyEntriesArchive() throws -> URL {
        let url = directory.child("many.zip")
        let writer = try ZipArchiveWriter(destination: url.path)
        for index in 0..<70_000 { try writer.addDirectory("d\(index)") }
        try writer.addFile("last.txt", data: Data("end".utf8))
        _ = try writer.finish()
        return url
    }

    @Test func seventyThousandEntriesGoThroughZip64EndRecords() throws {
        let reader = try ZipArchiveReader(path: try manyEntriesArchive().path)
        #expect(reader.entries.count == 70_001)
        #expect(try reader.data(reader.entries.last!) == Data("end".utf8))
    }

    /// `unzip -t`, a reader that is not this package's, finds every entry whole in the mixed archive and in the one
    /// with ZIP64 end records.
    @Test(.enabled(if: unzipInstalled || CIEnvironment.requiresEveryTest, "unzip is not installed (apt install unzip)"))
    func unzipReadsWhatTheWriterWrites() throws {
        #expect(try unzipTest(try mixedArchive().url) == 0)
        #expect(try unzipTest(try manyEntriesArchive()) == 0)
    }

    @Test func everyTruncationIsRefusedOrDetected() throws {
        let (url, _) = try smallArchive()
        let bytes = try Data(contentsOf: url)
        let cut = directory.child("cut.zip")
        for length in stride(from: 0, to: bytes.count, by: max(1, bytes.count / 60))
            + Array(bytes.count - 30..<bytes.count)
        {
            try bytes.prefix(length).write(to: cut)
            // Either the directory is refused, or (when only the end record survives) each entry fails its checks.
            do {
                let reader = try ZipArchiveReader(path: cut.path)
                for entry in reader.entries where !entry.isDirectory { _ = try reader.data(entry) }
                Issue.record("a cut at \(length) of \(bytes.count) read without error")
            } catch is ZipError {
            } catch let error as StoreError {
                #expect("\(error)".contains(cut.path))
            }
        }
    }

    @Test func aDamagedEntryIsNamed() throws {
        let (url, _) = try smallArchive()
        var bytes = try Data(contentsOf: url)
        // Flip a byte inside the deflated text (after its local header).
        let reader = try ZipArchiveReader(path: url.path)
        let text = try #require(reader.entries.first { $0.name == "a/b/text.txt" })
        bytes[Int(text.localHeaderOffset) + 30 + text.name.utf8.count + 20] ^= 0x55
        let damaged = directory.child("damaged.zip")
        try bytes.write(to: damaged)
        let again = try ZipArchiveReader(path: damaged.path)
        #expect {
            _ = try again.data(again.entries.first { $0.name == "a/b/text.txt" }!)
        } throws: { error in
            guard case ZipError.corruptEntry(_, let entry, _) = error else { return false }
            return entry == "a/b/text.txt"
        }
        // The others are untouched.
        #expect(try again.data(again.entries.first { $0.name == "empty" }!) == Data())
    }

    /// The central directory record of `name`: its offset in `bytes`.
    func directoryRecord(of name: String, in bytes: Data) throws -> Int {
        let signature: [UInt8] = [0x50, 0x4b, 0x01, 0x02]
        let nameBytes = Array(name.utf8)
        for offset in 0..<(bytes.count - 46 - nameBytes.count)
        where bytes[offset..<offset + 4].elementsEqual(signature)
            && bytes[offset + 46..<offset + 46 + nameBytes.count].elementsEqual(nameBytes)
        {
            return offset
        }
        throw ZipError.notAZip(path: name, reason: "no directory record in the test archive")
    }

    /// A directory that lies about an entry's size or checksum is caught, with the same reasons whether the entry
    /// is small (read with one pread, inflated in one call) or large (streamed in pieces).
    @Test(arguments: ["a/b/text.txt", "a/random.bin"])
    func aDirectoryThatLiesAboutAnEntryIsCaught(name: String) throws {
        let (url, files) = try smallArchive()
        let original = try Data(contentsOf: url)
        let record = try directoryRecord(of: name, in: original)
        let size = UInt32(files[name]!.count)
        #expect((Int64(size) <= ZipArchiveReader.smallEntryLimit) == (name == "a/b/text.txt"))
        let lies: [(field: Int, value: UInt32, reason: String)] = [
            (24, size - 1, "more than the \(size - 1) bytes"),
            (24, size + 1, "it holds \(size) bytes, its directory entry says \(size + 1)"),
            (16, 0xDEAD_BEEF, "the archive says deadbeef"),
        ]
        for lie in lies {
            var bytes = original
            withUnsafeBytes(of: lie.value.littleEndian) {
                bytes.replaceSubrange(record + lie.field..<record + lie.field + 4, with: $0)
            }
            let lying = directory.child("lying.zip")
            try bytes.write(to: lying)
            let reader = try ZipArchiveReader(path: lying.path)
            #expect {
                _ = try reader.data(reader.entries.first { $0.name == name }!)
            } throws: { error in
                guard case ZipError.corruptEntry(_, let entry, let reason) = error else { return false }
                return entry == name && reason.contains(lie.reason)
            }
        }
    }

    @Test func notAZipAtAll() throws {
        let url = directory.child("plain.txt")
        try Data(String(repeating: "not a zip ", count: 100).utf8).write(to: url)
        #expect(throws: ZipError.notAZip(path: url.path, reason: "it has no end of central directory record")) {
            try ZipArchiveReader(path: url.path)
        }
    }

    /// A snapshot whose zip is damaged (its manifest's hash matching, as a buggy writer would leave it) is refused
    /// with the reason, nothing of it stays, and every version is pulled instead.
    @Test func aDamagedZipSnapshotFallsBackToAFullPull() async throws {
        let source = try makeStore(in: directory, name: "source")
        var head: Version?
        for index in 0..<5 {
            head = try source.makeVersion(
                basedOnPredecessor: head?.id, inserting: [Value(id: Value.ID("v\(index)"), data: Data("\(index)".utf8))]
            )
        }
        let remote = LocalFolderFileSystem(root: directory.child("remote"))
        let exchange = CloudFileSystemExchange(store: source, fileSystem: remote, basePath: "sync")
        _ = try await exchange.send()
        var manifest = try await exchange.sendSnapshot()
        // Remove a map node's entry name from the archive by renaming it, then fix the hash.
        let chunkPath = "sync/snapshots/\(manifest.snapshotId)/chunk-000"
        var chunk = try await remote.download(chunkPath)
        let needle = Data("/llvs_root/".utf8)
        while let range = chunk.range(of: needle) { chunk.replaceSubrange(range, with: Data("/llvs_ROOT/".utf8)) }
        try await remote.upload(chunk, to: chunkPath)
        manifest.sha256 = SHA256.hex(chunk)
        let encoder = JSONEncoder()
        try await remote.upload(try encoder.encode(manifest), to: "sync/snapshots/manifest.json")

        let target = try StoreCoordinator(store: try makeStore(in: directory, name: "target"))
        let outcome = try await target.bootstrapFromSnapshot(
            using: CloudFileSystemExchange(store: target.store, fileSystem: remote, basePath: "sync"))
        guard case .fellBackToFullPull(let reason) = outcome else {
            Issue.record("expected a fall-back, got \(outcome)"); return
        }
        #expect(reason.contains("map node") && reason.contains("missing"), "\(reason)")
        #expect(target.store.history.count == 5)
    }
}
