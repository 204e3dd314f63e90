import Foundation
@testable import LLVS
import LLVSSupport
import Testing

/// The zip-v1 importer orders versions on indices, not through a History: it must give History's order exactly,
/// and name a version whose predecessor is missing or lies on a cycle.
@Suite struct ZipVersionOrderTests {
    @Test(arguments: [1, 2, 3, 4])
    func theOrderIsHistorysOrder(seed: UInt64) throws {
        let history = try HistoryTests.branchingHistory(count: 400, seed: seed)
        var generator = SeededGenerator(seed: seed + 100)
        let shuffled = history.versions.values.shuffled(using: &generator)
        let ordered = try ZipV1Importer.predecessorsFirst(shuffled) { .versionNotFound($0) }
        #expect(ordered.map(\.id) == history.topologicallySorted().map(\.id))
    }

    @Test func aMissingPredecessorIsNamed() {
        let versions = [
            Version(id: "A", timestamp: 1), Version(id: "B", predecessors: .init(idOfFirst: "A"), timestamp: 2),
            Version(id: "C", predecessors: .init(idOfFirst: "B", idOfSecond: "gone"), timestamp: 3),
        ]
        #expect(throws: StoreError.versionNotFound("C")) {
            try ZipV1Importer.predecessorsFirst(versions) { .versionNotFound($0) }
        }
    }

    @Test func aCycleIsNamed() {
        let versions = [
            Version(id: "A", timestamp: 1), Version(id: "B", predecessors: .init(idOfFirst: "C"), timestamp: 2),
            Version(id: "C", predecessors: .init(idOfFirst: "B"), timestamp: 3),
        ]
        #expect(throws: StoreError.versionNotFound("B")) {
            try ZipV1Importer.predecessorsFirst(versions) { .versionNotFound($0) }
        }
    }

    @Test func aRepeatedVersionIsRefused() {
        let versions = [Version(id: "A", timestamp: 1), Version(id: "A", timestamp: 2)]
        #expect(throws: StoreError.versionAlreadyExists("A")) {
            try ZipV1Importer.predecessorsFirst(versions) { .versionNotFound($0) }
        }
    }
}
