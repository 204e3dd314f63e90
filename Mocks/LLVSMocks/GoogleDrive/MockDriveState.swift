import Foundation
import LLVS

/// One Drive item: a file or a folder, with its ID, its parents and its place in the trash.
struct MockDriveItem: Sendable {
    var id: String
    var name: String
    var mimeType: String
    var parents: [String]
    var trashed = false
    var createdTime: Date { didSet { createdText = MockDriveTime.format(createdTime) } }
    var modifiedTime: Date { didSet { modifiedText = MockDriveTime.format(modifiedTime) } }
    /// The times as Drive writes them, formatted once rather than for every listing.
    private(set) var createdText: String
    private(set) var modifiedText: String
    var content: MockContent?
    var md5: String?
    var version = 1

    init(id: String, name: String, mimeType: String, parents: [String], createdTime: Date, modifiedTime: Date) {
        self.id = id
        self.name = name
        self.mimeType = mimeType
        self.parents = parents
        self.createdTime = createdTime
        self.modifiedTime = modifiedTime
        createdText = MockDriveTime.format(createdTime)
        modifiedText = MockDriveTime.format(modifiedTime)
    }

    static let folderType = "application/vnd.google-apps.folder"
    var isFolder: Bool { mimeType == Self.folderType }

    /// The full resource, as Drive writes it (`size` as a string, times in RFC 3339 with milliseconds).
    func json(trashed effective: Bool) -> [String: Any] {
        var object: [String: Any] = [
            "kind": "drive#file", "id": id, "name": name, "mimeType": mimeType, "parents": parents, "trashed": effective,
            "explicitlyTrashed": trashed, "createdTime": createdText,
            "modifiedTime": modifiedText, "version": String(version), "spaces": ["drive"], "starred": false,
        ]
        if let content, !isFolder {
            object["size"] = String(content.size)
            if let md5 { object["md5Checksum"] = md5 }
        }
        return object
    }
}

/// What a resumable upload session has received so far.
struct MockUploadSession: Sendable {
    enum Target: Sendable {
        case create(MockDriveMetadata)
        case update(id: String, MockDriveMetadata)
    }

    var target: Target
    var total: Int64?
    var received: Int64 = 0
    var spool: URL
    /// Every body byte sent to the session, repeats included (what a test of resuming looks at).
    var bytesSent: Int64 = 0
    var fields: String?
    var finishedID: String?
    var expired = false
}

/// The metadata a create or update request carries.
struct MockDriveMetadata: Sendable {
    var name: String?
    var mimeType: String?
    var parents: [String]?
    var trashed: Bool?

    init(json data: Data) throws {
        guard !data.isEmpty else { return }
        guard let object = try JSONSerialization.jsonObject(with: data) as? [String: Any] else {
            throw MockDriveError.badRequest("the metadata is not a JSON object")
        }
        name = object["name"] as? String
        mimeType = object["mimeType"] as? String
        parents = object["parents"] as? [String]
        trashed = object["trashed"] as? Bool
        if object["parents"] != nil, parents == nil { throw MockDriveError.badRequest("parents must be a list of IDs") }
    }
}

/// An answer the mock refuses with, in Drive's error body.
enum MockDriveError: Error {
    case badRequest(String)
    case notFound(String)
    case forbidden(reason: String, message: String)
    case invalidParameter(location: String, message: String)
}

/// Everything the mock Drive holds, behind one lock.
struct MockDriveState: Sendable {
    var items: [String: MockDriveItem] = [:]
    /// Folder ID → child IDs in creation order, so `'<id>' in parents` looks at one folder, not the whole drive.
    var children: [String: [String]] = [:]
    /// Folder ID → lowercased name → child IDs, so `name = '…'` in a folder is a lookup, as it is for Drive.
    var childrenByName: [String: [String: [String]]] = [:]
    var sessions: [String: MockUploadSession] = [:]
    /// A listing's remaining pages: the query and the IDs it matched when its first page was asked for.
    var pageTokens: [String: (query: String, ids: ArraySlice<String>)] = [:]
    /// The changes feed: change number N is `changes[N - 1]`.
    var changes: [(fileId: String, removed: Bool, time: Date)] = []
    /// The index in `changes` of each file's latest change.
    var latestChange: [String: Int] = [:]
    var lastTime = Date.distantPast
    var rejectRemaining = 0
    var chunksUntilExpiry: Int?
    let rootID: String

    init(rootID: String) {
        self.rootID = rootID
        let now = Date()
        items[rootID] = MockDriveItem(id: rootID, name: "My Drive", mimeType: MockDriveItem.folderType, parents: [], createdTime: now, modifiedTime: now)
    }

    /// A strictly increasing clock with millisecond steps, so creation order is visible in `createdTime`.
    mutating func tick() -> Date {
        let now = Date(timeIntervalSince1970: (Date().timeIntervalSince1970 * 1000).rounded(.down) / 1000)
        lastTime = now > lastTime ? now : lastTime.addingTimeInterval(0.001)
        return lastTime
    }

    mutating func expireSessions() {
        for key in sessions.keys { sessions[key]?.expired = true }
    }

    /// Counts a stored chunk towards a planned expiry.
    mutating func chunkStored() {
        guard let remaining = chunksUntilExpiry else { return }
        if remaining <= 1 {
            chunksUntilExpiry = nil
            expireSessions()
        } else {
            chunksUntilExpiry = remaining - 1
        }
    }

    func resolve(_ id: String) -> String { id == "root" ? rootID : id }

    func item(_ id: String) throws -> MockDriveItem {
        guard let item = items[resolve(id)] else { throw MockDriveError.notFound(id) }
        return item
    }

    /// Trashed itself or inside a trashed folder, as Drive reports `trashed`.
    func isTrashed(_ id: String) -> Bool {
        var current = items[id]
        var depth = 0
        while let item = current, depth < 64 {
            if item.trashed { return true }
            current = item.parents.first.flatMap { items[$0] }
            depth += 1
        }
        return false
    }

    func json(_ item: MockDriveItem) -> [String: Any] { item.json(trashed: isTrashed(item.id)) }

    var usage: Int64 { items.values.reduce(0) { $0 + ($1.content?.size ?? 0) } }

    mutating func record(_ id: String, removed: Bool = false) {
        latestChange[id] = changes.count
        changes.append((id, removed, lastTime))
    }

    /// A new item in a folder; Drive never refuses a duplicate name.
    mutating func create(_ metadata: MockDriveMetadata, content: MockContent?, md5: String?, defaultName: String = "Untitled") throws -> MockDriveItem {
        let parents = (metadata.parents ?? [rootID]).map(resolve)
        for parent in parents {
            guard let folder = items[parent] else { throw MockDriveError.notFound(parent) }
            guard folder.isFolder else { throw MockDriveError.badRequest("The parent \(parent) is not a folder.") }
        }
        let mimeType = metadata.mimeType ?? "application/octet-stream"
        let time = tick()
        let id = "1" + MockDriveID.make()
        var item = MockDriveItem(id: id, name: metadata.name ?? defaultName, mimeType: mimeType, parents: parents,
                                 createdTime: time, modifiedTime: time)
        if mimeType != MockDriveItem.folderType {
            item.content = content ?? .data(Data())
            item.md5 = md5 ?? DigestStream.hex(Data(), .md5)
        }
        items[id] = item
        for parent in parents {
            children[parent, default: []].append(id)
            childrenByName[parent, default: [:]][item.name.lowercased(), default: []].append(id)
        }
        record(id)
        return item
    }

    mutating func update(_ id: String, _ metadata: MockDriveMetadata, content: MockContent?, md5: String?) throws -> MockDriveItem {
        var item = try item(id)
        if let name = metadata.name, name != item.name {
            for parent in item.parents {
                childrenByName[parent]?[item.name.lowercased()]?.removeAll { $0 == item.id }
                childrenByName[parent, default: [:]][name.lowercased(), default: []].append(item.id)
            }
            item.name = name
        }
        if let trashed = metadata.trashed { item.trashed = trashed }
        if let content, !item.isFolder {
            item.content = content
            item.md5 = md5
            item.version += 1
        }
        item.modifiedTime = tick()
        items[item.id] = item
        record(item.id)
        return item
    }

    mutating func move(_ id: String, adding: [String], removing: [String]) throws {
        var item = try item(id)
        for parent in adding.map(resolve) where !item.parents.contains(parent) {
            guard items[parent]?.isFolder == true else { throw MockDriveError.notFound(parent) }
            item.parents.append(parent)
            children[parent, default: []].append(item.id)
            childrenByName[parent, default: [:]][item.name.lowercased(), default: []].append(item.id)
        }
        for parent in removing.map(resolve) {
            item.parents.removeAll { $0 == parent }
            children[parent]?.removeAll { $0 == item.id }
            childrenByName[parent]?[item.name.lowercased()]?.removeAll { $0 == item.id }
        }
        items[item.id] = item
    }

    /// Deletes an item for good, and everything inside it when it is a folder; returns spooled files to remove.
    mutating func delete(_ id: String) throws -> [URL] {
        let item = try item(id)
        guard item.id != rootID else { throw MockDriveError.forbidden(reason: "cannotDeleteRoot", message: "The root folder cannot be deleted.") }
        var spooled: [URL] = []
        var pending = [item.id]
        _ = tick()
        while let next = pending.popLast() {
            guard let removed = items.removeValue(forKey: next) else { continue }
            if case .spooled(let url, _) = removed.content { spooled.append(url) }
            for parent in removed.parents {
                children[parent]?.removeAll { $0 == next }
                childrenByName[parent]?[removed.name.lowercased()]?.removeAll { $0 == next }
            }
            pending += children.removeValue(forKey: next) ?? []
            childrenByName[next] = nil
            record(next, removed: true)
        }
        return spooled
    }

    /// The items a query matches, in creation order; only the named folder's children when the query names one.
    func search(_ query: DriveQuery?) throws -> [MockDriveItem] {
        let candidates: [MockDriveItem]
        if let parent = query?.requiredParent, let name = query?.requiredName {
            candidates = (childrenByName[resolve(parent)]?[name.lowercased()] ?? []).compactMap { items[$0] }
        } else if let parent = query?.requiredParent {
            candidates = (children[resolve(parent)] ?? []).compactMap { items[$0] }
        } else {
            candidates = items.values.filter { $0.id != rootID }.sorted { ($0.createdTime, $0.id) < ($1.createdTime, $1.id) }
        }
        guard let query else { return candidates }
        return try candidates.filter { item in
            try query.matches(DriveQuery.Subject(name: item.name, mimeType: item.mimeType, parents: item.parents.map { $0 == rootID ? "root" : $0 } + item.parents,
                                                 trashed: isTrashed(item.id), createdTime: item.createdTime, modifiedTime: item.modifiedTime))
        }
    }

    /// Puts back an item read from a saved state, with its place in the folder indexes.
    mutating func restore(_ item: MockDriveItem) {
        items[item.id] = item
        for parent in item.parents {
            children[parent, default: []].append(item.id)
            childrenByName[parent, default: [:]][item.name.lowercased(), default: []].append(item.id)
        }
    }

    /// The path of a live item from the root, for tests.
    func path(of id: String) -> String? {
        var names: [String] = []
        var current = items[id]
        while let item = current, item.id != rootID {
            names.append(item.name)
            guard let parent = item.parents.first else { return nil }
            current = items[parent]
        }
        return names.reversed().joined(separator: "/")
    }
}

/// Drive-looking IDs: 32 characters of letters, digits, `-` and `_`.
enum MockDriveID {
    static func make() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<32).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
    }
}
