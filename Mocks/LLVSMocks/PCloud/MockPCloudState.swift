import Foundation
import LLVSSupport

/// One entry of pCloud's change feed (`diff`): the event and the item as it was then.
struct MockPCloudDiffEntry: Sendable {
    var event: String
    var time: Date
    var item: MockPCloudItem
}

/// Everything the mock account holds, behind one lock: the shared item tree (names case-sensitive, as pCloud's
/// are), upload sessions by numeric ID, the change feed, and the result codes tests ask it to fail calls with.
struct MockPCloudState: Sendable {
    var tree: MockItemTree<MockPCloudItem>
    var sessions = MockUploadSessions<Int>()
    var diff: [MockPCloudDiffEntry] = []
    /// What `diffid`s count from (a diffid is this + a count of events): moved far ahead to refuse every diffid
    /// handed out so far, as pCloud would refuse one it no longer keeps.
    var diffBase = 0
    var counter: UInt64 = 1000
    var uploadCounter = 7_000_000
    /// Result codes the next calls fail with, answered with HTTP 200 as pCloud does.
    var failingResults: [Int] = []
    /// A share of calls failing with a result code, from a seeded generator.
    var randomResult: (code: Int, rate: Double, generator: SeededGenerator)?

    static let rootID = "d0"

    init() {
        tree = MockItemTree(
            root: MockPCloudItem(id: Self.rootID, name: "/", parents: [], isFolder: true, created: Date()),
            caseInsensitiveNames: false)
    }

    mutating func newID(folder: Bool) -> String {
        counter += 1
        return (folder ? "d" : "f") + String(counter)
    }

    func live(_ id: String) -> MockPCloudItem? { tree.live(id) }
    func child(named name: String, of folderID: String) -> MockPCloudItem? { tree.liveChild(named: name, of: folderID) }

    /// Records an event in the feed for an item as it is now.
    mutating func log(_ event: String, _ id: String) {
        guard let item = tree[id] else { return }
        diff.append(MockPCloudDiffEntry(event: event, time: item.modified, item: item))
    }

    /// The result code this call fails with, if a test asked for one.
    mutating func injectedResult() -> Int? {
        if !failingResults.isEmpty { return failingResults.removeFirst() }
        guard var random = randomResult else { return nil }
        let roll = Double(random.generator.next() % 1_000_000) / 1_000_000
        randomResult = random
        return roll < random.rate ? random.code : nil
    }
}
