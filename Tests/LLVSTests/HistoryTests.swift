import Foundation
import LLVS
import LLVSSupport
import Testing

@Suite struct HistoryTests {
    /// A seeded history with branches and merges, given to the history out of order.
    static func branchingHistory(count: Int, seed: UInt64) throws -> History {
        var generator = SeededGenerator(seed: seed)
        var made: [Version] = []
        for i in 0..<count {
            var predecessors: Version.Predecessors?
            if !made.isEmpty {
                let first = made[Int(generator.next() % UInt64(made.count))].id
                let second = generator.next() % 4 == 0 ? made[Int(generator.next() % UInt64(made.count))].id : nil
                predecessors = Version.Predecessors(idOfFirst: first, idOfSecond: second == first ? nil : second)
            }
            // Few distinct timestamps, so ties fall to the ID.
            made.append(
                Version(
                    id: Version.ID(String(format: "v%05d-%llu", i, generator.next() % 1000)),
                    predecessors: predecessors,
                    timestamp: TimeInterval(generator.next() % 50)))
        }
        var history = History()
        var shuffled = made
        shuffled.shuffle(using: &generator)
        #expect(try history.add(unordered: shuffled).isEmpty)
        return history
    }

    /// Every version after its predecessors, and the same order as sorting the whole history by generation, then
    /// timestamp, then ID (what the bucketed walk replaced).
    @Test(arguments: [1, 2, 3])
    func theTopologicalWalkPutsPredecessorsFirstInTheDocumentedOrder(seed: UInt64) throws {
        let history = try Self.branchingHistory(count: 600, seed: seed)
        let walk = history.topologicallySorted()
        #expect(walk.count == history.count)
        var position: [Version.ID: Int] = [:]
        for (index, version) in walk.enumerated() { position[version.id] = index }
        for version in walk {
            for predecessor in version.predecessors?.ids ?? [] {
                #expect(
                    position[predecessor]! < position[version.id]!, "\(predecessor) after its successor \(version.id)")
            }
        }
        let reference = history.versions.values.sorted { a, b in
            let ga = history.generation(of: a.id)!, gb = history.generation(of: b.id)!
            return ga != gb ? ga < gb : History.isOrderedBefore(a, b)
        }
        #expect(walk.map(\.id) == reference.map(\.id))
    }

    /// A part of the history (what a sync sends) comes in the whole walk's order: a random third, the last five,
    /// and none.
    @Test(arguments: [1, 2, 3])
    func aPartOfTheHistoryIsOrderedAsTheWholeIs(seed: UInt64) throws {
        let history = try Self.branchingHistory(count: 600, seed: seed)
        let walk = history.topologicallySorted()
        var generator = SeededGenerator(seed: seed)
        let aThird = Set(walk.map(\.id).shuffled(using: &generator).prefix(200))
        #expect(
            history.topologicallySorted { aThird.contains($0.id) }.map(\.id) == walk.map(\.id).filter(aThird.contains))
        let lastFew = Set(walk.suffix(5).map(\.id))
        #expect(history.topologicallySorted { lastFew.contains($0.id) }.map(\.id) == walk.suffix(5).map(\.id))
        #expect(history.topologicallySorted { _ in false }.isEmpty)
    }
}
