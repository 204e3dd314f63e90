import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// The changes feed (`changes/startPageToken`, `changes`): what changed anywhere in the drive since a token, so a
/// sync asks "anything new?" with one request instead of listing folders that grow with the remote. Drive reports
/// each file once, in its latest state, with its parents; entries outside the watched folders are dropped, and the
/// ones inside are remembered in the ID cache so the new files download without a lookup.
extension GoogleDriveFileSystem: CloudChangeFeed {
    private struct StartToken: Decodable { var startPageToken: String }
    private struct ChangeList: Decodable {
        struct Change: Decodable {
            var fileId: String?
            var removed: Bool?
            var file: GoogleDriveItem?
        }
        var changes: [Change]?
        var nextPageToken: String?
        var newStartPageToken: String?
    }

    public func changeCursor(watching folders: [String]) async throws -> String {
        let token = try await client.json(
            StartToken.self, HTTPRequest(url: try configuration.api("/changes/startPageToken")),
            path: "changes/startPageToken"
        ).startPageToken
        return try await FeedCursor.start(at: token, watching: folders, in: paths)
    }

    public func changes(in folders: [String], since text: String) async throws -> CloudChangeSet {
        let cursor = try await FeedCursor.resume(text, service: "Google Drive", watching: folders, in: paths)
        var entries: [FeedEntry<GoogleDriveItem>] = []
        var pageToken = cursor.token
        var tokens = PageTokens("Google Drive's changes feed", maximumPages: configuration.maximumPages)
        while true {
            let page = try await client.feedPage(
                ChangeList.self,
                HTTPRequest(
                    url: try configuration.api(
                        "/changes",
                        [
                            ("pageToken", pageToken),
                            (
                                "fields",
                                "nextPageToken,newStartPageToken,changes(fileId,removed,file(\(GoogleDriveItem.feedFields)))"
                            ),
                            ("pageSize", String(configuration.pageSize)), ("spaces", "drive"),
                        ])), feed: "Google Drive's changes feed")
            for change in page.changes ?? [] {
                guard let id = change.fileId ?? change.file?.id else { continue }
                let present = !(change.removed ?? false) && !(change.file?.trashed ?? false)
                entries.append(
                    FeedEntry(
                        id: id, name: change.file?.name, parentIDs: change.file?.parents ?? [], present: present,
                        item: change.file))
            }
            if let next = try tokens.next(page.nextPageToken, items: page.changes?.count ?? 0) {
                pageToken = next; continue
            }
            guard let newStart = page.newStartPageToken else {
                throw CloudFileSystemError.server(
                    status: 200, message: "Google Drive's changes page has neither nextPageToken nor newStartPageToken")
            }
            var next = cursor
            next.token = newStart
            return try paths.changes(
                entries, cursor: cursor, next: next, service: "Google Drive", components: CloudPath.components)
        }
    }
}
