import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

/// Graph's delta feed of the drive (`/root/delta`) as a change feed. `token=latest` gives a delta link for "now";
/// the link is followed page by page (`@odata.nextLink`) to the next `@odata.deltaLink`, which is the new cursor.
/// Items carry their parent's ID (never a path in delta answers), so the feed is filtered by the watched folders'
/// IDs; a removed item has a `deleted` facet. 410 (`resyncRequired` and its kin) expires the cursor. Links are
/// followed only on the Graph host itself: the token is never sent elsewhere.
extension OneDriveFileSystem: CloudChangeFeed {
    private struct DeltaItem: Decodable {
        struct Parent: Decodable { var id: String? }
        struct Deleted: Decodable { var state: String? }
        var id: String
        var name: String?
        var parentReference: Parent?
        var deleted: Deleted?
    }
    private struct DeltaPage: Decodable, GraphPage {
        var value: [DeltaItem]
        var nextLink: String?
        var deltaLink: String?
        enum CodingKeys: String, CodingKey {
            case value
            case nextLink = "@odata.nextLink"
            case deltaLink = "@odata.deltaLink"
        }
    }

    public func changeCursor(watching folders: [String]) async throws -> String {
        let (_, link) = try await delta(from: try configuration.item([], "delta", [("token", "latest")]))
        return try await FeedCursor.start(at: link, watching: folders, id: folderID)
    }

    public func changes(in folders: [String], since text: String) async throws -> CloudChangeSet {
        let cursor = try await FeedCursor.resume(text, service: "OneDrive", watching: folders, id: folderID)
        guard let start = try? graphURL(cursor.token, what: "the saved position") else {
            throw CloudFileSystemError.cursorExpired(
                "the saved delta link is not on \(configuration.graphURL.host ?? "Graph")")
        }
        let (items, link) = try await delta(from: start)
        var after = cursor
        after.token = link
        let entries = items.map { item in
            FeedEntry<DeltaItem>(
                id: item.id, name: item.name.map(Self.nameEncoding.decode),
                parentIDs: item.parentReference?.id.map { [$0] } ?? [],
                present: item.deleted == nil)
        }
        let changes = try cursor.changes(entries, next: after, service: "OneDrive")
        // The watched folders existed at the cursor and are still there (their removal would have expired it):
        // later paths below them resolve, and uploads into them go, without looking them up again.
        for path in cursor.folders.keys { self.folders.remember(try components(path)) }
        return changes
    }

    /// Every page from `url` to the delta link.
    private func delta(from url: URL) async throws -> ([DeltaItem], String) {
        let feed = "OneDrive's delta feed"
        let pages =
            try await graphPages(from: url, what: feed) { url, _ in
                try await client.feedPage(DeltaPage.self, HTTPRequest(url: url), feed: feed)
            } ?? []
        guard let link = pages.last?.deltaLink else {
            throw CloudFileSystemError.server(status: 200, message: "the last page of \(feed) has no deltaLink")
        }
        _ = try graphURL(link, what: feed)
        return (pages.flatMap { $0.value }, link)
    }

    /// The ID of a watched folder; nil while it does not exist.
    private func folderID(_ path: String) async throws -> String? {
        try await item(try components(path), path: path).flatMap { $0.isFolder ? $0.id : nil }
    }
}
