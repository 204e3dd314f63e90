import Foundation
import LLVSSupport
import LLVSHTTP

/// Box's changes to items in place, copies and the trash: `PUT /files|folders/{id}` (rename, move by `parent.id`,
/// a file's `content_modified_at`), `POST …/{id}/copy`, `GET /folders/trash/items`, `GET …/{id}/trash`, restore
/// (`POST /files|folders/{id}`) and purge (`DELETE …/{id}/trash`).
extension MockBoxServer {
    /// `PUT /files/{id}` or `/folders/{id}`: 200 with the item; 409 `item_name_in_use` onto a name in use.
    func updateItem(_ id: String, folder: Bool, _ request: IncomingRequest) throws -> MockResponse {
        let body = try Self.jsonBody(request)
        let times = try MockBoxContentTimes(body)
        return try state.withLock { state in
            guard id != MockBoxState.rootID else {
                throw MockBoxError(
                    403, "access_denied_insufficient_permissions", "Access denied - insufficient permission")
            }
            let item = folder ? try liveFolder(id, state) : try liveFile(id, state)
            if let expected = request.headers["If-Match"], expected != String(item.sequence) {
                throw MockBoxError(
                    412, "precondition_failed",
                    "The resource has been modified. Please retrieve the resource again and retry")
            }
            let name = body["name"] as? String ?? item.name
            guard MockBoxNames.isValid(name) else { throw MockBoxError(400, "item_name_invalid", "Item name invalid") }
            let parentID = Self.parentID(body) ?? item.parents.first ?? MockBoxState.rootID
            let parent = try liveFolder(parentID, state)
            if folder { try refuseCycle(moving: item.id, into: parent.id, state) }
            if let other = state.child(named: name, of: parent.id), other.id != item.id {
                throw nameInUse(other, asArray: true, in: state)
            }
            let moved = parent.id != item.parents.first
            let renamed = name != item.name
            let now = state.tree.tick()
            let updated =
                state.tree.update(item.id) { changed in
                    changed.name = name
                    changed.parents = [parent.id]
                    if let times, !folder { changed.apply(times) }
                    changed.modified = now
                    changed.sequence += 1
                } ?? item
            if moved { state.log("ITEM_MOVE", updated.id) } else if renamed { state.log("ITEM_RENAME", updated.id) }
            return .json(200, render(updated, fields: Self.fields(request), in: state))
        }
    }

    private func refuseCycle(moving id: String, into parentID: String, _ state: MockBoxState) throws {
        if state.tree.isSameOrInside(parentID, id) {
            throw MockBoxError(400, "bad_request", "A folder cannot be moved or copied into itself or below itself")
        }
    }

    /// `POST /files/{id}/copy` or `/folders/{id}/copy` `{"parent":{"id"}, "name"}`: 201 with the copy (a folder
    /// with everything inside); 409 `item_name_in_use` onto a name in use.
    func copyItem(_ id: String, folder: Bool, _ request: IncomingRequest) throws -> MockResponse {
        let body = try Self.jsonBody(request)
        guard let parentID = Self.parentID(body) else {
            throw MockBoxError(400, "bad_request", "parent.id is required")
        }
        return try state.withLock { state in
            let item = folder ? try liveFolder(id, state) : try liveFile(id, state)
            let name = body["name"] as? String ?? item.name
            guard MockBoxNames.isValid(name) else { throw MockBoxError(400, "item_name_invalid", "Item name invalid") }
            let parent = try liveFolder(parentID, state)
            if folder { try refuseCycle(moving: item.id, into: parent.id, state) }
            if let other = state.child(named: name, of: parent.id) { throw nameInUse(other, asArray: true, in: state) }
            guard state.tree.usage + (folder ? state.tree.liveSize(of: item.id) : item.size) <= settings.quotaBytes
            else {
                throw MockBoxError(403, "storage_limit_exceeded", "Account storage limit reached")
            }
            let copy = copyTree(item.id, into: parent.id, named: name, &state)
            return .json(201, render(copy, fields: Self.fields(request), in: state))
        }
    }

    private func copyTree(
        _ id: String, into parentID: String, named name: String, _ state: inout MockBoxState
    ) -> MockBoxItem {
        guard let source = state.tree[id] else {
            return MockBoxItem(id: id, name: name, parents: [parentID], isFolder: false, created: Date())
        }
        var copy = MockBoxItem(
            id: state.newID(), name: name, parents: [parentID], isFolder: source.isFolder, created: state.tree.tick())
        if let content = source.content {
            copy.store(content, sha1: source.sha1, versionID: state.newID(), at: copy.created)
        }
        // A copy keeps the file's own times.
        copy.contentCreated = source.contentCreated ?? source.created
        copy.contentModified = source.contentModified ?? source.modified
        state.tree.insert(copy)
        state.log("ITEM_COPY", copy.id)
        if source.isFolder {
            for child in state.tree.children(of: id) where !child.trashed {
                _ = copyTree(child.id, into: copy.id, named: child.name, &state)
            }
        }
        return copy
    }

    /// `GET /folders/trash/items`: what was put in the trash itself (not what is inside a trashed folder), by offset
    /// or by marker, as a folder's items are paged.
    func trashItems(_ request: IncomingRequest) throws -> MockResponse {
        let paging = try Paging(request.query)
        let fields = Self.fields(request)
        return state.withLock { state in
            let trashed = state.tree.items.values.filter { $0.trashed }.sorted {
                ($0.trashedAt ?? $0.modified, $0.id) < ($1.trashedAt ?? $1.modified, $1.id)
            }
            let page = trashed.dropFirst(paging.start).prefix(paging.limit).map {
                render($0, fields: fields, in: state)
            }
            return .json(200, paging.answer(Array(page), total: trashed.count))
        }
    }

    /// An item that was itself put in the trash; 404 `not_trashed`-style otherwise (Box answers 404 for both).
    private func trashedItem(_ id: String, folder: Bool, _ state: MockBoxState) throws -> MockBoxItem {
        guard let item = state.tree[id], item.isFolder == folder, item.trashed else {
            throw MockBoxError(404, "not_found", "Not Found")
        }
        return item
    }

    /// `GET /files/{id}/trash` or `/folders/{id}/trash`.
    func trashedInfo(_ id: String, folder: Bool, _ request: IncomingRequest) throws -> MockResponse {
        try state.withLock { state in
            .json(200, render(try trashedItem(id, folder: folder, state), fields: Self.fields(request), in: state))
        }
    }

    /// `POST /files/{id}` or `/folders/{id}` (optional `name`, `parent.id`): back from the trash, 201 with the item.
    func restore(_ id: String, folder: Bool, _ request: IncomingRequest) throws -> MockResponse {
        let body = request.bodyData.isEmpty ? [:] : try Self.jsonBody(request)
        return try state.withLock { state in
            let item = try trashedItem(id, folder: folder, state)
            let name = body["name"] as? String ?? item.name
            guard MockBoxNames.isValid(name) else { throw MockBoxError(400, "item_name_invalid", "Item name invalid") }
            // An item whose folder was purged after it went to the trash has no parent to go back to.
            guard let parentID = Self.parentID(body) ?? item.parents.first, let parent = state.live(parentID),
                parent.isFolder
            else {
                throw MockBoxError(
                    404, "not_found", "The folder the item was in is gone; give parent.id to restore it elsewhere")
            }
            if let other = state.child(named: name, of: parent.id) { throw nameInUse(other, asArray: true, in: state) }
            let now = state.tree.tick()
            let restored =
                state.tree.update(item.id) { changed in
                    changed.trashed = false
                    changed.trashedAt = nil
                    changed.name = name
                    changed.parents = [parent.id]
                    changed.modified = now
                    changed.sequence += 1
                } ?? item
            state.log("ITEM_UNDELETE_VIA_TRASH", restored.id)
            return .json(201, render(restored, fields: Self.fields(request), in: state))
        }
    }

    /// `DELETE /files/{id}/trash` or `/folders/{id}/trash`: gone for good, 204. Items inside a purged folder that
    /// were put in the trash on their own, before it, stay there as Box keeps them: detached from the folder (no
    /// parent), so restoring one needs a `parent.id`.
    func purge(_ id: String, folder: Bool) throws -> MockResponse {
        try state.withLock { state in
            let item = try trashedItem(id, folder: folder, state)
            var pending = [item.id]
            var trashedOnTheirOwn: [String] = []
            while let next = pending.popLast() {
                for child in state.tree.children(of: next) {
                    if child.trashed { trashedOnTheirOwn.append(child.id) } else { pending.append(child.id) }
                }
            }
            for kept in trashedOnTheirOwn { state.tree.update(kept) { $0.parents = [] } }
            _ = state.tree.remove(item.id)
            return .empty(204)
        }
    }
}
