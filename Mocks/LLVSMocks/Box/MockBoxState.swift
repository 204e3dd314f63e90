import Foundation
import LLVSSupport

/// Everything the mock account holds, behind one lock: the shared item tree (names case-insensitive and unique,
/// as Box's are), upload sessions, the event stream, and what tests asked the mock to do.
struct MockBoxState: Sendable {
    var tree: MockItemTree<MockBoxItem>
    var sessions = MockUploadSessions<MockBoxUpload>()
    var events: [MockBoxEvent] = []
    /// What stream positions count from (a position is this + an index in `events`): moved far ahead to refuse every
    /// position handed out so far (400), as Box refuses one it no longer keeps.
    var eventBase = 0
    var counter = 100_000
    /// Downloads answered 202 + Retry-After still to come.
    var downloadsNotReady = 0
    /// Commits answered 202 + Retry-After for every new session.
    var processingCommits = 0
    var rejectRemaining = 0

    static let rootID = "0"

    init() {
        tree = MockItemTree(
            root: MockBoxItem(id: Self.rootID, name: "All Files", parents: [], isFolder: true, created: Date()),
            caseInsensitiveNames: true)
    }

    mutating func newID() -> String {
        counter += 1
        return String(counter)
    }

    func live(_ id: String) -> MockBoxItem? { tree.live(id) }
    func child(named name: String, of folderID: String) -> MockBoxItem? { tree.liveChild(named: name, of: folderID) }

    /// Records an event for an item as it is now; Box sends each event with its own ID.
    mutating func log(_ type: String, _ id: String) {
        guard let item = tree[id] else { return }
        events.append(MockBoxEvent(id: UUID().uuidString.lowercased(), type: type, created: item.modified, item: item))
    }
}
