import Foundation
import LLVSSupport
import LLVSHTTP

/// Box's items, listings, downloads, deletes and events, as the real service answers them.
extension MockBoxServer {
    /// An item as Box describes it; with `fields`, only those (and `type`, `id`, `etag`, which Box always sends).
    /// Only what is asked for is computed: a page of 1000 items is most of a listing's time.
    func render(_ item: MockBoxItem, fields: Set<String>?, in state: MockBoxState) -> [String: Any] {
        func wants(_ key: String) -> Bool { fields?.contains(key) ?? true }
        let isRoot = item.id == MockBoxState.rootID
        let sequence: Any = isRoot ? NSNull() : String(item.sequence)
        var object: [String: Any] = ["type": item.type, "id": item.id, "etag": sequence]
        if wants("sequence_id") { object["sequence_id"] = sequence }
        if wants("name") { object["name"] = item.name }
        if wants("created_at") { object["created_at"] = MockBoxTime.format(item.created) }
        if wants("modified_at") { object["modified_at"] = MockBoxTime.format(item.modified) }
        if wants("content_created_at") {
            object["content_created_at"] = MockBoxTime.format(item.contentCreated ?? item.created)
        }
        if wants("content_modified_at") {
            object["content_modified_at"] = MockBoxTime.format(item.contentModified ?? item.modified)
        }
        if wants("item_status") { object["item_status"] = state.tree.isTrashed(item.id) ? "trashed" : "active" }
        if wants("trashed_at") { object["trashed_at"] = item.trashedAt.map(MockBoxTime.format) ?? NSNull() }
        if wants("purged_at") { object["purged_at"] = NSNull() }
        for key in ["created_by", "modified_by", "owned_by"] where wants(key) { object[key] = Self.user }
        if wants("shared_link") { object["shared_link"] = NSNull() }
        if wants("path_collection") { object["path_collection"] = pathCollection(item, in: state) }
        if wants("description") { object["description"] = "" }
        if wants("size") { object["size"] = item.isFolder ? state.tree.liveSize(of: item.id) : item.size }
        if wants("parent"), let parentID = item.parents.first, let parent = state.tree[parentID] {
            let parentSequence: Any = parent.id == MockBoxState.rootID ? NSNull() : String(parent.sequence)
            object["parent"] =
                [
                    "type": "folder", "id": parent.id, "name": parent.name, "etag": parentSequence,
                    "sequence_id": parentSequence,
                ] as [String: Any]
        }
        if !item.isFolder {
            if wants("sha1") { object["sha1"] = item.sha1 }
            if wants("file_version") {
                object["file_version"] = ["type": "file_version", "id": item.versionID, "sha1": item.sha1]
            }
        }
        return object
    }

    /// The account's user, as Box names the creator, modifier and owner of every item.
    static var user: [String: Any] {
        ["type": "user", "id": "4242", "name": "LLVS Mock", "login": "llvs-mock@example.com"]
    }

    /// The folders from the root down to the item's parent; an item in the trash is in Box's "Trash" folder.
    func pathCollection(_ item: MockBoxItem, in state: MockBoxState) -> [String: Any] {
        func mini(_ id: String, _ name: String, _ sequence: Any) -> [String: Any] {
            ["type": "folder", "id": id, "sequence_id": sequence, "etag": sequence, "name": name]
        }
        if item.trashed { return ["total_count": 1, "entries": [mini("1", "Trash", NSNull())]] }
        var entries: [[String: Any]] = []
        var current = item.parents.first.flatMap { state.tree[$0] }
        while let folder = current, entries.count < 256 {
            let sequence: Any = folder.id == MockBoxState.rootID ? NSNull() : String(folder.sequence)
            entries.insert(
                mini(folder.id, folder.id == MockBoxState.rootID ? "All Files" : folder.name, sequence), at: 0)
            current = folder.parents.first.flatMap { state.tree[$0] }
        }
        return ["total_count": entries.count, "entries": entries]
    }

    static func fields(_ request: IncomingRequest) -> Set<String>? {
        request.query["fields"].map { Set($0.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }) }
    }

    func liveFolder(_ id: String, _ state: MockBoxState) throws -> MockBoxItem {
        guard let folder = state.live(id), folder.isFolder else { throw MockBoxError.notFound }
        return folder
    }

    func liveFile(_ id: String, _ state: MockBoxState) throws -> MockBoxItem {
        guard let file = state.live(id), !file.isFolder else { throw MockBoxError.notFound }
        return file
    }

    /// The 409 for a name in use; Box names the item there (an array for folders, one object for uploads).
    func nameInUse(_ existing: MockBoxItem, asArray: Bool, in state: MockBoxState) -> MockBoxError {
        let conflict = render(
            existing, fields: ["type", "id", "name", "sha1", "file_version", "sequence_id"], in: state)
        return MockBoxError(
            409, "item_name_in_use", "Item with the same name already exists",
            context: ["conflicts": asArray ? [conflict] as Any : conflict as Any])
    }

    static func jsonBody(_ request: IncomingRequest) throws -> [String: Any] {
        guard let object = try? JSONSerialization.jsonObject(with: request.bodyData) as? [String: Any] else {
            throw MockBoxError(400, "bad_request", "The request body is not a JSON object")
        }
        return object
    }

    static func parentID(_ object: [String: Any]) -> String? {
        (object["parent"] as? [String: Any])?["id"] as? String
    }

    // MARK: Users and folders

    func userInfo() -> MockResponse {
        let used = state.withLock { $0.tree.usage }
        return .json(
            200,
            [
                "type": "user", "id": "4242", "name": "LLVS Mock", "login": "llvs-mock@example.com",
                "space_amount": settings.quotaBytes, "space_used": used, "max_upload_size": 5 * 1024 * 1024 * 1024,
                "status": "active",
            ])
    }

    func createFolder(_ request: IncomingRequest) throws -> MockResponse {
        let body = try Self.jsonBody(request)
        guard let name = body["name"] as? String, let parentID = Self.parentID(body) else {
            throw MockBoxError(400, "bad_request", "name and parent.id are required")
        }
        guard MockBoxNames.isValid(name) else { throw MockBoxError(400, "item_name_invalid", "Item name invalid") }
        let raced = server.faults.fires("name-in-use", method: request.method, path: request.path)
        return try state.withLock { state in
            let parent = try liveFolder(parentID, state)
            if raced, state.child(named: name, of: parent.id) == nil {
                // Another client made the same folder a moment before this request arrived.
                let other = MockBoxItem(
                    id: state.newID(), name: name, parents: [parent.id], isFolder: true, created: state.tree.tick())
                state.tree.insert(other)
                state.log("ITEM_CREATE", other.id)
            }
            if let existing = state.child(named: name, of: parent.id) {
                throw nameInUse(existing, asArray: true, in: state)
            }
            let folder = MockBoxItem(
                id: state.newID(), name: name, parents: [parent.id], isFolder: true, created: state.tree.tick())
            state.tree.insert(folder)
            state.log("ITEM_CREATE", folder.id)
            return .json(201, render(folder, fields: Self.fields(request), in: state))
        }
    }

    func folder(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        try state.withLock { state in
            let folder = try liveFolder(id, state)
            var object = render(folder, fields: Self.fields(request), in: state)
            if Self.fields(request) == nil {
                let (page, total) = state.tree.liveChildren(of: id, from: 0, limit: 100)
                object["item_collection"] = [
                    "total_count": total, "offset": 0, "limit": 100,
                    "entries": page.map {
                        render($0, fields: ["type", "id", "name", "sequence_id", "etag"], in: state)
                    },
                ]
            }
            return .json(200, object)
        }
    }

    /// Where a page of a collection starts and how long it is: by marker (`usemarker=true`, then `marker`) or by
    /// `offset`, at most 1000 items, as Box pages folders and the trash.
    struct Paging {
        var start = 0
        var limit: Int
        var useMarker: Bool

        init(_ query: [String: String]) throws {
            limit = min(1000, max(1, Int(query["limit"] ?? "") ?? 100))
            // Box reads booleans without regard to case (the SDK sends "True")
            useMarker = query["usemarker"]?.lowercased() == "true"
            if let marker = query["marker"], !marker.isEmpty {
                guard let data = Data(base64Encoded: marker), let value = Int(String(decoding: data, as: UTF8.self)),
                    value >= 0
                else {
                    throw MockBoxError(
                        400, "invalid_parameter", "Invalid value '\(marker)' for query parameter 'marker'")
                }
                start = value
            } else if let offset = query["offset"] {
                guard let value = Int(offset), value >= 0 else {
                    throw MockBoxError(400, "invalid_parameter", "Invalid value for 'offset'")
                }
                start = value
            }
        }

        /// The answer for a page of `entries` out of `total`: with `next_marker` when paging by marker.
        func answer(_ entries: [[String: Any]], total: Int) -> [String: Any] {
            if useMarker {
                let end = start + entries.count
                let next: Any = end < total ? Data(String(end).utf8).base64EncodedString() : NSNull()
                return ["entries": entries, "limit": limit, "next_marker": next]
            }
            return ["entries": entries, "total_count": total, "offset": start, "limit": limit]
        }
    }

    /// A folder's active items, by marker or by offset.
    func items(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        let paging = try Paging(request.query)
        let (start, limit) = (paging.start, paging.limit)
        // Read from the query once: once per item, a page of 1,000 parsed the query string 1,000 times.
        let fields = Self.fields(request)
        return try state.withLock { state in
            _ = try liveFolder(id, state)
            let (page, total) = state.tree.liveChildren(of: id, from: start, limit: limit)
            // Counted once served: a lagging file is left out of this listing and the next.
            if start == 0 { state.tree.listingServed(of: id) }
            let entries = page.map { render($0, fields: fields, in: state) }
            if paging.useMarker { return .json(200, paging.answer(entries, total: total)) }
            return .json(
                200,
                [
                    "entries": entries, "total_count": total, "offset": start, "limit": limit,
                    "order": [["by": "type", "direction": "ASC"], ["by": "name", "direction": "ASC"]],
                ])
        }
    }

    /// To the trash; a folder with anything live in it needs `recursive=true`.
    func deleteFolder(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        try state.withLock { state in
            guard id != MockBoxState.rootID else {
                throw MockBoxError(
                    403, "access_denied_insufficient_permissions", "Access denied - insufficient permission")
            }
            let folder = try liveFolder(id, state)
            let live = state.tree.children(of: id).contains { !$0.trashed }
            guard !live || request.query["recursive"]?.lowercased() == "true" else {
                throw MockBoxError(400, "folder_not_empty", "Cannot delete - folder not empty")
            }
            let now = state.tree.tick()
            state.tree.update(folder.id) {
                $0.trashed = true; $0.trashedAt = now
            }
            state.log("ITEM_TRASH", folder.id)
            return .empty(204)
        }
    }

    // MARK: Files

    func file(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        try state.withLock { state in
            .json(200, render(try liveFile(id, state), fields: Self.fields(request), in: state))
        }
    }

    /// A 302 to the download host (a fresh pre-authenticated URL), or 202 + Retry-After while "not ready".
    func download(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        let content = try state.withLock { state -> MockContent? in
            let file = try liveFile(id, state)
            if state.downloadsNotReady > 0 {
                state.downloadsNotReady -= 1
                return nil
            }
            return file.content ?? .data(Data())
        }
        guard let content else { return .empty(202, headers: ["Retry-After": "1"]) }
        return .empty(302, headers: ["Location": contentHost.publish(content).absoluteString])
    }

    func deleteFile(_ id: String) throws -> MockResponse {
        try state.withLock { state in
            let file = try liveFile(id, state)
            let now = state.tree.tick()
            state.tree.update(file.id) {
                $0.trashed = true; $0.trashedAt = now
            }
            state.log("ITEM_TRASH", file.id)
            return .empty(204)
        }
    }

    /// `OPTIONS /files/content`: whether an upload of that name and size would be accepted.
    func preflight(_ request: IncomingRequest) throws -> MockResponse {
        let body = try Self.jsonBody(request)
        guard let name = body["name"] as? String, let parentID = Self.parentID(body) else {
            throw MockBoxError(400, "bad_request", "name and parent.id are required")
        }
        guard MockBoxNames.isValid(name) else { throw MockBoxError(400, "item_name_invalid", "Item name invalid") }
        let size = (body["size"] as? NSNumber)?.int64Value ?? 0
        return try state.withLock { state in
            let parent = try liveFolder(parentID, state)
            if let existing = state.child(named: name, of: parent.id) {
                throw nameInUse(existing, asArray: false, in: state)
            }
            guard state.tree.usage + size <= settings.quotaBytes else {
                throw MockBoxError(403, "storage_limit_exceeded", "Account storage limit reached")
            }
            return .json(
                200,
                [
                    "upload_url": endpoint.appendingPathComponent("api/2.0/files/content").absoluteString,
                    "upload_token": NSNull(),
                ])
        }
    }

    // MARK: Events

    /// The event stream: `stream_position=now` gives the position only; a position gives the events after it, at
    /// most `limit` (default 100, at most 500).
    func events(_ request: IncomingRequest) throws -> MockResponse {
        let query = request.query
        let limit = min(500, max(1, Int(query["limit"] ?? "") ?? 100))
        return try state.withLock { state in
            let position: Int
            switch query["stream_position"] {
            case nil, "now"?:
                return .json(
                    200,
                    ["chunk_size": 0, "next_stream_position": state.eventBase + state.events.count, "entries": [Any]()])
            case let text?:
                guard let value = Int(text), value >= state.eventBase else {
                    throw MockBoxError(400, "invalid_parameter", "Invalid stream_position")
                }
                position = min(value - state.eventBase, state.events.count)
            }
            let chunk = state.events[position...].prefix(limit)
            let entries = chunk.map { event -> [String: Any] in
                [
                    "type": "event", "event_id": event.id, "event_type": event.type,
                    "created_at": MockBoxTime.format(event.created),
                    "recorded_at": MockBoxTime.format(event.created), "session_id": NSNull(),
                    "created_by": [
                        "type": "user", "id": "4242", "name": "LLVS Mock", "login": "llvs-mock@example.com",
                    ],
                    "source": render(event.item, fields: nil, in: state),
                ]
            }
            return .json(
                200,
                [
                    "chunk_size": entries.count, "next_stream_position": state.eventBase + position + entries.count,
                    "entries": entries,
                ])
        }
    }

    /// `OPTIONS /events`: where to long-poll for the next change.
    func longPollURL() -> MockResponse {
        .json(
            200,
            [
                "chunk_size": 1,
                "entries": [
                    [
                        "type": "realtime_server",
                        "url": endpoint.appendingPathComponent("2.0/events/subscribe").absoluteString + "?channel=llvs",
                        "ttl": "10", "max_retries": "10", "retry_timeout": 610,
                    ]
                ],
            ])
    }

    /// The long poll: answers `new_change` once the stream is past `stream_position`, or `reconnect` after
    /// `timeout` seconds (60 by default).
    func subscribe(_ request: IncomingRequest) throws -> MockResponse {
        let position = Int(request.query["stream_position"] ?? "") ?? state.withLock { $0.eventBase + $0.events.count }
        let deadline = Date().addingTimeInterval(Double(request.query["timeout"] ?? "") ?? 60)
        let changed = longPoll.hold(until: deadline) {
            state.withLock { $0.eventBase + $0.events.count > position } ? true : nil
        }
        return .json(200, ["message": changed == true ? "new_change" : "reconnect"])
    }
}
