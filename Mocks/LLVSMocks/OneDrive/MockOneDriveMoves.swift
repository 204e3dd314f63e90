import Foundation
import LLVSSupport
import LLVSHTTP

/// Changing an item in place and copying it, as Graph does: `PATCH` renames, moves (`parentReference`) and sets the
/// client's times (`fileSystemInfo`); `POST …/copy` answers 202 with an absolute monitor URL on another host (called
/// without a token), whose status reads `completed` with the new item's `resourceId`.
extension MockOneDriveServer {
    func update(_ request: IncomingRequest, _ address: MockGraphAddress) throws -> MockResponse {
        let item = try resolve(address)
        guard item.id != MockOneDriveState.rootID else {
            throw MockGraphError(403, "accessDenied", "The root cannot be changed.")
        }
        try ifMatch(request, item)
        guard let body = (try? JSONSerialization.jsonObject(with: request.bodyData)) as? [String: Any] else {
            throw MockGraphError(400, "invalidRequest", "The request body must be a JSON object.")
        }
        let info = try MockFileSystemInfo(body["fileSystemInfo"])
        let behavior = Self.conflictBehavior(body) ?? request.query["@microsoft.graph.conflictBehavior"] ?? "fail"
        return try state.withLock { state in
            let parentID =
                try body["parentReference"].map { try parent(named: $0, state) } ?? item.parents.first
                ?? MockOneDriveState.rootID
            let name = body["name"] as? String ?? item.name
            if parentID != item.parents.first || name != item.name {
                try checkName(name, in: parentID, state)
                try refuseCycle(moving: item.id, into: parentID, state)
                if let existing = state.child(named: name, of: parentID), existing.id != item.id {
                    guard behavior == "replace" else {
                        throw MockGraphError(409, "nameAlreadyExists", "The specified item name already exists.")
                    }
                    state.tree.update(existing.id) { $0.trashed = true }
                }
            }
            _ = state.tree.tick()
            let updated =
                state.tree.update(item.id) { changed in
                    changed.name = name
                    changed.parents = [parentID]
                    if let info { changed.apply(info) }
                    changed.version += 1
                } ?? item
            return .json(200, json(updated, state))
        }
    }

    /// The folder a `parentReference` names, by `id` or by `path` (`/drive/root:/a/b`).
    private func parent(named reference: Any, _ state: MockOneDriveState) throws -> String {
        guard let reference = reference as? [String: Any] else {
            throw MockGraphError(400, "invalidRequest", "parentReference must be an object.")
        }
        if let driveId = reference["driveId"] as? String, driveId != settings.driveId {
            throw MockGraphError(
                400, "invalidRequest", "Items cannot move between drives here; the drive \(driveId) is not this one.")
        }
        var id = MockOneDriveState.rootID
        if let given = reference["id"] as? String {
            id = given == "root" ? MockOneDriveState.rootID : given
        } else if let path = reference["path"] as? String {
            let prefixes = ["/drive/root:", "/me/drive/root:", "/drives/\(settings.driveId)/root:"]
            guard let prefix = prefixes.first(where: path.hasPrefix) else {
                throw MockGraphError(400, "invalidRequest", "Invalid parentReference path \(path).")
            }
            for name in path.dropFirst(prefix.count).split(separator: "/") {
                guard let child = state.child(named: String(name), of: id) else {
                    throw MockGraphError(404, "itemNotFound", "The resource could not be found.")
                }
                id = child.id
            }
        } else {
            throw MockGraphError(400, "invalidRequest", "parentReference needs an id or a path.")
        }
        guard let folder = state.live(id) else {
            throw MockGraphError(404, "itemNotFound", "The parent could not be found.")
        }
        guard folder.isFolder else { throw MockGraphError(400, "invalidRequest", "The parent is not a folder.") }
        return folder.id
    }

    private func refuseCycle(moving id: String, into parentID: String, _ state: MockOneDriveState) throws {
        if state.tree.isSameOrInside(parentID, id) {
            throw MockGraphError(400, "invalidRequest", "An item cannot be moved into itself or below itself.")
        }
    }

    /// `POST …/copy` `{"parentReference", "name"}`: the copy is made at once (folders with everything inside) and the
    /// answer is 202 with the monitor's URL, as Graph answers even when the copy is quick.
    func copy(_ request: IncomingRequest, _ address: MockGraphAddress) throws -> MockResponse {
        let item = try resolve(address)
        guard let body = (try? JSONSerialization.jsonObject(with: request.bodyData)) as? [String: Any] else {
            throw MockGraphError(400, "invalidRequest", "The request body must be a JSON object.")
        }
        let behavior = request.query["@microsoft.graph.conflictBehavior"] ?? Self.conflictBehavior(body) ?? "fail"
        let monitor = try state.withLock { state -> String in
            let parentID =
                try body["parentReference"].map { try parent(named: $0, state) } ?? item.parents.first
                ?? MockOneDriveState.rootID
            var name = body["name"] as? String ?? item.name
            try checkName(name, in: parentID, state)
            if item.isFolder { try refuseCycle(moving: item.id, into: parentID, state) }
            if let existing = state.child(named: name, of: parentID) {
                switch behavior {
                case "replace": state.tree.update(existing.id) { $0.trashed = true }
                case "rename":
                    var index = 1
                    while state.child(named: "\(name) \(index)", of: parentID) != nil { index += 1 }
                    name = "\(name) \(index)"
                default: throw MockGraphError(409, "nameAlreadyExists", "The specified item name already exists.")
                }
            }
            let copied = copyTree(item.id, into: parentID, named: name, &state)
            state.copyCounter += 1
            let monitor = "copy-\(state.copyCounter)"
            state.copies[monitor] = copied
            return monitor
        }
        return .empty(
            202,
            headers: ["Location": contentHost.baseURL.absoluteString + "/monitor/" + monitor, "Content-Length": "0"])
    }

    /// A new item with `id`'s contents (and, for a folder, copies of everything inside); its ID.
    private func copyTree(
        _ id: String, into parentID: String, named name: String, _ state: inout MockOneDriveState
    ) -> String {
        guard let source = state.tree[id] else { return id }
        let time = state.tree.tick()
        var copy = MockOneDriveItem(
            id: state.newID(), name: name, parents: [parentID], isFolder: source.isFolder, created: time, modified: time
        )
        copy.content = source.content
        copy.size = source.size
        copy.quickXorHash = source.quickXorHash
        copy.sha1Hash = source.sha1Hash
        copy.sha256Hash = source.sha256Hash
        // A copy keeps the client's times of what it copies (the file's own modification time).
        copy.fileSystemCreated = source.fileSystemCreated
        copy.fileSystemModified = source.fileSystemModified ?? source.modified
        state.tree.insert(copy)
        if source.isFolder {
            for child in state.tree.children(of: id) where !child.trashed {
                _ = copyTree(child.id, into: copy.id, named: child.name, &state)
            }
        }
        return copy.id
    }

    /// The monitor of a copy on the content host: Graph's `asyncJobStatus`.
    func copyStatus(_ monitor: String) -> MockResponse {
        guard let resourceID = state.withLock({ $0.copies[monitor] }) else {
            return Self.error(404, "itemNotFound", "The monitor could not be found.")
        }
        return .json(
            200,
            [
                "@odata.context": "https://graph.microsoft.com/v1.0/$metadata#microsoft.graph.asyncJobStatus",
                "operation": "itemCopy", "percentageComplete": 100.0, "status": "completed", "resourceId": resourceID,
            ])
    }

    /// `POST /items/{id}/restore` (OneDrive personal): an item from the recycle bin back to its folder, or to the
    /// `parentReference` given (its folder gone), under `name` when given; 409 onto a name in use.
    func restore(_ request: IncomingRequest, _ address: MockGraphAddress) throws -> MockResponse {
        guard case .item(let id) = address.anchor, address.relative.isEmpty else {
            throw MockGraphError(400, "invalidRequest", "restore needs an item ID.")
        }
        let body =
            request.bodyData.isEmpty
            ? [:] : (try? JSONSerialization.jsonObject(with: request.bodyData)) as? [String: Any] ?? [:]
        return try state.withLock { state in
            guard let item = state.tree[id], item.trashed else {
                throw MockGraphError(404, "itemNotFound", "The item is not in the recycle bin.")
            }
            let parentID =
                try body["parentReference"].map { try parent(named: $0, state) }
                ?? item.parents.first.flatMap { state.live($0)?.id }
            guard let parentID else {
                throw MockGraphError(409, "parentNotFound", "The original folder is gone; give a parentReference.")
            }
            let name = body["name"] as? String ?? item.name
            try checkName(name, in: parentID, state)
            if state.child(named: name, of: parentID) != nil {
                throw MockGraphError(409, "nameAlreadyExists", "The specified item name already exists.")
            }
            _ = state.tree.tick()
            let restored =
                state.tree.update(id) { changed in
                    changed.trashed = false
                    changed.name = name
                    changed.parents = [parentID]
                    changed.version += 1
                } ?? item
            return .json(200, json(restored, state))
        }
    }
}
