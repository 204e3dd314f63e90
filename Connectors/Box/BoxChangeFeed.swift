import Foundation
import LLVS
import LLVSSupport
import LLVSCloudService
import LLVSHTTP

/// The user event stream (`GET /events`, `stream_type=changes`) as a change feed. Box may send an event twice and
/// out of order, so events are de-duplicated by `event_id` and applied in the order they happened; the item in
/// each event is as it was then (`item_status` says whether it is live). A position Box no longer accepts (400)
/// expires the cursor.
extension BoxFileSystem: CloudChangeFeed {
    private struct EventPage: Decodable {
        struct Event: Decodable {
            var event_id: String?
            var event_type: String?
            var created_at: String?
            var source: BoxItem?
        }
        var entries: [Event]?
        var next_stream_position: StreamPosition
        var chunk_size: Int?
    }

    /// Box sends the position as a number or a string.
    private struct StreamPosition: Decodable {
        var text: String
        init(from decoder: any Decoder) throws {
            let container = try decoder.singleValueContainer()
            if let number = try? container.decode(Int64.self) {
                text = String(number)
            } else {
                text = try container.decode(String.self)
            }
        }
    }

    /// Events that leave the item out of its folder.
    private static let removals: Set<String> = ["ITEM_TRASH", "ITEM_MOVE_TO_TRASH", "ITEM_DELETE"]

    private func events(after position: String) async throws -> EventPage {
        let request = HTTPRequest(
            url: try configuration.api(
                "/events",
                [
                    ("stream_position", position), ("stream_type", "changes"),
                    ("limit", String(configuration.eventPageSize)),
                ]))
        // "now" is where a new cursor starts: a refusal of it is a failure, not an expired position.
        if position == "now" { return try await client.json(EventPage.self, request, path: "events") }
        return try await client.feedPage(EventPage.self, request, feed: "Box's event stream")
    }

    public func changeCursor(watching folders: [String]) async throws -> String {
        try await FeedCursor.start(
            at: try await events(after: "now").next_stream_position.text, watching: folders, in: paths,
            components: components)
    }

    public func changes(in folders: [String], since text: String) async throws -> CloudChangeSet {
        let cursor = try await FeedCursor.resume(
            text, service: "Box", watching: folders, in: paths, components: components)
        var seen = Set<String>()
        var events: [(order: Int, time: Date, entry: FeedEntry<BoxItem>)] = []
        var position = cursor.token
        for _ in 0..<configuration.maximumPages {
            let page = try await self.events(after: position)
            let entries = page.entries ?? []
            for event in entries {
                guard let item = event.source, item.type == "file" || item.type == "folder" else { continue }
                if let id = event.event_id, !seen.insert(id).inserted { continue }
                let present = item.isActive && !Self.removals.contains(event.event_type ?? "")
                let time = event.created_at.flatMap(RFC3339Date.parse) ?? .distantPast
                events.append(
                    (
                        events.count, time,
                        FeedEntry(
                            id: item.id, name: Self.nameEncoding.decode(item.name),
                            parentIDs: item.parent.map { [$0.id] } ?? [], present: present, item: item)
                    ))
            }
            let next = page.next_stream_position.text
            // Caught up: a short chunk, or a position that did not move.
            if entries.count < configuration.eventPageSize || next == position {
                position = next
                var after = cursor
                after.token = position
                let ordered = events.sorted { $0.time != $1.time ? $0.time < $1.time : $0.order < $1.order }.map(
                    \.entry)
                return try paths.changes(ordered, cursor: cursor, next: after, service: "Box", components: components)
            }
            position = next
        }
        throw CloudFileSystemError.server(
            status: 0, message: "Box's event stream did not end after \(configuration.maximumPages) pages")
    }
}
