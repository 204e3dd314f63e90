import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// The `diff` feed as a change feed: `last=0` gives the current `diffid`; `diffid=N` the events after N, each with
/// the item as it was then. A `diffid` pCloud refuses (any final error code: the reference does not name one for a
/// position it no longer keeps) expires the cursor. `block=1` waits for the next event, for `llvs sync --watch`.
extension PCloudFileSystem: CloudChangeFeed {
    private struct DiffAnswer: Decodable {
        struct Entry: Decodable {
            var event: String
            var metadata: PCloudItem?
        }
        var diffid: UInt64
        var entries: [Entry]?
    }

    private static let removals: Set<String> = ["deletefile", "deletefolder"]

    private func diff(_ parameters: [(String, String)]) async throws -> DiffAnswer {
        do {
            return try await api.call(DiffAnswer.self, "diff", parameters, path: "diff")
        } catch CloudFileSystemError.server(200, let message) where parameters.contains(where: { $0.0 == "diffid" }) {
            throw CloudFileSystemError.cursorExpired(message)
        }
    }

    public func changeCursor(watching folders: [String]) async throws -> String {
        try await FeedCursor.start(at: String(try await diff([("last", "0")]).diffid), watching: folders, in: paths)
    }

    public func changes(in folders: [String], since text: String) async throws -> CloudChangeSet {
        let cursor = try await FeedCursor.resume(text, service: "pCloud", watching: folders, in: paths)
        var entries: [FeedEntry<PCloudItem>] = []
        var position = cursor.token
        for _ in 0..<configuration.maximumDiffPages {
            let answer = try await diff([("diffid", position), ("limit", String(configuration.diffPageSize))])
            for entry in answer.entries ?? [] {
                guard let item = entry.metadata else { continue }
                // Folders keep their plain number (the ID cache's), files get a prefix: the two are separate spaces.
                let id = item.isfolder ? item.id : "file-" + item.id
                let present = !Self.removals.contains(entry.event) && !(item.isdeleted ?? false)
                entries.append(
                    FeedEntry(
                        id: id, name: item.name, parentIDs: item.parentfolderid.map { [String($0)] } ?? [],
                        present: present, item: item))
            }
            let next = String(answer.diffid)
            if (answer.entries?.count ?? 0) < configuration.diffPageSize || next == position {
                var after = cursor
                after.token = next
                return try paths.changes(
                    entries, cursor: cursor, next: after, service: "pCloud", components: CloudPath.components)
            }
            position = next
        }
        throw CloudFileSystemError.server(
            status: 200, message: "pCloud's diff feed did not end after \(configuration.maximumDiffPages) answers")
    }

    /// pCloud's own long poll: `block=1` answers at the next event, or empty after `timeout` seconds.
    public func waitForChanges(in folders: [String], since text: String, timeout: Duration) async throws -> Bool {
        let cursor = try FeedCursor(text: text, service: "pCloud")
        let seconds = max(1, min(Int(timeout.components.seconds), 30))
        let answer = try await diff([
            ("diffid", cursor.token), ("block", "1"), ("timeout", String(seconds)), ("limit", "1"),
        ])
        return !(answer.entries ?? []).isEmpty
    }
}
