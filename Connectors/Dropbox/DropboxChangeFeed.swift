import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// A `list_folder` cursor as a change feed: `get_latest_cursor` (recursive, on the deepest folder that holds every
/// watched folder) gives "now", `list_folder/continue` the entries since, each with its `path_lower`, so the feed is
/// filtered by path: a watched folder's "ID" in the shared cursor is its lower-cased path. A deleted entry names what
/// went (a folder's contents go with it unlisted), so the removal of a watched folder, or of one above it, expires the
/// cursor. `reset` (and a feed folder that is gone) expire it too. `sync --watch` waits on `list_folder/longpoll`, on
/// the notify host, which never gets the token.
extension DropboxFileSystem: CloudChangeFeed {
    private struct LatestCursorArgument: Encodable {
        var path: String
        var recursive = true
        var include_deleted = false
    }
    private struct CursorAnswer: Decodable { var cursor: String }
    private struct ContinueArgument: Encodable { var cursor: String }
    private struct PollArgument: Encodable {
        var cursor: String
        var timeout: Int64
    }
    private struct PollAnswer: Decodable {
        var changes: Bool
        var backoff: Int64?
    }

    /// How a watched folder is known in the feed: its Dropbox path lower-cased, as `path_lower`.
    func feedKey(_ folder: String) throws -> String { try dropboxPath(folder).lowercased() }

    public func changeCursor(watching folders: [String]) async throws -> String {
        var root = Self.commonFolder(try folders.map(CloudPath.components))
        while true {
            do {
                let cursor = try await api.call(
                    CursorAnswer.self, "files/list_folder/get_latest_cursor",
                    LatestCursorArgument(path: try dropboxPath(root.joined(separator: "/"))), changes: false,
                    safeToRepeat: true, path: root.joined(separator: "/")
                ).cursor
                return try await FeedCursor.start(at: cursor, watching: folders) { try self.feedKey($0) }
            } catch CloudFileSystemError.notFound where !root.isEmpty {
                root.removeLast()  // not made yet: the feed of the folder above sees it made
            }
        }
    }

    /// The components every watched folder starts with.
    static func commonFolder(_ folders: [[String]]) -> [String] {
        guard var common = folders.first else { return [] }
        for folder in folders.dropFirst() {
            let keys = PathKeys(caseInsensitive: true)
            let shared = zip(common, folder).prefix { keys.sameName($0, $1) }.count
            common = Array(common.prefix(shared))
        }
        return common
    }

    public func changes(in folders: [String], since text: String) async throws -> CloudChangeSet {
        let cursor = try await FeedCursor.resume(text, service: "Dropbox", watching: folders) { try self.feedKey($0) }
        let feed = "Dropbox's change feed"
        var token = cursor.token
        var entries: [FeedEntry<DropboxItem>] = []
        var pages = PageTokens(feed, maximumPages: configuration.maximumPages)
        var next: String? = token
        while let position = next {
            let page = try await client.feedPage(
                DropboxListPage.self,
                try api.rpc(
                    "files/list_folder/continue", ContinueArgument(cursor: position), changes: false,
                    safeToRepeat: true),
                feed: feed)
            for item in page.entries {
                guard let lower = item.path_lower, !lower.isEmpty else { continue }
                if item.isDeleted || !item.isFolder,
                    let watched = cursor.folders.first(where: { $0.value == lower || $0.value.hasPrefix(lower + "/") })
                {
                    throw CloudFileSystemError.cursorExpired(
                        "the remote folder \(watched.key) was removed or replaced on Dropbox")
                }
                let parent = String(lower[..<(lower.lastIndex(of: "/") ?? lower.startIndex)])
                entries.append(
                    FeedEntry(
                        id: lower, name: Self.nameEncoding.decode(item.name), parentIDs: [parent],
                        present: !item.isDeleted, item: item))
            }
            token = page.cursor
            next = try pages.next(page.has_more ? page.cursor : nil, items: page.entries.count)
        }
        var after = cursor
        after.token = token
        return try cursor.changes(entries, next: after, service: "Dropbox")
    }

    /// Holds `list_folder/longpoll` open for the time asked (Dropbox takes 30 s to 8 min; it may answer up to 90 s
    /// late), honouring a `backoff` it asked for before; a wait shorter than Dropbox's shortest poll, or one that
    /// a backoff would overrun, is one look at the feed instead.
    public func waitForChanges(in folders: [String], since text: String, timeout: Duration) async throws -> Bool {
        let cursor = try FeedCursor(text: text, service: "Dropbox")
        let clock = ContinuousClock()
        let start = max(clock.now, pollNotBefore.withLock { $0 } ?? clock.now)
        guard timeout >= DropboxConfiguration.shortestPoll,
            start + DropboxConfiguration.shortestPoll <= clock.now + timeout
        else {
            let changes = try await changes(in: folders, since: text)
            return changes.added.values.contains { !$0.isEmpty } || changes.removed.values.contains { !$0.isEmpty }
        }
        try await clock.sleep(until: start)
        let seconds = min(timeout, configuration.longestPoll).components.seconds
        var request = try api.rpc(
            "files/list_folder/longpoll", PollArgument(cursor: cursor.token, timeout: seconds), changes: false,
            safeToRepeat: true, host: configuration.notifyURL)
        request.stallTimeout = .seconds(seconds + 120)
        let response = try await client.send(request, authorization: .none)
        if !response.isSuccess, client.classifier.isExpiredFeedPosition(response) {
            throw CloudFileSystemError.cursorExpired("Dropbox's long poll no longer knows the position sent")
        }
        let answer = try client.decode(PollAnswer.self, response, path: "Dropbox's long poll")
        if let backoff = answer.backoff, backoff > 0 {
            pollNotBefore.withLock { $0 = clock.now + .seconds(min(backoff, 3600)) }
        }
        return answer.changes
    }
}
