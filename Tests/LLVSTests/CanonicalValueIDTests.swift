import Foundation
import Testing
@testable import LLVS
import LLVSSupport

/// A value ID means one value whatever its Unicode normalization, at every size of store: the composed and the
/// decomposed spelling of `café/x` are one ID, as Swift strings (and LLVS's IDs) are equal under canonical
/// equivalence. The map keeps the composed (NFC) spelling.
@Suite struct CanonicalValueIDTests {
    let directory = TemporaryDirectory()
    static let composed = "caf\u{E9}/x"
    static let decomposed = "cafe\u{301}/x"

    @Test func theTwoSpellingsDifferInBytesAndAreEqualAsIDs() {
        #expect(!Self.composed.utf8.elementsEqual(Self.decomposed.utf8))
        #expect(Value.ID(Self.composed) == Value.ID(Self.decomposed))
    }

    @Test(arguments: [1, 32, 33, 10_000], StorageKind.allCases)
    func bothSpellingsReachOneValueAtEverySize(count: Int, storage: StorageKind) throws {
        let store = try makeStore(in: directory, name: "store-\(count)-\(storage)", storage: storage)
        var fillers: [Value] = []
        for index in 0..<(count - 1) { fillers.append(Value("filler-\(index)", "f")) }
        let v1 = try store.makeVersion(basedOnPredecessor: nil, inserting: fillers + [Value(Self.composed, "composed")])
        #expect(
            try store.value(id: Value.ID(Self.decomposed), at: v1.id) != nil, "the decomposed spelling finds the value")
        let v2 = try store.makeVersion(basedOnPredecessor: v1.id, updating: [Value(Self.decomposed, "decomposed")])
        #expect(try store.valueCount(at: v2.id) == count, "an update, not a second value")
        for spelling in [Self.composed, Self.decomposed] {
            #expect(try store.value(id: Value.ID(spelling), at: v2.id)?.data == Data("decomposed".utf8))
        }
        let ids = try store.valueReferences(at: v2.id).map(\.valueId.rawValue).filter { $0.hasPrefix("caf") }
        #expect(ids.count == 1 && ids[0].utf8.elementsEqual(Self.composed.utf8), "kept once, composed: \(ids)")
        let v3 = try store.makeVersion(basedOnPredecessor: v2.id, removing: [Value.ID(Self.decomposed)])
        #expect(try store.value(id: Value.ID(Self.composed), at: v3.id) == nil)
        #expect(try store.valueCount(at: v3.id) == count - 1)
    }

    /// A map written by an earlier build placed each ID by the hash of the bytes it was given, so a large store could
    /// hold both spellings as two values. Both spellings now read the composed one's value; the next write of the ID
    /// leaves one value, composed; IDs not written keep their values.
    @Test(arguments: StorageKind.allCases) func aStoreHoldingBothSpellingsFromAnEarlierBuildEndsWithOne(
        storage: StorageKind
    ) throws {
        let store = try makeStore(in: directory, name: "legacy-\(storage)", storage: storage)
        var values = (0..<9_998).map { Value("filler-\($0)", "f") }
        values.append(Value(Self.composed, Self.composed))
        let base = try store.makeVersion(basedOnPredecessor: nil, inserting: values)
        // The decomposed spelling added as an earlier build added it: placed by the hash of its own bytes.
        let versionId = Version.ID.random()
        let writer = try store.storage.makeVersionWriter(for: versionId)
        let id = Value.ID(Self.decomposed)
        let edit = MapEdit(
            key: .legacy(id, spelling: Self.decomposed),
            entry: MapEntry(
                valueId: id, data: try writer.append(Data(Self.decomposed.utf8), zone: .values),
                size: Int64(Self.decomposed.utf8.count)))
        let stored = try store.storedVersion(base.id)
        let legacy = Version(id: versionId, predecessors: .init(idOfFirst: base.id), timestamp: 1, valueDataSize: 0)
        try store.commitWritten(
            legacy, edits: [edit], base: stored.mapRoot, baseCount: stored.valueCount, writer: writer)
        #expect(try store.valueCount(at: versionId) == 10_000)
        #expect(
            try store.valueReferences(at: versionId).filter { $0.valueId.rawValue.hasPrefix("caf") }.count == 2,
            "two values, as the earlier build left them")
        for spelling in [Self.composed, Self.decomposed] {
            #expect(try store.value(id: Value.ID(spelling), at: versionId)?.data == Data(Self.composed.utf8))
        }

        let next = try store.makeVersion(basedOnPredecessor: versionId, updating: [Value(Self.decomposed, "now")])
        #expect(try store.valueCount(at: next.id) == 9_999)
        let ids = try store.valueReferences(at: next.id).map(\.valueId.rawValue).filter { $0.hasPrefix("caf") }
        #expect(ids.count == 1 && ids[0].utf8.elementsEqual(Self.composed.utf8), "\(ids)")
        #expect(try store.value(id: Value.ID(Self.decomposed), at: next.id)?.data == Data("now".utf8))
        #expect(try store.value(id: "filler-42", at: next.id)?.data == Data("f".utf8))
    }
}
