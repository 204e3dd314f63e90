import Foundation
import LLVS
import Testing
@testable import LLVSBackup

/// The walk and the reader over a real store in a temporary folder.
final class BackupFixture {
    let root: URL
    let store: Store
    var current: Version.ID?

    init() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("backup-walk-\(UUID().uuidString)")
        try FileManager.default.createDirectory(
            at: root.appendingPathComponent("source"), withIntermediateDirectories: true)
        store = try Store(rootDirectoryURL: root.appendingPathComponent("store"))
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    var source: String { root.appendingPathComponent("source").path }

    func write(_ relative: String, _ data: Data) throws {
        let url = URL(fileURLWithPath: source + "/" + relative)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try data.write(to: url)
    }

    /// Bytes of value data in every version: what the store holds.
    var storedBytes: Int64 { versions.reduce(0) { $0 + (store.version(identifiedBy: $1)?.valueDataSize ?? 0) } }

    /// The current version and all before it.
    var versions: Set<Version.ID> {
        guard let current else { return [] }
        return store.history.ancestors(of: current).union([current])
    }

    /// Runs a backup; `stopAfter` commits (checkpoints included) ends it as a kill would, after that commit landed.
    @discardableResult
    func backup(
        name: String? = nil, checkpointBytes: Int64 = 64 << 20, stopAfter: Int? = nil,
        afterOpening: (@Sendable ([UInt8]) -> Void)? = nil
    ) async throws -> BackupWalk.Summary? {
        var options = BackupWalk.Options()
        options.checkpointBytes = checkpointBytes
        options.afterOpening = afterOpening
        let builder = try store.makeVersionBuilder(basedOn: current)
        var commits = 0
        let walk = BackupWalk(
            builder: builder, name: name ?? source, directory: LocalPath(source), options: options,
            onCommit: { version in
                self.current = version.id
                commits += 1
                if let stopAfter, commits >= stopAfter { throw Killed() }
            })
        do { return try await walk.run() } catch is Killed { builder.discard(); return nil }
    }

    struct Killed: Error {}

    /// Every file under `folder`, by relative path, with its bytes (links as their target).
    static func contents(of folder: String) throws -> [String: Data] {
        var result: [String: Data] = [:]
        let enumerator = FileManager.default.enumerator(atPath: folder)!
        while let relative = enumerator.nextObject() as? String {
            let full = folder + "/" + relative
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: full) {
                result[relative] = Data(("-> " + target).utf8); continue
            }
            var isFolder: ObjCBool = false
            _ = FileManager.default.fileExists(atPath: full, isDirectory: &isFolder)
            result[relative] =
                isFolder.boolValue ? Data("folder".utf8) : try Data(contentsOf: URL(fileURLWithPath: full))
        }
        return result
    }

    /// What the backup holds at the current version, read back through the reader, as `contents(of:)` gives it.
    func restoredContents(name: String? = nil) throws -> [String: Data] {
        let reader = BackupReader(store: store)
        let version = try #require(current)
        let record = try reader.resolveSource(name, at: version)
        var result: [String: Data] = [:]
        func walk(_ hash: ContentHash, _ prefix: String) throws {
            for entry in try reader.tree(hash, at: version).entries {
                let path = prefix + String(decoding: entry.name, as: UTF8.self)
                switch entry.content {
                case .tree(let child):
                    result[path] = Data("folder".utf8)
                    try walk(child, path + "/")
                case .link(let target):
                    result[path] = Data(("-> " + String(decoding: target, as: UTF8.self)).utf8)
                default:
                    var data = Data()
                    try reader.writeContents(of: entry, at: version) { data.append($0) }
                    result[path] = data
                }
            }
        }
        try walk(try #require(record.rootHash), "")
        return result
    }
}

@Suite struct BackupWalkTests {
    @Test func identicalDataIsStoredOnceAcrossFilesAndVersions() async throws {
        let fixture = try BackupFixture()
        let big = pseudoRandomData(count: 20 << 20, seed: 10)
        try fixture.write("a/one.bin", big)
        try fixture.write("b/two.bin", big)
        try await fixture.backup()
        #expect(fixture.storedBytes < 21 << 20, "two identical 20 MiB files took \(fixture.storedBytes) bytes")
        // A copy made later, in another folder: no new chunk.
        try fixture.write("c/three.bin", big)
        let before = fixture.storedBytes
        let summary = try #require(try await fixture.backup())
        #expect(fixture.storedBytes - before < 64 << 10, "a third copy added \(fixture.storedBytes - before) bytes")
        #expect(summary.filesRead == 1 && summary.filesUnchanged == 2)
        #expect(try fixture.restoredContents() == BackupFixture.contents(of: fixture.source))
    }

    @Test func aChangedByteAddsOnlyTheChunksAroundIt() async throws {
        let fixture = try BackupFixture()
        var big = pseudoRandomData(count: 20 << 20, seed: 11)
        try fixture.write("big.bin", big)
        try fixture.write("small.txt", Data("small".utf8))
        try await fixture.backup()
        let before = fixture.storedBytes
        big[7_654_321] ^= 1
        try fixture.write("big.bin", big)
        let summary = try #require(try await fixture.backup())
        let added = fixture.storedBytes - before
        #expect(added <= 4 << 20, "one changed byte added \(added) bytes")
        #expect(summary.progress.bytesStored == added)
        #expect(try fixture.restoredContents() == BackupFixture.contents(of: fixture.source))
    }

    @Test func anUnchangedTreeMakesNoVersionAndReadsNoFile() async throws {
        let fixture = try BackupFixture()
        for index in 0..<50 { try fixture.write("d\(index % 5)/f\(index)", Data("file \(index)".utf8)) }
        try await fixture.backup()
        let versions = fixture.versions.count
        let summary = try #require(try await fixture.backup())
        #expect(summary.version == nil)
        #expect(summary.filesRead == 0 && summary.filesUnchanged == 50 && summary.progress.bytesRead == 0)
        #expect(fixture.versions.count == versions)
    }

    @Test func twoSourcesLiveSideBySide() async throws {
        let fixture = try BackupFixture()
        try fixture.write("x.txt", Data("first".utf8))
        try await fixture.backup(name: "documents")
        try fixture.write("x.txt", Data("second".utf8))
        try FileManager.default.removeItem(atPath: fixture.source + "/x.txt")
        try fixture.write("y.txt", Data("pictures".utf8))
        try await fixture.backup(name: "pictures")
        #expect(try fixture.restoredContents(name: "documents") == ["x.txt": Data("first".utf8)])
        #expect(try fixture.restoredContents(name: "pictures") == ["y.txt": Data("pictures".utf8)])
        let reader = BackupReader(store: fixture.store)
        #expect(try reader.sources(at: try #require(fixture.current)) == ["documents", "pictures"])
        #expect(throws: BackupError.sourceNeeded(known: ["documents", "pictures"])) {
            try reader.resolveSource(nil, at: fixture.current!)
        }
    }

    /// Killed after a random number of checkpoints, at random sizes of checkpoint: the re-run completes a backup equal
    /// to the folder, and stores again at most what the last checkpoint had not committed.
    @Test(arguments: [UInt64(1), 2, 3, 4, 5])
    func aKilledBackupResumesFromItsLastCheckpoint(seed: UInt64) async throws {
        let fixture = try BackupFixture()
        var generator = seed
        func next(_ bound: Int) -> Int {
            generator = generator &* 6364136223846793005 &+ 1442695040888963407
            return Int((generator >> 33) % UInt64(bound))
        }
        var total = 0
        for index in 0..<12 {
            let size = [100, 3000, 700_000, 2_500_000][next(4)]
            try fixture.write(
                "f\(index % 3)/g\(index % 2)/file\(index)",
                pseudoRandomData(count: size, seed: seed * 100 + UInt64(index)))
            total += size
        }
        let checkpoint: Int64 = 1 << 20
        let stop = 1 + next(3)
        let killed = try await fixture.backup(checkpointBytes: checkpoint, stopAfter: stop)
        #expect(killed == nil, "the backup was stopped after \(stop) commit(s)")
        let storedBeforeResume = fixture.storedBytes
        let resumed = try #require(try await fixture.backup(checkpointBytes: checkpoint))
        #expect(try fixture.restoredContents() == BackupFixture.contents(of: fixture.source))
        // Each file's chunks were committed with the checkpoint that followed it: what the re-run stores again is at
        // most what came after the last checkpoint, so the two runs together store the data about once.
        #expect(
            storedBeforeResume + resumed.progress.bytesStored <= Int64(total) + 2 * checkpoint + (4 << 20),
            "first run \(storedBeforeResume), re-run \(resumed.progress.bytesStored), data \(total)")
        let record = try #require(try BackupReader(store: fixture.store).record(fixture.source, at: fixture.current!))
        #expect(record.files == 12)
        #expect(try fixture.store.value(id: BackupObjectID.checkpoint(fixture.source), at: fixture.current!) == nil)
    }

    /// A folder of thousands of files spanning many checkpoints costs its listing about once, not once per
    /// checkpoint (each checkpoint names the segments earlier ones stored), and a backup killed in the middle of it
    /// resumes from the segmented partial listing.
    @Test func aLargeFolderCostsItsListingOnceAcrossCheckpoints() async throws {
        let fixture = try BackupFixture()
        let count = 6000
        for index in 0..<count {
            try fixture.write("big/file-\(index)", pseudoRandomData(count: 300, seed: UInt64(index)))
        }
        let checkpoint: Int64 = 128 << 10
        #expect(try await fixture.backup(checkpointBytes: checkpoint, stopAfter: 8) == nil)
        let summary = try #require(try await fixture.backup(checkpointBytes: checkpoint))
        #expect(summary.progress.checkpoints > 3)
        #expect(try fixture.restoredContents() == BackupFixture.contents(of: fixture.source))

        let reader = BackupReader(store: fixture.store)
        let record = try #require(try reader.record(fixture.source, at: fixture.current!))
        let big = try #require(try reader.entry(at: [Array("big".utf8)], of: record, at: fixture.current!))
        guard case .tree(let hash) = big.content else { Issue.record("big is not a folder"); return }
        let listing = Int64(
            try #require(try fixture.store.value(id: BackupObjectID.tree(hash), at: fixture.current!)).data.count)
        let data = Int64(count * 300)
        #expect(
            fixture.storedBytes <= data + 3 * listing,
            "stored \(fixture.storedBytes) for \(data) bytes of data and a \(listing)-byte listing")
    }

    /// A file deleted once it is open (its bytes still readable through the open descriptor), small or chunked: it
    /// is left out with a warning that it vanished, and the rest of the backup is saved.
    @Test(arguments: [100, 300_000])
    func aFileDeletedWhileItIsReadIsLeftOutAndTheRestSaved(size: Int) async throws {
        let fixture = try BackupFixture()
        try fixture.write("keep.txt", Data("kept".utf8))
        try fixture.write("going.bin", pseudoRandomData(count: size, seed: 12))
        let doomed = fixture.source + "/going.bin"
        let summary = try #require(
            try await fixture.backup(afterOpening: { name in
                if name == Array("going.bin".utf8) { unlink(doomed) }
            }))
        #expect(summary.version != nil)
        #expect(
            summary.warnings.count == 1 && summary.warnings[0].contains("going.bin")
                && summary.warnings[0].contains("vanished"),
            "\(summary.warnings)")
        #expect(try fixture.restoredContents() == ["keep.txt": Data("kept".utf8)])
    }
}
