import Foundation
import LLVSSupport
import LLVSHTTP

/// The item endpoints: read, list (pages with an absolute nextLink), create folders, simple PUT, download as a 302,
/// delete to the recycle bin, and the delta feed.
extension MockOneDriveServer {
    static let maximumPathLength = 400
    static let maximumSimpleUpload: Int64 = 250 * 1024 * 1024

    func serve(_ request: IncomingRequest, _ address: MockGraphAddress, drivePrefix: String) throws -> MockResponse {
        switch (request.method, address.action) {
        case ("GET", ""):
            return .json(200, Self.selecting(request.query["$select"], json(try resolve(address))))
        case ("GET", "children"):
            return try children(request, of: try resolve(address), drivePrefix: drivePrefix)
        case ("POST", "children"):
            return try createFolder(request, in: try resolve(address))
        case ("PUT", "content"):
            return try put(request, address)
        case ("GET", "content"):
            let item = try resolve(address)
            guard !item.isFolder, let content = item.content else {
                throw MockGraphError(400, "invalidRequest", "The item is a folder and has no content.")
            }
            return .empty(
                302, headers: ["Location": contentHost.publish(content).absoluteString, "Content-Length": "0"])
        case ("PATCH", ""):
            return try update(request, address)
        case ("POST", "copy"):
            return try copy(request, address)
        case ("POST", "restore"):
            return try restore(request, address)
        case ("POST", "createUploadSession"):
            return try createUploadSession(request, address)
        case ("DELETE", ""):
            let item = try resolve(address)
            guard item.id != MockOneDriveState.rootID else {
                throw MockGraphError(403, "accessDenied", "The root cannot be deleted.")
            }
            try ifMatch(request, item)
            state.withLock { state in
                _ = state.tree.tick()
                state.tree.update(item.id) { $0.trashed = true }
            }
            return .empty(204)
        case ("GET", "delta"), ("GET", "delta()"):
            // OData function syntax (`delta()`, as the SDK sends it) or plain; the whole drive, from its root.
            guard try resolve(address).id == MockOneDriveState.rootID else {
                throw MockGraphError(400, "invalidRequest", "delta is supported on the root only.")
            }
            return try delta(request, drivePrefix: drivePrefix)
        default:
            throw MockGraphError(
                400, "invalidRequest",
                "\(request.method) \(address.action.isEmpty ? "on an item" : address.action) is not supported.")
        }
    }

    /// The live item an address names; `itemNotFound` otherwise.
    func resolve(_ address: MockGraphAddress) throws -> MockOneDriveItem {
        try state.withLock { state in
            var id: String
            switch address.anchor {
            case .root: id = MockOneDriveState.rootID
            case .item(let itemID):
                guard state.live(itemID) != nil else {
                    throw MockGraphError(404, "itemNotFound", "The resource could not be found.")
                }
                id = itemID
            }
            for name in address.relative {
                guard let child = state.child(named: name, of: id) else {
                    throw MockGraphError(404, "itemNotFound", "The resource could not be found.")
                }
                id = child.id
            }
            return state.live(id)!
        }
    }

    func ifMatch(_ request: IncomingRequest, _ item: MockOneDriveItem) throws {
        if let expected = request.headers["If-Match"], expected != "*", expected != item.eTag, expected != item.cTag {
            throw MockGraphError(412, "resourceModified", "ETag does not match current item's value")
        }
    }

    /// Graph's JSON for an item.
    func json(_ item: MockOneDriveItem) -> [String: Any] {
        state.withLock { state in json(item, state) }
    }

    /// `wanted` (a `$select`'s properties) skips the parts nobody asked for before they are computed: a parent's path
    /// and a folder's size walk the tree, once per item of a listing page.
    func json(_ item: MockOneDriveItem, _ state: MockOneDriveState, wanted: Set<String>? = nil) -> [String: Any] {
        func wants(_ key: String) -> Bool { wanted?.contains(key) ?? true }
        var object: [String: Any] = [
            "id": item.id, "name": item.name, "eTag": item.eTag, "cTag": item.cTag, "size": item.size,
            "createdDateTime": item.createdText, "lastModifiedDateTime": item.modifiedText,
            "webUrl": "https://onedrive.live.com/?id=\(item.id)",
            "fileSystemInfo": item.fileSystemInfo,
        ]
        if item.id == MockOneDriveState.rootID {
            object["root"] = [String: Any]()
            object["name"] = "root"
            object["parentReference"] = ["driveId": settings.driveId, "driveType": settings.driveType.rawValue]
        } else if wants("parentReference"), let parent = item.parents.first {
            let parentPath = state.path(of: parent)
            object["parentReference"] = [
                "driveId": settings.driveId, "driveType": settings.driveType.rawValue, "id": parent,
                "path": "/drive/root:" + (parentPath.isEmpty ? "" : "/" + parentPath),
            ]
        }
        if item.isFolder {
            guard wants("folder") || wants("size") else { return object }
            object["folder"] = [
                "childCount": state.tree.children(of: item.id).filter { !state.tree.isTrashed($0.id) }.count
            ]
            object["size"] = state.tree.liveSize(of: item.id)  // Graph: the total of everything inside
        } else {
            var hashes: [String: String] = [:]
            if let hash = item.quickXorHash { hashes["quickXorHash"] = hash }
            if let hash = item.sha1Hash { hashes["sha1Hash"] = hash }
            if let hash = item.sha256Hash { hashes["sha256Hash"] = hash }
            object["file"] = ["mimeType": "application/octet-stream", "hashes": hashes]
        }
        return object
    }

    private func children(
        _ request: IncomingRequest, of folder: MockOneDriveItem, drivePrefix: String
    ) throws -> MockResponse {
        guard folder.isFolder else { throw MockGraphError(400, "invalidRequest", "The item is not a folder.") }
        let query = request.query
        let top =
            try query["$top"].map { text -> Int in
                guard let value = Int(text), value > 0 else {
                    throw MockGraphError(400, "invalidRequest", "Invalid value for $top: \(text)")
                }
                return min(value, 1000)
            } ?? 200
        let skip = Int(query["$skiptoken"] ?? "0") ?? 0
        return try state.withLock { state in
            // A live folder's child is trashed exactly when it was trashed itself.
            guard state.live(folder.id) != nil else {
                throw MockGraphError(404, "itemNotFound", "The resource could not be found.")
            }
            let (page, total) = state.tree.liveChildren(of: folder.id, from: skip, limit: top)
            // Counted once served: a lagging file is left out of this listing and the next.
            if skip == 0 { state.tree.listingServed(of: folder.id) }
            let wanted = Self.selection(query["$select"])
            var object: [String: Any] = ["value": page.map { Self.selecting(wanted, json($0, state, wanted: wanted)) }]
            if skip + top < total {
                var items = [("$top", String(top)), ("$skiptoken", String(skip + top))]
                if let select = query["$select"] { items.append(("$select", select)) }
                object["@odata.nextLink"] =
                    endpoint.absoluteString + "/v1.0" + drivePrefix + "/items/" + URLEscaping.escape(folder.id)
                    + "/children?" + URLEscaping.query(items)
            }
            return .json(200, object)
        }
    }

    /// `$select`: only the properties asked for, as Graph answers (smaller pages for a listing of names).
    static func selecting(_ select: String?, _ object: [String: Any]) -> [String: Any] {
        selecting(selection(select), object)
    }

    /// The properties a `$select` names; nil when it names none (everything is sent).
    static func selection(_ select: String?) -> Set<String>? {
        guard let select, !select.isEmpty else { return nil }
        return Set(select.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) })
    }

    static func selecting(_ wanted: Set<String>?, _ object: [String: Any]) -> [String: Any] {
        guard let wanted else { return object }
        return object.filter { wanted.contains($0.key) || $0.key.hasPrefix("@") }
    }

    static func conflictBehavior(_ object: [String: Any]?) -> String? {
        (object?["@microsoft.graph.conflictBehavior"] ?? object?["@name.conflictBehavior"]) as? String
    }

    /// Refuses names OneDrive refuses, and paths over 400 characters.
    func checkName(_ name: String, in parentID: String, _ state: MockOneDriveState) throws {
        if let problem = MockOneDriveNames.problem(name) { throw MockGraphError(400, "invalidRequest", problem) }
        let parentPath = state.path(of: parentID)
        if parentPath.count + 1 + name.count > Self.maximumPathLength {
            throw MockGraphError(
                400, "invalidRequest", "The path is too long (over \(Self.maximumPathLength) characters).")
        }
    }

    private func createFolder(_ request: IncomingRequest, in parent: MockOneDriveItem) throws -> MockResponse {
        guard parent.isFolder else { throw MockGraphError(400, "invalidRequest", "The parent is not a folder.") }
        guard let object = (try? JSONSerialization.jsonObject(with: request.bodyData)) as? [String: Any],
            let name = object["name"] as? String
        else {
            throw MockGraphError(400, "invalidRequest", "The request body must be an item with a name.")
        }
        let behavior = Self.conflictBehavior(object) ?? "fail"
        let info = try MockFileSystemInfo(object["fileSystemInfo"])
        return try state.withLock { state in
            try checkName(name, in: parent.id, state)
            var finalName = name
            if let existing = state.child(named: name, of: parent.id) {
                switch behavior {
                case "replace":
                    state.tree.update(existing.id) { $0.trashed = true }
                case "rename":
                    var index = 1
                    while state.child(named: "\(name) \(index)", of: parent.id) != nil { index += 1 }
                    finalName = "\(name) \(index)"
                default:
                    throw MockGraphError(409, "nameAlreadyExists", "The specified item name already exists.")
                }
            }
            let time = state.tree.tick()
            var item = MockOneDriveItem(
                id: state.newID(), name: finalName, parents: [parent.id], isFolder: object["file"] == nil,
                created: time, modified: time)
            if let info { item.apply(info) }
            state.tree.insert(item)
            return .json(201, json(item, state))
        }
    }

    func hashes(_ content: MockContent) -> (quickXor: String, sha1: String?, sha256: String?) {
        let values = content.checksums([.quickXor, .sha1, .sha256])
        // Business drives promise only QuickXorHash.
        return settings.driveType == .personal
            ? (values[.quickXor]!, values[.sha1], values[.sha256]) : (values[.quickXor]!, nil, nil)
    }

    /// Stores contents as a new file in `parentID` or as new contents of the item of that name (or `replaceID`).
    func storeFile(
        named name: String, in parentID: String, replacing replaceID: String?, behavior: String,
        content: MockContent, fileSystemInfo: MockFileSystemInfo? = nil
    ) throws -> (item: MockOneDriveItem, created: Bool) {
        let (quickXor, sha1, sha256) = hashes(content)
        return try state.withLock { state in
            let existing = replaceID.flatMap { state.live($0) } ?? state.child(named: name, of: parentID)
            let replaced = existing?.size ?? 0
            if state.tree.usage - replaced + content.size > settings.quotaBytes {
                throw MockGraphError(507, "quotaLimitReached", "Insufficient Space Available")
            }
            let time = state.tree.tick()
            if let existing {
                guard !existing.isFolder else {
                    throw MockGraphError(409, "nameAlreadyExists", "A folder with that name already exists.")
                }
                guard behavior != "fail" else {
                    throw MockGraphError(409, "nameAlreadyExists", "The specified item name already exists.")
                }
                let item = state.tree.update(existing.id) { item in
                    item.content = content
                    item.size = content.size
                    item.quickXorHash = quickXor
                    item.sha1Hash = sha1
                    item.sha256Hash = sha256
                    item.version += 1
                    item.contentVersion += 1
                    item.modified = time
                    // New contents without times of their own are new on the client too.
                    item.fileSystemModified = fileSystemInfo?.modified
                    if let fileSystemInfo { item.apply(fileSystemInfo) }
                }!
                return (item, false)
            }
            try checkName(name, in: parentID, state)
            var item = MockOneDriveItem(
                id: state.newID(), name: name, parents: [parentID], isFolder: false, created: time, modified: time)
            item.content = content
            item.size = content.size
            item.quickXorHash = quickXor
            item.sha1Hash = sha1
            item.sha256Hash = sha256
            if let fileSystemInfo { item.apply(fileSystemInfo) }
            state.tree.insert(item)
            return (item, true)
        }
    }

    /// The folder an address's last component goes into, made where missing (as Graph does for a path upload), and
    /// that last component's name; or the item an ID names when there is no path.
    func target(of address: MockGraphAddress) throws -> (parentID: String, name: String?, replaceID: String?) {
        if address.relative.isEmpty {
            let item = try resolve(address)
            guard !item.isFolder else { throw MockGraphError(400, "invalidRequest", "The item is a folder.") }
            return (item.parents.first ?? MockOneDriveState.rootID, item.name, item.id)
        }
        var parent = MockGraphAddress(anchor: address.anchor, relative: [], action: "")
        let anchorItem = try resolve(parent)
        parent.relative = Array(address.relative.dropLast())
        return try state.withLock { state in
            var id = anchorItem.id
            for name in parent.relative {
                if let child = state.child(named: name, of: id) {
                    guard child.isFolder else {
                        throw MockGraphError(400, "invalidRequest", "\(name) is a file, not a folder.")
                    }
                    id = child.id
                    continue
                }
                try checkName(name, in: id, state)
                let time = state.tree.tick()
                let folder = MockOneDriveItem(
                    id: state.newID(), name: name, parents: [id], isFolder: true, created: time, modified: time)
                state.tree.insert(folder)
                id = folder.id
            }
            return (id, address.relative.last, nil)
        }
    }

    private func put(_ request: IncomingRequest, _ address: MockGraphAddress) throws -> MockResponse {
        guard request.bodySize <= Self.maximumSimpleUpload else {
            throw MockGraphError(413, "requestTooLarge", "Files over 250 MB must be uploaded with an upload session.")
        }
        let (parentID, name, replaceID) = try target(of: address)
        let behavior =
            request.query["@microsoft.graph.conflictBehavior"] ?? request.query["@name.conflictBehavior"] ?? "replace"
        let (item, created) = try storeFile(
            named: name ?? "", in: parentID, replacing: replaceID, behavior: behavior,
            content: try MockContent.keeping(request.body, in: storage))
        lagIfAsked(created ? item.id : nil, request)
        return .json(created ? 201 : 200, json(item))
    }

    /// Leaves a new file out of listings for a while when `listing-lag` is in force for this request.
    func lagIfAsked(_ newFile: String?, _ request: IncomingRequest) {
        guard let newFile, faults.fires("listing-lag", method: request.method, path: request.path) else { return }
        state.withLock { $0.tree.lagInListings(newFile) }
    }

    /// The delta feed of the whole drive: every item changed since the token (the initial call: every item), its
    /// latest state once, removed ones with a `deleted` facet; pages, then an `@odata.deltaLink`.
    private func delta(_ request: IncomingRequest, drivePrefix: String) throws -> MockResponse {
        let query = request.query
        // `token=latest`: no items, only a delta link for now (Graph's way to start from the present).
        let latest = query["token"] == "latest"
        let start =
            try query["token"].map { text -> Int in
                try state.withLock { state in
                    if latest { return state.tree.changes.count }
                    guard let value = Int(text), let index = state.tree.changeIndex(atFeedPosition: value) else {
                        throw MockGraphError(410, "resyncRequired", "The delta token is not valid; resync.")
                    }
                    return index
                }
            } ?? 0
        let top = min(Int(query["$top"] ?? "200") ?? 200, 1000)
        let skip = Int(query["$skiptoken"] ?? "0") ?? 0
        return state.withLock { state in
            guard start <= state.tree.changes.count else {
                return Self.error(410, "resyncRequired", "The delta token is not valid; resync.")
            }
            var seen = Set<String>()
            var entries: [[String: Any]] = []
            for (offset, change) in state.tree.changes.enumerated().dropFirst(start)
            where state.tree.latestChange[change.id] == offset {
                guard seen.insert(change.id).inserted else { continue }
                if let item = state.live(change.id) {
                    entries.append(json(item, state))
                } else {
                    entries.append([
                        "id": change.id, "deleted": ["state": "deleted"],
                        "parentReference": ["driveId": settings.driveId],
                    ])
                }
            }
            let page = entries.dropFirst(skip).prefix(top)
            let base = endpoint.absoluteString + "/v1.0" + drivePrefix + "/root/delta?"
            var object: [String: Any] = ["value": Array(page)]
            if skip + top < entries.count {
                object["@odata.nextLink"] =
                    base
                    + URLEscaping.query([
                        ("token", String(state.tree.feedPosition(start))), ("$top", String(top)),
                        ("$skiptoken", String(skip + top)),
                    ])
            } else {
                object["@odata.deltaLink"] =
                    base + URLEscaping.query([("token", String(state.tree.feedPosition(state.tree.changes.count)))])
            }
            return .json(200, object)
        }
    }
}
