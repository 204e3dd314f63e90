import Foundation
@testable import LLVS
import LLVSSupport
import Testing

/// The staging storage of a zip-v1 import buffers what is written at its end; reads and writes anywhere must still
/// see one file, and the archive it finishes must be the one a reader walking it finds.
@Suite struct StagingArchiveStorageTests {
    let directory = TemporaryDirectory()

    /// Random appends (small, and past the buffer's limit), overwrites of earlier bytes and of the buffered ones,
    /// writes past the end, and reads anywhere, against a plain byte array.
    @Test(arguments: [1, 2, 3])
    func readsAndWritesAgreeWithAPlainFile(seed: UInt64) throws {
        let storage = try StagingArchiveStorage(path: directory.child("staging-\(seed)").path)
        var generator = SeededGenerator(seed: seed)
        var model = [UInt8](try storage.read(at: 0, count: 12))
        // A run counting up from a random byte: cheap to make, and no two offsets of a run alike within 256.
        func bytes(_ count: Int) -> [UInt8] {
            let first = UInt8.random(in: 0...255, using: &generator)
            return [UInt8](unsafeUninitializedCapacity: count) { buffer, initialized in
                for index in 0..<count { buffer[index] = first &+ UInt8(truncatingIfNeeded: index) }
                initialized = count
            }
        }
        func write(_ new: [UInt8], at offset: Int) throws {
            if offset + new.count > model.count {
                model += [UInt8](repeating: 0, count: offset + new.count - model.count)
            }
            model.replaceSubrange(offset..<(offset + new.count), with: new)
            try storage.write(new, at: Int64(offset))
        }
        for _ in 0..<400 {
            switch Int.random(in: 0..<12, using: &generator) {
            case 0..<5: try write(bytes(Int.random(in: 1...9000, using: &generator)), at: model.count)
            case 5: try write(bytes(Int.random(in: (1 << 20)...(1 << 20) + 5000, using: &generator)), at: model.count)
            case 6, 7:
                let offset = Int.random(in: 0..<model.count, using: &generator)
                try write(
                    bytes(Int.random(in: 1...min(20_000, model.count - offset + 100), using: &generator)), at: offset)
            case 8:
                try write(
                    bytes(Int.random(in: 1...100, using: &generator)),
                    at: model.count + Int.random(in: 1...50, using: &generator))
            case 9, 10:
                // Near the end, where the bytes are usually still buffered: within them, or from them past the end.
                let offset = max(0, model.count - Int.random(in: 1...4000, using: &generator))
                try write(bytes(Int.random(in: 1...6000, using: &generator)), at: offset)
            default:
                let offset = Int.random(in: 0..<model.count, using: &generator)
                let count = Int.random(in: 1...(model.count - offset), using: &generator)
                #expect(
                    [UInt8](try storage.read(at: Int64(offset), count: count))
                        == Array(model[offset..<(offset + count)]))
            }
        }
        #expect([UInt8](try storage.read(at: 0, count: model.count)) == model)
        // A write that does not continue the buffered bytes passes them to the file first: the file holds everything.
        try write([0xAB], at: 0)
        #expect([UInt8](try POSIX.readFile(storage.path)) == model)
    }

    /// Versions committed through a store on the staging storage: the finished archive walked from its start gives
    /// the bundles and headers the storage kept, so restoring need not walk it.
    @Test func theFinishedArchiveIsWhereItsWriterSaysItIs() throws {
        let storage = try StagingArchiveStorage(path: directory.child("staged.bundles").path)
        let store = try Store(
            creatingAt: directory.child("staging-store"), descriptor: StoreDescriptor(storage: "staging"),
            mapNodeCacheLimit: 16
        ) { _, _, _ in storage }
        var previous: Version.ID?
        for index in 0..<120 {
            let version = Version(
                id: Version.ID("v\(index)"), predecessors: previous.map { .init(idOfFirst: $0) },
                timestamp: Double(index))
            // Every tenth version carries a value larger than the buffer, so bundles reach the file both ways.
            let size = index % 10 == 9 ? (1 << 20) + index : index * 7
            try store.addVersion(
                version,
                storing: [
                    .insert(
                        Value(
                            id: "value-\(index % 40)-\(index)", data: Data(repeating: UInt8(index % 251), count: size)))
                ])
            previous = version.id
        }
        let (headers, entries) = try storage.finish()
        let walked = try SnapshotArchiveReader(url: URL(fileURLWithPath: storage.path))
        #expect(walked.entries.map(\.offset) == entries.map(\.offset))
        #expect(walked.entries.map(\.length) == entries.map(\.length))
        #expect(try walked.entries.map(walked.header) == headers)
        let known = try SnapshotArchiveReader(url: URL(fileURLWithPath: storage.path), entries: entries)
        #expect(try known.bundle(known.entries[59]) == walked.bundle(walked.entries[59]))
        // A reader told other places than the file's finds its end marker wrong.
        #expect(throws: StoreError.self) {
            try SnapshotArchiveReader(url: URL(fileURLWithPath: storage.path), entries: Array(entries.dropLast()))
        }
    }
}
