import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// Comparing two copies of an upstream sub-node by their bytes gives what comparing them as Strings gives, whatever
/// the entries' order, and buckets that are not plain ASCII (escapes, decomposed names) or repeat an ID are compared
/// as Strings.
@Suite struct UpstreamBucketTests {
    typealias References = [(id: String, stored: String)]

    func json(_ references: References, escapedByJSONEncoder: Bool) throws -> Data {
        let node = UpstreamMapNode(
            reference: UpstreamNodeReference(key: "ab", version: "V"),
            children: .values(
                references.map {
                    .init(
                        key: .init(keyString: $0.id),
                        valueReference: Value.Reference(
                            valueId: Value.ID($0.id), storedVersionId: Version.ID($0.stored)))
                }))
        // JSONEncoder writes "/" as "\/"; the hand-written encoder writes it raw.
        return escapedByJSONEncoder ? try JSONEncoder().encode(node) : node.encodedJSON()
    }

    /// The reference: a dictionary comparison, keeping the last of a repeated ID.
    func expected(_ after: References, _ before: References) -> (changed: [String], removed: [String]) {
        let a = Dictionary(after.map { (Value.ID($0.id), $0.stored) }, uniquingKeysWith: { _, last in last })
        let b = Dictionary(before.map { (Value.ID($0.id), $0.stored) }, uniquingKeysWith: { _, last in last })
        let changed = a.filter { b[$0.key] != $0.value }.map { "\($0.key.rawValue)=\($0.value) \(b[$0.key] != nil)" }
        return (changed.sorted(), b.keys.filter { a[$0] == nil }.map(\.rawValue).sorted())
    }

    @Test func bytesAndStringsGiveTheSameDifferences() throws {
        var generator = SeededGenerator(seed: 31)
        let idPool =
            (0..<40).map { "AB\($0)-\(UUID().uuidString)" } + ["ab/slash", "caf\u{E9}", "cafe\u{301}", "a\"quote"]
        let versions = ["V1", "V2", "V3"]
        var plainCompared = 0
        for round in 0..<400 {
            let ids = idPool.shuffled(using: &generator)
            let onlyASCII = round % 2 == 0
            let pool =
                onlyASCII
                ? ids.filter { $0.utf8.allSatisfy { $0 < 0x80 && $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "\"") } }
                : ids
            var before: References = pool.prefix(Int.random(in: 0...20, using: &generator)).map {
                ($0, versions.randomElement(using: &generator)!)
            }
            var after = before.filter { _ in Int.random(in: 0..<5, using: &generator) > 0 }
            for index in after.indices where Int.random(in: 0..<6, using: &generator) == 0 {
                after[index].stored = "V9"
            }
            after += pool.dropFirst(20).prefix(Int.random(in: 0...3, using: &generator)).map { ($0, "V9") }
            if round % 7 == 0, let repeated = after.first { after.append((repeated.id, "V8")) }
            after.shuffle(using: &generator)
            before.shuffle(using: &generator)
            let escaped = round % 3 == 0
            let a = try UpstreamBucket(json: json(after, escapedByJSONEncoder: escaped))
            let b = try UpstreamBucket(json: json(before, escapedByJSONEncoder: escaped))
            let (changed, removed) = a.differences(from: b)
            let got = (changed.map { "\($0.id.rawValue)=\($0.stored.rawValue) \($0.existed)" }, removed.map(\.rawValue))
            let want = expected(after, before)
            #expect(got.0 == want.changed, "round \(round)")
            #expect(got.1 == want.removed, "round \(round)")
            // Sorted as Strings sort, which the import keeps for a stable order of changes.
            #expect(changed.map(\.id) == changed.map(\.id).sorted(), "round \(round)")
            if onlyASCII { plainCompared += 1 }
        }
        #expect(plainCompared == 200)
    }

    /// Entries spelled as LLVS writes them are matched whole; any other spelling in the same bucket (a space, members
    /// in another order, an escape, a member more) is read member by member, with the same result, and a bucket cut
    /// inside an entry that begins like LLVS's is refused.
    @Test func entriesInOtherSpellingsReadTheSame() throws {
        func bucket(_ entries: [String]) -> Data {
            Data(
                (#"{"reference":{"key":"ab","version":"V"},"children":{"values":["# + entries.joined(separator: ",")
                    + "]}}").utf8)
        }
        let entries = [
            #"{"key":{"keyString":"a"},"valueReference":{"valueId":"a","storedVersionId":"V1"}}"#,
            #"{ "key":{"keyString":"b"},"valueReference":{"valueId":"b","storedVersionId":"V1"}}"#,
            #"{"valueReference":{"storedVersionId":"V1","valueId":"c"},"key":{"keyString":"c"}}"#,
            #"{"key":{"keyString":"d\/"},"valueReference":{"valueId":"d","storedVersionId":"V1"}}"#,
            #"{"key":{"keyString":"e"},"valueReference":{"valueId":"e","storedVersionId":"V1","extra":1}}"#,
            #"{"key":{"keyString":"f"},"valueReference":{"valueId":"f","storedVersionId":"V1"}}"#,
            #"{"key":{"keyString":"g"},"valueReference":{"valueId":"g","storedVersionId":"V1"}}"#,
        ]
        let after = try UpstreamBucket(json: bucket(entries))
        let (changed, removed) = after.differences(from: try UpstreamBucket(json: bucket([])))
        #expect(
            changed.map { "\($0.id.rawValue)=\($0.stored.rawValue) \($0.existed)" }
                == ["a", "b", "c", "d", "e", "f", "g"].map { "\($0)=V1 false" })
        #expect(removed.isEmpty)
        #expect(throws: JSONByteReader.Failure.self) {
            try UpstreamBucket(
                json: Data(
                    #"{"reference":{"key":"ab","version":"V"},"children":{"values":[{"key":{"keyString":"a"#.utf8))
        }
    }

    /// A decomposed and a composed spelling of one ID are one value, as in upstream's Swift dictionaries.
    @Test func canonicallyEqualIDsAreOneValue() throws {
        let a = try UpstreamBucket(json: json([("cafe\u{301}", "V2")], escapedByJSONEncoder: false))
        let b = try UpstreamBucket(json: json([("caf\u{E9}", "V1")], escapedByJSONEncoder: false))
        let (changed, removed) = a.differences(from: b)
        #expect(changed.count == 1 && changed[0].existed && changed[0].stored == "V2")
        #expect(removed.isEmpty)
    }

    @Test func aRootIsNotABucket() {
        let root = UpstreamMapNode(
            reference: UpstreamNodeReference(key: UpstreamLayout.rootNodeKey, version: "V"),
            children: .nodes([UpstreamNodeReference(key: "ab", version: "V")]))
        #expect(throws: UpstreamBucket.NotValues.self) { try UpstreamBucket(json: root.encodedJSON()) }
        #expect(throws: JSONByteReader.Failure.self) {
            try UpstreamBucket(json: Data(#"{"children":{"values":[]}}"#.utf8))
        }
    }
}
