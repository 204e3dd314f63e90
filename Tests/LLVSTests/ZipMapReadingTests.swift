import Foundation
import Testing
@testable import LLVS
import LLVSCodecs
import LLVSSupport

/// How a zip-v1 import finds each version's changes: from the sub-nodes the version wrote (upstream writes one for
/// every bucket it touches, an emptied one too, and never drops a root reference), checked against the heads' roots;
/// an archive that breaks that rule is read again root by root.
@Suite struct ZipMapReadingTests {
    let directory = TemporaryDirectory()

    /// A snapshot of two versions written by hand: `v1` inserts `ab1`; `v2` removes it. With `upstreamRule`, `v2`
    /// writes an empty `ab` sub-node as upstream does; without, its root simply drops `ab` (and writes no sub-node).
    func twoVersionArchive(upstreamRule: Bool) throws -> URL {
        let url = directory.child("snapshot-\(upstreamRule).zip")
        let zip = try ZipArchiveWriter(destination: url.path)
        let v1 = Version(id: "V1", timestamp: 800_000_000, valueDataSize: 1)
        let v2 = Version(id: "V2", predecessors: .init(idOfFirst: "V1"), timestamp: 800_000_001, valueDataSize: 0)
        for version in [v1, v2] {
            try zip.addFile(UpstreamLayout.versionPath(version.id), data: try JSONEncoder().encode(version))
        }
        try zip.addFile(UpstreamLayout.valuePath("ab1", storedIn: "V1"), data: Data("x".utf8))
        func node(_ key: String, _ version: Version.ID, _ children: UpstreamMapNode.Children) throws {
            try zip.addFile(
                UpstreamLayout.nodePath(key, version: version),
                data: UpstreamMapNode(reference: .init(key: key, version: version), children: children).encodedJSON())
        }
        try node(
            "ab", "V1",
            .values([.init(key: .init(keyString: "ab1"), valueReference: .init(valueId: "ab1", storedVersionId: "V1"))])
        )
        try node(UpstreamLayout.rootNodeKey, "V1", .nodes([.init(key: "ab", version: "V1")]))
        if upstreamRule {
            try node("ab", "V2", .values([]))
            try node(UpstreamLayout.rootNodeKey, "V2", .nodes([.init(key: "ab", version: "V2")]))
        } else {
            try node(UpstreamLayout.rootNodeKey, "V2", .nodes([]))
        }
        _ = try zip.finish()
        return url
    }

    @Test(arguments: [true, false])
    func aRemovalThatEmptiesABucketIsImported(upstreamRule: Bool) throws {
        let store = try makeStore(in: directory, name: "store-\(upstreamRule)", storage: .file)
        let importer = try ZipV1Importer(
            archive: try ZipArchiveReader(path: try twoVersionArchive(upstreamRule: upstreamRule).path))
        #expect(importer.writtenSubNodes["V2"] == (upstreamRule ? ["ab"] : nil))
        #expect(try importer.importAll(into: store, expectedCount: 2) == 2)
        #expect(try store.value(id: "ab1", at: "V1")?.data == Data("x".utf8))
        #expect(try store.value(id: "ab1", at: "V2") == nil)
        #expect(try store.valueReferences(at: "V2").isEmpty)
    }

    /// The reader keeps the sub-nodes it read within a byte budget; a budget that keeps only each bucket's last copy,
    /// or nothing at all, reads the same changes for every version as the default (on a branching history, where a
    /// version's predecessor copy is not always the last one read).
    @Test func aSmallBucketCacheReadsTheSameChanges() throws {
        let store = try makeStore(in: directory, name: "cache-source", storage: .file)
        var generator = SeededGenerator(seed: 7)
        let ids = (0..<60).map { Value.ID(["AA", "AB", "BA"][$0 % 3] + "-\($0)") }
        var tips: [Version.ID?] = [nil]
        for step in 0..<120 {
            let base = tips.randomElement(using: &generator)!
            let present = Set(try base.map { try store.valueReferences(at: $0).map(\.valueId) } ?? [])
            var changes: [Value.Change] = []
            for id in ids.shuffled(using: &generator).prefix(Int.random(in: 1...4, using: &generator)) {
                if !present.contains(id) {
                    changes.append(.insert(Value(id: id, data: Data("\(step)".utf8))))
                } else if step % 3 == 0 {
                    changes.append(.remove(id))
                } else {
                    changes.append(.update(Value(id: id, data: Data("\(step)".utf8))))
                }
            }
            let version = try store.makeVersion(basedOn: base.map { .init(idOfFirst: $0) }, storing: changes)
            if let index = tips.firstIndex(of: base), Int.random(in: 0..<4, using: &generator) > 0 {
                tips[index] = version.id
            } else {
                tips.append(version.id)
            }
        }
        let url = directory.child("cache.zip")
        _ = try store.writeSnapshot(to: url, format: ZipV1Snapshot.format)
        let importer = try ZipV1Importer(archive: try ZipArchiveReader(path: url.path))
        let versions = try importer.versions(expectedCount: store.history.count)
        func read(budget: Int) throws -> [String] {
            var reader = UpstreamMapReader(
                importer: importer, versions: versions, source: .writtenSubNodes, bucketCacheBudget: budget)
            return try versions.map { version in
                let changes = try reader.changes(of: version) { self.directory.child(UUID().uuidString) }
                defer { changes.received.discard() }
                return "\(version.id): \(try changes.read(from: importer).changes.map { "\($0)" }.sorted())"
            }
        }
        let reference = try read(budget: UpstreamMapReader.defaultBucketCacheBudget)
        #expect(try read(budget: 40_000) == reference)
        #expect(try read(budget: 2_000) == reference)
        #expect(try read(budget: 1) == reference)
    }

    @Test func anEmptiedBucketKeepsAnEmptySubNodeWhenWritten() throws {
        let store = try makeStore(in: directory, name: "source", storage: .file)
        try store.addVersion(Version(id: "V1", valueDataSize: 1), storing: [.insert(Value("ab1", "x"))])
        try store.addVersion(Version(id: "V2", predecessors: .init(idOfFirst: "V1")), storing: [.remove("ab1")])
        let url = directory.child("written.zip")
        _ = try store.writeSnapshot(to: url, format: ZipV1Snapshot.format)
        let archive = try ZipArchiveReader(path: url.path)
        let importer = try ZipV1Importer(archive: archive)
        #expect(importer.writtenSubNodes["V2"] == ["ab"])
        let root = try importer.node(UpstreamLayout.rootNodeKey, version: "V2")
        let references = try #require(
            { if case .nodes(let references) = root.children { references } else { nil } }(), "the root lists values")
        #expect(references == [UpstreamNodeReference(key: "ab", version: "V2")])
        let subNode = try importer.node("ab", version: "V2")
        let values = try #require(
            { if case .values(let values) = subNode.children { values } else { nil } }(), "the sub-node lists nodes")
        #expect(values.isEmpty)
    }

    @Test func nodePathsReadBackwards() {
        for (key, version) in [
            ("ab", "3ADB8B6F-0000"), ("x", "V"), ("a/", "V2"), ("a:", "V2"), (UpstreamLayout.rootNodeKey, "V9"),
            ("デー", "5CA"),
        ] {
            let path = UpstreamLayout.nodePath(key, version: Version.ID(version))
            #expect(
                UpstreamLayout.nodeLocation(ofPath: path)
                    == UpstreamNodeReference(key: key, version: Version.ID(version)), "\(path)")
        }
        #expect(UpstreamLayout.nodeLocation(ofPath: "values/ab/0/V.json") == nil)
        #expect(UpstreamLayout.nodeLocation(ofPath: "maps/__llvs_values/ab/V.json") == nil)
    }

    /// The byte-level reading of ASCII node paths agrees with the general rule (rebuild and compare) on node paths
    /// of awkward keys and versions, and on near misses: extra or missing folders, wrong lengths, unsafe characters.
    @Test func asciiNodePathsReadAsTheGeneralRuleReadsThem() {
        var generator = SeededGenerator(seed: 77)
        let alphabet = Array("aZ09:/.-_L") + ["LLVSSLASH", "LLVSCOLON", "LLVS"].flatMap { [Character]($0) }
        func randomText(_ range: ClosedRange<Int>) -> String {
            String(
                (0..<Int.random(in: range, using: &generator)).map { _ in alphabet.randomElement(using: &generator)! })
        }
        var paths: [String] = []
        for _ in 0..<3_000 {
            let key =
                Bool.random(using: &generator)
                ? randomText(1...12)
                : ["LLVSSLASH/", "a", "ab", "abc", "/", ":", UpstreamLayout.rootNodeKey].randomElement(
                    using: &generator)!
            let version = randomText(1...6)
            let path = UpstreamLayout.nodePath(key, version: Version.ID(version))
            paths.append(path)
            // A near miss: one byte of the path changed, dropped or doubled.
            var bytes = Array(path.utf8)
            let index = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<3, using: &generator) {
            case 0: bytes[index] = Array("/a:.".utf8).randomElement(using: &generator)!
            case 1: bytes.remove(at: index)
            default: bytes.insert(bytes[index], at: index)
            }
            paths.append(String(decoding: bytes, as: UTF8.self))
        }
        paths += [
            "maps/__llvs_values/.json", "maps/__llvs_values/a/b/.json", "maps/__llvs_values//b/c.json",
            "maps/__llvs_values/ab/c/d/e.json",
            "maps/__llvs_values/ab\r\n/c/d.json",
        ]
        var fastlyRead = 0
        for path in paths {
            guard let ascii = UpstreamLayout.asciiNodeLocation(ofPath: path) else { continue }
            fastlyRead += 1
            #expect(ascii == UpstreamLayout.generalNodeLocation(ofPath: path), "\(path)")
        }
        #expect(fastlyRead > 5_000)
    }
}
