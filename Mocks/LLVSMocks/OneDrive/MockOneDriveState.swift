import Foundation
import LLVSSupport

/// What an upload session will make: a file named `name` in `parentID`, replacing `replaceID` when given.
struct MockOneDriveUpload: Sendable {
    var parentID: String
    var name: String
    var replaceID: String?
    var conflictBehavior: String
    var expires: Date
    /// The client's times given when the session was made, set on the file it makes.
    var fileSystemInfo: MockFileSystemInfo?
}

/// Everything the mock drive holds, behind one lock: the shared item tree (names case-insensitive, as OneDrive's
/// are) and the shared upload sessions.
struct MockOneDriveState: Sendable {
    var tree: MockItemTree<MockOneDriveItem>
    var sessions = MockUploadSessions<MockOneDriveUpload>()
    var rejectRemaining = 0
    var counter = 101
    /// Copies by monitor: the ID of the item each made.
    var copies: [String: String] = [:]
    var copyCounter = 0

    static let rootID = "LLVSMOCK!101"

    init() {
        let now = Date()
        tree = MockItemTree(
            root: MockOneDriveItem(
                id: Self.rootID, name: "root", parents: [], isFolder: true, created: now, modified: now),
            caseInsensitiveNames: true, canonicallyEquivalentNamesCollide: true)
    }

    mutating func newID() -> String {
        counter += 1
        return "LLVSMOCK!\(counter)"
    }

    func live(_ id: String) -> MockOneDriveItem? {
        guard let item = tree[id], !tree.isTrashed(id) else { return nil }
        return item
    }

    /// The live child of a folder with this name (names are case-insensitive and unique).
    func child(named name: String, of folderID: String) -> MockOneDriveItem? {
        tree.children(of: folderID, named: name).first { !tree.isTrashed($0.id) }
    }

    /// The path of an item below the root (`a/b`), for `parentReference.path` and the 400-character rule.
    func path(of id: String) -> String { id == Self.rootID ? "" : tree.path(of: id) ?? "" }
}
