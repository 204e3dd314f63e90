import Foundation
import LLVSSupport
import LLVSHTTP

/// What an upload session will be committed as is known only at `finish`; the session only remembers whether the
/// client closed it.
struct MockDropboxUpload: Sendable {
    var closed = false
}

/// One entry of the change feed: an item as it was when it changed, or where something was deleted.
struct MockDropboxChange: Sendable {
    var metadata: MockDropboxMetadata
}

/// Everything the mock account holds, behind one lock: the shared item tree (names case-insensitive, as Dropbox's
/// are), upload sessions, and the journal the `list_folder` cursors read.
struct MockDropboxState: Sendable {
    var tree: MockItemTree<MockDropboxItem>
    var sessions = MockUploadSessions<MockDropboxUpload>()
    var counter = 0
    /// Every change, in order; a cursor holds a position in it (`journalBase` + index).
    var journal: [MockDropboxChange] = []
    var journalBase = 0
    /// This run's: a cursor from an earlier run of a mock kept with `--state` names another, and is `reset`.
    let generation = String(UUID().uuidString.prefix(8))
    var rejectRemaining = 0

    static let rootID = "id:AAAAAAAAAAAAAAAAAAAAAA"

    init() {
        let now = Date()
        tree = MockItemTree(
            root: MockDropboxItem(
                id: Self.rootID, name: "", parents: [], isFolder: true, serverModified: now, clientModified: now),
            caseInsensitiveNames: true)
    }

    /// `id:` and 22 characters, as Dropbox's IDs look.
    mutating func newID() -> String {
        counter += 1
        let digits = String(counter)
        return "id:llvsmock" + String(repeating: "0", count: max(0, 14 - digits.count)) + digits
    }

    /// A revision: lowercase hex, at least nine digits (Dropbox's are twelve or more), increasing.
    mutating func newRev() -> String {
        counter += 1
        return String(0x015c_0000_0000 + counter, radix: 16)
    }

    func live(_ id: String) -> MockDropboxItem? { tree.live(id) }

    /// The live item at `components` below the root, compared without regard to case.
    func item(at components: [String]) -> MockDropboxItem? {
        var current = tree[Self.rootID]
        for name in components {
            guard let folder = current, folder.isFolder else { return nil }
            current = tree.liveChild(named: name, of: folder.id)
        }
        return current
    }

    /// The names from the root to an item, as stored.
    func names(of id: String) -> [String] {
        guard id != Self.rootID, let path = tree.path(of: id) else { return [] }
        return path.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
    }

    func metadata(_ item: MockDropboxItem) -> MockDropboxMetadata {
        let names = self.names(of: item.id)
        let display = names.isEmpty ? "" : "/" + names.joined(separator: "/")
        var metadata = MockDropboxMetadata(
            kind: item.isFolder ? .folder : .file, name: item.name, pathLower: display.lowercased(),
            pathDisplay: display, id: item.id)
        if !item.isFolder {
            metadata.size = item.size
            metadata.rev = item.rev
            metadata.contentHash = item.contentHash ?? ""
            metadata.serverModified = item.serverModified
            metadata.clientModified = item.clientModified
        }
        return metadata
    }

    /// Records an item as it is now in the journal, and everything in it when asked (a folder moved or copied
    /// shows each item at its new path).
    mutating func note(_ id: String, withContents: Bool = false) {
        guard let item = tree[id] else { return }
        journal.append(MockDropboxChange(metadata: metadata(item)))
        guard withContents, item.isFolder else { return }
        for child in tree.children(of: id) where !child.trashed { note(child.id, withContents: true) }
    }

    /// Records that what `metadata` described is gone.
    mutating func noteDeleted(_ metadata: MockDropboxMetadata) {
        var deleted = metadata
        deleted.kind = .deleted
        journal.append(MockDropboxChange(metadata: deleted))
    }

    /// Every live item in a folder, in creation order, and everything below for a recursive listing; files a
    /// listing lags on are left out (and come a listing closer to showing).
    mutating func listing(of folderID: String, recursive: Bool) -> [MockDropboxItem] {
        var items: [MockDropboxItem] = []
        var pending = [folderID]
        while let next = pending.popLast() {
            let children = tree.liveChildren(of: next, from: 0, limit: Int.max).page
            tree.listingServed(of: next)
            items += children
            if recursive { pending += children.filter(\.isFolder).map(\.id).reversed() }
        }
        return items
    }
}
