import Foundation
import LLVSCodecs
import LLVSSupport
import LLVSHTTP

/// pCloud's methods, each as the real service answers it.
extension MockPCloudServer {
    func serve(_ call: MockPCloudCall, _ request: IncomingRequest) throws -> MockResponse {
        switch call.method {
        case "userinfo": return userinfo()
        case "listfolder": return try listFolder(call)
        case "createfolder": return try createFolder(call, ifNotExists: false)
        case "createfolderifnotexists": return try createFolder(call, ifNotExists: true)
        case "uploadfile": return try uploadFile(call, request)
        case "upload_create", "upload_write", "upload_info", "upload_save", "upload_delete":
            return try uploadSession(call, request)
        case "stat": return try stat(call)
        case "checksumfile": return try checksumFile(call)
        case "getfilelink": return try fileLink(call)
        case "getzip": return try zip(call)
        case "renamefile": return try renameFile(call)
        case "renamefolder": return try renameFolder(call)
        case "copyfile": return try copyFile(call)
        case "trash_list": return try trashList(call)
        case "trash_restorepath": return try trashRestorePath(call)
        case "trash_restore": return try trashRestore(call)
        case "trash_clear": return try trashClear(call)
        case "deletefile": return try deleteFile(call)
        case "deletefolder": return try deleteFolder(call, recursive: false)
        case "deletefolderrecursive": return try deleteFolder(call, recursive: true)
        case "diff": return try diff(call)
        default: throw MockPCloudError(2000, "Invalid method \(call.method).")
        }
    }

    static func ok(_ fields: [String: Any]) -> MockResponse {
        var object = fields
        object["result"] = 0
        return .json(200, object)
    }

    /// pCloud's metadata of an item; a folder's `contents` when asked.
    func metadata(
        _ item: MockPCloudItem, _ call: MockPCloudCall, in state: MockPCloudState, contents depth: Int = 0
    ) -> [String: Any] {
        var object: [String: Any] = [
            "name": item.name, "isfolder": item.isFolder, "id": item.id, "parentfolderid": item.parentNumber,
            "created": MockPCloudTime.format(item.created, asTimestamp: call.timestamps),
            "modified": MockPCloudTime.format(item.modified, asTimestamp: call.timestamps),
            "ismine": true, "isshared": false, "thumb": false,
            "icon": item.isFolder ? "folder" : "file",
        ]
        if item.isFolder {
            object["folderid"] = item.number
            if item.id == MockPCloudState.rootID { object["path"] = "/"; object.removeValue(forKey: "parentfolderid") }
            if depth > 0 {
                let children = state.tree.children(of: item.id).filter {
                    !$0.trashed && state.tree.lagging[$0.id] == nil
                }
                .filter { !(call.flag("nofiles") && !$0.isFolder) }
                object["contents"] = children.map {
                    metadata($0, call, in: state, contents: call.flag("recursive") ? depth : 0)
                }
            }
        } else {
            object["fileid"] = item.number
            object["size"] = item.size
            object["hash"] = item.hash
            object["contenttype"] = "application/octet-stream"
            object["category"] = 0
        }
        return object
    }

    // MARK: Finding items

    /// The folder a call names by `folderid` or `path` (`/a/b`).
    func folder(
        _ call: MockPCloudCall, _ state: MockPCloudState, idName: String = "folderid", pathName: String = "path"
    ) throws -> MockPCloudItem {
        if let number = try call.number(idName) {
            guard let folder = state.live("d\(number)"), folder.isFolder else { throw MockPCloudError.folderMissing }
            return folder
        }
        guard let path = call.parameters[pathName] else { throw MockPCloudError.noFolder }
        guard let found = try resolve(path, state), found.isFolder else { throw MockPCloudError.folderMissing }
        return found
    }

    /// The file a call names by `fileid` or `path`.
    func file(_ call: MockPCloudCall, _ state: MockPCloudState) throws -> MockPCloudItem {
        if let number = try call.number("fileid") {
            guard let file = state.live("f\(number)") else { throw MockPCloudError.fileMissing }
            return file
        }
        guard let path = call.parameters["path"] else { throw MockPCloudError.noFile }
        guard let found = try resolve(path, state), !found.isFolder else { throw MockPCloudError.fileMissing }
        return found
    }

    func resolve(_ path: String, _ state: MockPCloudState) throws -> MockPCloudItem? {
        guard path.hasPrefix("/") else { throw MockPCloudError.invalidPath }
        var current = state.tree[MockPCloudState.rootID]
        for name in path.split(separator: "/") {
            guard let folder = current, folder.isFolder else { return nil }
            current = state.child(named: String(name), of: folder.id)
        }
        return current
    }

    /// The folder and name a creation or upload names: `folderid`/`path` of the parent and `name`, or a full `path`.
    private func placement(
        _ call: MockPCloudCall, _ state: MockPCloudState, nameField: String
    ) throws -> (MockPCloudItem, String) {
        if let name = call.parameters[nameField] {
            guard MockPCloudNames.isValid(name) else { throw MockPCloudError.invalidName }
            do { return (try folder(call, state), name) } catch let error as MockPCloudError
                where error.code == 2005 && call.parameters["path"] != nil
            {
                throw MockPCloudError.parentMissing
            }
        }
        guard let path = call.parameters["path"], path.hasPrefix("/") else { throw MockPCloudError.noFolder }
        let parts = path.split(separator: "/").map(String.init)
        guard let name = parts.last, MockPCloudNames.isValid(name) else { throw MockPCloudError.invalidName }
        guard let parent = try resolve("/" + parts.dropLast().joined(separator: "/"), state), parent.isFolder else {
            throw MockPCloudError.parentMissing
        }
        return (parent, name)
    }

    // MARK: Methods

    private func userinfo() -> MockResponse {
        let used = state.withLock { $0.tree.usage }
        return Self.ok([
            "email": "llvs-mock@example.com", "emailverified": true, "premium": false, "quota": settings.quotaBytes,
            "usedquota": used, "userid": 4242, "locationid": locationID, "language": "en",
        ])
    }

    private func listFolder(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            let found = try folder(call, state)
            let answer = Self.ok(["metadata": metadata(found, call, in: state, contents: 1)])
            // Counted once served: a lagging file is left out of this listing and the next.
            state.tree.listingServed(of: found.id)
            return answer
        }
    }

    private func createFolder(_ call: MockPCloudCall, ifNotExists: Bool) throws -> MockResponse {
        try state.withLock { state in
            let (parent, name) = try placement(call, state, nameField: "name")
            if let existing = state.child(named: name, of: parent.id) {
                guard ifNotExists, existing.isFolder else { throw MockPCloudError.exists }
                return Self.ok(["metadata": metadata(existing, call, in: state), "created": false])
            }
            let now = state.tree.tick()
            let folder = MockPCloudItem(
                id: state.newID(folder: true), name: name, parents: [parent.id], isFolder: true, created: now)
            state.tree.insert(folder)
            state.log("createfolder", folder.id)
            return Self.ok(["metadata": metadata(folder, call, in: state), "created": true])
        }
    }

    /// Stores contents under a name in a folder: a new file, or new contents of the file there (same ID, the old
    /// contents kept as a revision). A folder of that name refuses.
    func store(
        _ content: MockContent, named name: String, in parent: MockPCloudItem, state: inout MockPCloudState
    ) throws -> MockPCloudItem {
        let existing = state.child(named: name, of: parent.id)
        if existing?.isFolder == true { throw MockPCloudError.exists }
        let growth = content.size - (existing?.size ?? 0)
        guard state.tree.usage + growth <= settings.quotaBytes else { throw MockPCloudError.overQuota }
        let now = state.tree.tick()
        if let existing {
            let updated = state.tree.update(existing.id) { $0.store(content, at: now) }!
            state.log("modifyfile", updated.id)
            return updated
        }
        var file = MockPCloudItem(
            id: state.newID(folder: false), name: name, parents: [parent.id], isFolder: false, created: now)
        file.store(content, at: now)
        state.tree.insert(file)
        state.log("createfile", file.id)
        return file
    }

    func checksums(_ item: MockPCloudItem) -> [String: Any] {
        var sums: [String: Any] = ["sha1": item.sha1]
        if settings.region == .us { sums["md5"] = item.md5 } else { sums["sha256"] = item.sha256 }
        return sums
    }

    /// `uploadfile`: a PUT of the raw bytes named by `filename`, or multipart with one or more file parts.
    private func uploadFile(_ call: MockPCloudCall, _ request: IncomingRequest) throws -> MockResponse {
        var uploads: [(String, MockContent)] = []
        if request.method == "PUT" {
            guard request.headers["Content-Length"] != nil else {
                throw MockPCloudError(1000, "Content-Length is required; chunked uploads are refused.")
            }
            guard let name = call.parameters["filename"], MockPCloudNames.isValid(name) else {
                throw MockPCloudError.invalidName
            }
            uploads = [(name, try MockContent.keeping(request.body, in: storage))]
        } else {
            guard !call.files.isEmpty else { throw MockPCloudError(2000, "No files were sent.") }
            for file in call.files {
                guard MockPCloudNames.isValid(file.name) else { throw MockPCloudError.invalidName }
                uploads.append((file.name, .data(file.data)))
            }
        }
        let times = try Self.clientTimes(call)
        let lag = faults.fires("listing-lag", method: request.method, path: request.path)
        return try state.withLock { state in
            let parent = try folder(call, state)
            var stored: [MockPCloudItem] = []
            for (name, content) in uploads {
                var target = name
                if call.flag("renameifexists"), state.child(named: name, of: parent.id) != nil {
                    var n = 1
                    while state.child(named: "\(name) (\(n))", of: parent.id) != nil { n += 1 }
                    target = "\(name) (\(n))"
                }
                let isNew = state.child(named: target, of: parent.id) == nil
                var file = try store(content, named: target, in: parent, state: &state)
                if lag, isNew { state.tree.lagInListings(file.id) }
                if let times { file = state.tree.update(file.id) { Self.apply(times, to: &$0) } ?? file }
                stored.append(file)
            }
            return Self.ok([
                "fileids": stored.map(\.number), "metadata": stored.map { metadata($0, call, in: state) },
                "checksums": stored.map(checksums),
            ])
        }
    }

    private func uploadSession(_ call: MockPCloudCall, _ request: IncomingRequest) throws -> MockResponse {
        if call.method == "upload_create" {
            return state.withLock { state in
                state.uploadCounter += 1
                _ = state.sessions.open(state.uploadCounter, total: nil, in: storage, id: String(state.uploadCounter))
                return Self.ok(["uploadid": state.uploadCounter])
            }
        }
        guard let id = call.parameters["uploadid"] else { throw MockPCloudError(1000, "Please provide 'uploadid'.") }
        return try state.withLock { state in
            guard var session = state.sessions[id], !session.expired, session.finishedID == nil else {
                throw MockPCloudError.uploadMissing
            }
            switch call.method {
            case "upload_write":
                guard let offset = try call.number("uploadoffset") else {
                    throw MockPCloudError(1000, "Please provide 'uploadoffset'.")
                }
                try session.write(request.body, at: Int64(offset))
                state.sessions[id] = session
                state.sessions.pieceStored()
                return Self.ok([:])
            case "upload_info":
                return Self.ok(["size": session.received, "currentoffset": session.received])
            case "upload_save":
                let (parent, name) = try placement(call, state, nameField: "name")
                let isNew = state.child(named: name, of: parent.id) == nil
                var file = try store(session.content(total: session.received), named: name, in: parent, state: &state)
                if isNew, faults.fires("listing-lag", method: request.method, path: request.path) {
                    state.tree.lagInListings(file.id)
                }
                if let times = try Self.clientTimes(call) {
                    file = state.tree.update(file.id) { Self.apply(times, to: &$0) } ?? file
                }
                session.finishedID = file.id  // kept for its byte count; a later call on it is 2067, as on pCloud
                state.sessions[id] = session
                return Self.ok(["metadata": metadata(file, call, in: state)])
            default:
                try? FileManager.default.removeItem(at: session.spool)
                session.expired = true
                state.sessions[id] = session
                return Self.ok([:])
            }
        }
    }

    private func stat(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            if call.parameters["folderid"] != nil {
                return Self.ok(["metadata": metadata(try folder(call, state), call, in: state)])
            }
            return Self.ok(["metadata": metadata(try file(call, state), call, in: state)])
        }
    }

    private func checksumFile(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            let found = try file(call, state)
            var answer = checksums(found)
            answer["metadata"] = metadata(found, call, in: state)
            return Self.ok(answer)
        }
    }

    /// A link on the content host, named under two host names (as pCloud names several hosts); no token needed.
    private func fileLink(_ call: MockPCloudCall) throws -> MockResponse {
        let (content, name) = try state.withLock { state -> (MockContent, String) in
            let found = try file(call, state)
            return (found.content ?? .data(Data()), found.name)
        }
        let expires = Date().addingTimeInterval(settings.linkLifetime)
        let url = contentHost.publish(content, expires: expires)
        _ = name
        let port = contentHost.server.port
        return Self.ok([
            "path": url.path, "hosts": ["127.0.0.1:\(port)", "localhost:\(port)"],
            "expires": MockPCloudTime.format(expires, asTimestamp: false),
        ])
    }

    /// `getzip`: the named files in a zip archive (stored, not compressed), as the client library downloads files.
    private func zip(_ call: MockPCloudCall) throws -> MockResponse {
        let ids = (call.parameters["fileids"] ?? call.parameters["fileid"] ?? "").split(separator: ",").compactMap {
            UInt64($0)
        }
        guard !ids.isEmpty else { throw MockPCloudError.noFile }
        let entries = try state.withLock { state in
            try ids.map { id -> (String, Data) in
                guard let found = state.live("f\(id)") else { throw MockPCloudError.fileMissing }
                let data: Data =
                    switch found.content {
                    case .data(let data)?: data
                    case .spooled(let url, _)?: (try? Data(contentsOf: url)) ?? Data()
                    case nil: Data()
                    }
                return (found.name, data)
            }
        }
        return MockResponse(
            status: 200, headers: ["Content-Type": "application/zip"], body: .data(MockZipArchive.stored(entries)))
    }

    private func deleteFile(_ call: MockPCloudCall) throws -> MockResponse {
        try state.withLock { state in
            let found = try file(call, state)
            let removed = state.tree.update(found.id) { $0.trashed = true }!
            state.log("deletefile", removed.id)
            var object = metadata(removed, call, in: state)
            object["isdeleted"] = true
            return Self.ok(["metadata": object])
        }
    }

    private func deleteFolder(_ call: MockPCloudCall, recursive: Bool) throws -> MockResponse {
        try state.withLock { state in
            let found = try folder(call, state)
            guard found.id != MockPCloudState.rootID else { throw MockPCloudError.root }
            let live = state.tree.children(of: found.id).filter { !$0.trashed }
            guard recursive || live.isEmpty else { throw MockPCloudError.notEmpty }
            var files = 0, folders = 0
            var pending = [found.id]
            while let next = pending.popLast() {
                guard let item = state.tree[next], !item.trashed || next == found.id else { continue }
                if item.isFolder {
                    folders += 1
                    pending += state.tree.children(of: next).map(\.id)
                } else {
                    files += 1
                }
                state.log(item.isFolder ? "deletefolder" : "deletefile", next)
            }
            state.tree.update(found.id) { $0.trashed = true }
            if recursive { return Self.ok(["deletedfiles": files, "deletedfolders": folders]) }
            return Self.ok(["metadata": metadata(found, call, in: state)])
        }
    }

    /// The change feed: `last=N` for the latest N events (0: only the current `diffid`), `diffid=N` for what came
    /// after N; with `block=1` and nothing new, the answer waits for the next change (bounded here to `timeout`
    /// seconds, 60 by default, so a forgotten client never holds a thread for ever).
    private func diff(_ call: MockPCloudCall) throws -> MockResponse {
        let after: Int
        if let last = try call.number("last") {
            after = state.withLock { max(0, $0.diff.count - Int(last)) }
        } else {
            let diffid = Int(try call.number("diffid") ?? 0)
            // The reference names no code for a position pCloud let go; this one is the mock's (see MockPCloudError).
            let base = state.withLock { $0.diffBase }
            guard diffid >= base else { throw MockPCloudError.diffTooOld }
            after = diffid - base
        }
        let limit = Int(try call.number("limit") ?? 25_000)
        let deadline = Date().addingTimeInterval(Double(try call.number("timeout") ?? 60))
        let answer = longPoll.hold(until: deadline) {
            state.withLock { state -> MockResponse? in
                let entries = state.diff.indices.dropFirst(after).prefix(limit)
                if entries.isEmpty, call.flag("block"), call.parameters["last"] == nil { return nil }
                let rendered = entries.map { index -> [String: Any] in
                    let entry = state.diff[index]
                    return [
                        "event": entry.event, "diffid": state.diffBase + index + 1,
                        "time": MockPCloudTime.format(entry.time, asTimestamp: call.timestamps),
                        "metadata": metadata(entry.item, call, in: state),
                    ]
                }
                return Self.ok([
                    "diffid": state.diffBase + (entries.last.map { $0 + 1 } ?? max(after, state.diff.count)),
                    "entries": rendered,
                ])
            }
        }
        return answer ?? Self.ok(["diffid": state.withLock { $0.diffBase } + after, "entries": [Any]()])
    }
}
