import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// zip-v1 snapshots written by this package: a standard zip (`unzip -t`), in upstream's layout as an independent
/// reader sees it (Tests/Helpers/read-zip-v1.py: Python's zipfile and json, no LLVS code), with every version's
/// values and stored versions; and read back by this package into either storage.
@Suite struct ZipSnapshotWriteTests {
    let directory = TemporaryDirectory()
    static let reader = TestPaths.packageRoot.appendingPathComponent("Tests/Helpers/read-zip-v1.py")
    static let hasUnzip = FileManager.default.isExecutableFile(atPath: "/usr/bin/unzip")
    static let hasPython = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

    /// Branches, a merge, removals, ids with `/` and `:`, composed and decomposed accents, an emoji sequence, a
    /// 1-Character id, an empty value and one of 5 MB (streamed, not held).
    func awkwardStore(storage: StorageKind = .file) throws -> Store {
        let store = try makeStore(in: directory, name: "source", storage: storage)
        var generator = SeededGenerator(seed: 5)
        let big = Data((0..<5_000_000).map { _ in UInt8.random(in: 0...255, using: &generator) })
        let v1 = try store.makeVersion(
            basedOnPredecessor: nil,
            inserting: [
                Value(id: "settings.json", data: Data(#"{"a":1}"#.utf8)), Value(id: "x", data: Data("one".utf8)),
                Value(id: "café/naïve ☕", data: Data("crème".utf8)),
                Value(id: "nfd/re\u{301}sume\u{301}.txt", data: Data("cv".utf8)),
                Value(id: "a:b", data: Data("colon".utf8)), Value(id: "Ελληνικά/άλφα", data: Data("α".utf8)),
                Value(id: "emoji/👩‍👩‍👧‍👦 family", data: Data("🏠".utf8)), Value(id: "empty", data: Data()),
                Value(id: "big", data: big), Value(id: "se", data: Data("same bucket".utf8)),
            ])
        let v2 = try store.makeVersion(
            basedOnPredecessor: v1.id, updating: [Value(id: "settings.json", data: Data(#"{"a":2}"#.utf8))],
            removing: ["x"])
        let v3 = try store.makeVersion(
            basedOnPredecessor: v1.id, inserting: [Value(id: "drafts/idea", data: Data("idea".utf8))],
            updating: [Value(id: "café/naïve ☕", data: Data("crème brûlée".utf8))])
        let v4 = try store.merge(version: v2.id, with: v3.id)
        _ = try store.makeVersion(
            basedOnPredecessor: v4.id, inserting: [Value(id: "after", data: Data("merge".utf8))], removing: ["big"])
        return store
    }

    func snapshot(of store: Store) throws -> URL {
        let url = directory.child("snapshot.zip")
        let summary = try store.writeSnapshot(to: url)
        #expect(summary.format == "zip-v1")
        #expect(summary.versionCount == store.history.count)
        return url
    }

    func run(_ executable: String, _ arguments: [String]) throws -> (status: Int32, output: Data) {
        let process = ChildProcess()
        process.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let output = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, output)
    }

    @Test(.enabled(if: hasUnzip || CIEnvironment.requiresEveryTest, "needs unzip (scripts/test installs it)"))
    func theArchiveTestsCleanWithUnzip() throws {
        let url = try snapshot(of: try awkwardStore())
        let result = try run("/usr/bin/unzip", ["-t", url.path])
        #expect(result.status == 0, "\(String(decoding: result.output, as: UTF8.self))")
        #expect(String(decoding: result.output, as: UTF8.self).contains("No errors detected"))
    }

    /// A value saved composed and then updated decomposed, in a store large enough for its map to branch, is one
    /// value in the snapshot, as an independent reader of upstream's layout sees it.
    @Test(.enabled(if: hasPython || CIEnvironment.requiresEveryTest, "needs python3 (scripts/test installs it)"))
    func oneValueUnderTwoSpellingsIsOneEntryInTheSnapshot() throws {
        let store = try makeStore(in: directory, name: "spellings", storage: .file)
        let fillers = (0..<41).map { Value(id: Value.ID("filler-\($0)"), data: Data("f".utf8)) }
        let v1 = try store.makeVersion(
            basedOnPredecessor: nil, inserting: fillers + [Value(id: "caf\u{E9}/x", data: Data("composed".utf8))])
        let v2 = try store.makeVersion(
            basedOnPredecessor: v1.id, updating: [Value(id: "cafe\u{301}/x", data: Data("decomposed".utf8))])
        let result = try run("/usr/bin/python3", [Self.reader.path, try snapshot(of: store).path])
        #expect(result.status == 0)
        struct Read: Decodable {
            struct Entry: Decodable { var data: String }
            var values: [String: Entry]
        }
        let read = try JSONDecoder().decode([String: Read].self, from: result.output)
        let last = try #require(read[v2.id.rawValue]).values
        #expect(try store.valueCount(at: v2.id) == 42, "one value in the store")
        #expect(last.count == 42, "\(last.keys.sorted())")
        let spelled = last.filter { $0.key.precomposedStringWithCanonicalMapping == "caf\u{E9}/x" }
        #expect(
            spelled.count == 1 && spelled.first?.value.data == Data("decomposed".utf8).base64EncodedString(),
            "\(spelled)")
    }

    @Test(.enabled(if: hasPython || CIEnvironment.requiresEveryTest, "needs python3 (scripts/test installs it)"))
    func anIndependentReaderSeesEveryVersionsValues() throws {
        let store = try awkwardStore()
        let url = try snapshot(of: store)
        let result = try run("/usr/bin/python3", [Self.reader.path, url.path])
        #expect(result.status == 0)
        struct Read: Decodable {
            struct Entry: Decodable { var data: String; var storedVersionId: String }
            var predecessors: [String]
            var values: [String: Entry]
        }
        let read = try JSONDecoder().decode([String: Read].self, from: result.output)
        #expect(read.count == store.history.count)
        for version in store.history.topologicallySorted() {
            let seen = try #require(read[version.id.rawValue])
            #expect(seen.predecessors == (version.predecessors?.ids ?? []).map(\.rawValue))
            let values = try store.values(at: version.id)
            // Python's keys are the ids as written; compare by Swift's (canonical) equality.
            let seenValues = Dictionary(uniqueKeysWithValues: seen.values.map { (Value.ID($0.key), $0.value) })
            #expect(Set(seenValues.keys) == Set(values.map(\.id)), "\(version.id)")
            for value in values {
                #expect(seenValues[value.id]?.data == value.data.base64EncodedString(), "\(version.id) \(value.id)")
                #expect(
                    seenValues[value.id]?.storedVersionId == value.storedVersionId?.rawValue,
                    "\(version.id) \(value.id)")
            }
        }
    }

    @Test(arguments: StorageKind.allCases)
    func whatItWritesItReadsBackIntoEitherStorage(storage: StorageKind) throws {
        let store = try awkwardStore()
        let url = try snapshot(of: store)
        let target = try makeStore(in: directory, name: "target", storage: storage)
        #expect(
            try target.restoreSnapshot(from: url, format: "zip-v1", versionCount: store.history.count)
                == store.history.count)
        #expect(target.heads == store.heads)
        for version in store.history.topologicallySorted() {
            let expected = try store.values(at: version.id).sorted { $0.id < $1.id }
            let restored = try target.values(at: version.id).sorted { $0.id < $1.id }
            #expect(restored == expected, "\(version.id)")
        }
        // The merge keeps its changes: the same preserve entries go to a remote as before.
        for version in store.history.topologicallySorted() {
            #expect(
                try target.valueChanges(madeInVersionIdentifiedBy: version.id).count
                    == store.valueChanges(madeInVersionIdentifiedBy: version.id).count)
        }
    }
}

/// The hand-written JSON of map nodes against Foundation's reading of it, with every character that needs escaping.
@Suite struct UpstreamMapNodeJSONTests {
    @Test func nodesWrittenByHandParseBackEverywhere() throws {
        let awkward = "q\"b\\s/c\u{1}t\tn\nr\r é ☕ 👩‍👩‍👧‍👦"
        let sub = UpstreamMapNode(
            reference: UpstreamNodeReference(key: "q\"", version: "V1"),
            children: .values([
                .init(
                    key: .init(keyString: awkward),
                    valueReference: Value.Reference(valueId: Value.ID(awkward), storedVersionId: "V\\0"))
            ]))
        let root = UpstreamMapNode(
            reference: UpstreamNodeReference(key: "__llvs_root", version: "V1"),
            children: .nodes([
                UpstreamNodeReference(key: "q\"", version: "V1"), UpstreamNodeReference(key: "ab", version: "V0"),
            ]))
        for node in [sub, root] {
            let json = node.encodedJSON()
            let byFoundation = try JSONDecoder().decode(UpstreamMapNode.self, from: json)
            let byScanner = try UpstreamMapNodeParser.parse(json)
            for parsed in [byFoundation, byScanner] {
                #expect(parsed.reference == node.reference)
                switch (parsed.children, node.children) {
                case (.nodes(let a), .nodes(let b)): #expect(a == b)
                case (.values(let a), .values(let b)):
                    #expect(a.map(\.valueReference) == b.map(\.valueReference))
                    #expect(a.map(\.key.keyString) == b.map(\.key.keyString))
                default: Issue.record("children of another kind")
                }
            }
        }
        // Any key order, whitespace, escapes, unknown keys; and what is not a node is refused.
        let reordered = Data(
            #" { "children" : { "extra": [1, {"a": null}], "nodes" : [ { "version" : "V\u00e9\ud83d\ude00", "key" : "k\/" } ] }, "reference": {"version": "V", "key": "__llvs_root", "more": true} } "#
                .utf8)
        let parsed = try UpstreamMapNodeParser.parse(reordered)
        #expect(parsed.reference == UpstreamNodeReference(key: "__llvs_root", version: "V"))
        guard case .nodes(let nodes) = parsed.children else { Issue.record("not nodes"); return }
        #expect(nodes == [UpstreamNodeReference(key: "k/", version: "Vé😀")])
        for bad in [
            #"{"reference":{"key":1}}"#, "{\"refer", #"{"reference":{"key":"a","version":"b"}}"#,
            #"{"reference":{"key":"a","version":"b"},"children":{"nodes":[]}} x"#,
            #"{"reference":{"key":"a\ud800","version":"b"},"children":{"nodes":[]}}"#,
            String(repeating: "[", count: 100),
        ] {
            #expect(throws: UpstreamMapNodeParser.Failure.self, "\(bad)") {
                try UpstreamMapNodeParser.parse(Data(bad.utf8))
            }
        }
    }
}
