import Foundation
import LLVSSupport

/// One Drive item: a file or a folder, with its ID, its parents and its place in the trash.
struct MockDriveItem: MockTreeItem {
    var id: String
    var name: String
    var mimeType: String
    var parents: [String]
    var trashed = false
    var createdTime: Date { didSet { createdText = RFC3339Date.format(createdTime) } }
    var modifiedTime: Date { didSet { modifiedText = RFC3339Date.format(modifiedTime) } }
    /// The times as Drive writes them, formatted once rather than for every listing.
    private(set) var createdText: String
    private(set) var modifiedText: String
    var content: MockContent?
    var md5: String?
    var version = 1
    /// Writable metadata a client sets and reads back.
    var description: String?
    var appProperties: [String: String] = [:]
    var properties: [String: String] = [:]
    /// Made through this app's API calls; a token with only the `drive.file` scope sees nothing else.
    var createdByThisApp = true

    init(id: String, name: String, mimeType: String, parents: [String], createdTime: Date, modifiedTime: Date) {
        self.id = id
        self.name = name
        self.mimeType = mimeType
        self.parents = parents
        self.createdTime = createdTime
        self.modifiedTime = modifiedTime
        createdText = RFC3339Date.format(createdTime)
        modifiedText = RFC3339Date.format(modifiedTime)
    }

    static let folderType = "application/vnd.google-apps.folder"
    var isFolder: Bool { mimeType == Self.folderType }

    /// The full resource, as Drive writes it (`size` as a string, times in RFC 3339 with milliseconds).
    func json(trashed effective: Bool) -> [String: Any] {
        var object: [String: Any] = [
            "kind": "drive#file", "id": id, "name": name, "mimeType": mimeType, "parents": parents,
            "trashed": effective,
            "explicitlyTrashed": trashed, "createdTime": createdText,
            "modifiedTime": modifiedText, "version": String(version), "spaces": ["drive"], "starred": false,
        ]
        if let content, !isFolder {
            object["size"] = String(content.size)
            if let md5 { object["md5Checksum"] = md5 }
        }
        if let description { object["description"] = description }
        if !appProperties.isEmpty { object["appProperties"] = appProperties }
        if !properties.isEmpty { object["properties"] = properties }
        return object
    }
}

/// What a resumable upload session will make: a new file or new contents of one, and the fields to answer with.
struct MockDriveUploadTarget: Sendable {
    enum Kind: Sendable {
        case create(MockDriveMetadata)
        case update(id: String, MockDriveMetadata)
    }
    var kind: Kind
    var fields: String?
}

/// The metadata a create or update request carries.
struct MockDriveMetadata: Sendable {
    var name: String?
    var mimeType: String?
    var parents: [String]?
    var trashed: Bool?
    var description: String?
    var modifiedTime: Date?
    /// Keys to set (a value) or remove (nil), as a patch gives them.
    var appProperties: [String: String?] = [:]
    var properties: [String: String?] = [:]

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
        description = object["description"] as? String
        if let text = object["modifiedTime"] as? String {
            guard let date = RFC3339Date.parse(text) else {
                throw MockDriveError.invalidParameter(
                    location: "modifiedTime", message: "Invalid value for modifiedTime: \(text)")
            }
            modifiedTime = date
        }
        for (key, target) in [
            ("appProperties", \MockDriveMetadata.appProperties), ("properties", \MockDriveMetadata.properties),
        ] {
            guard let value = object[key] else { continue }
            guard let map = value as? [String: Any] else {
                throw MockDriveError.badRequest("\(key) must be an object of strings")
            }
            self[keyPath: target] = try map.mapValues { value -> String? in
                if value is NSNull { return nil }
                guard let text = value as? String else {
                    throw MockDriveError.badRequest("\(key) values must be strings")
                }
                return text
            }
        }
    }
}

extension MockDriveMetadata {
    /// Description, properties (a nil value removes the key) and a client-given modification time.
    func applyWritable(to item: inout MockDriveItem) {
        if let description { item.description = description }
        for (key, value) in appProperties { item.appProperties[key] = value }
        for (key, value) in properties { item.properties[key] = value }
        if let modifiedTime { item.modifiedTime = modifiedTime }
    }
}

/// An answer the mock refuses with, in Drive's error body.
enum MockDriveError: Error {
    case badRequest(String)
    case notFound(String)
    case forbidden(reason: String, message: String)
    case invalidParameter(location: String, message: String)
}

/// Everything the mock Drive holds, behind one lock: the shared item tree (Drive's `name =` ignores case, so its
/// name index does too; the query then decides), the shared upload sessions, and Drive's page tokens.
struct MockDriveState: Sendable {
    var tree: MockItemTree<MockDriveItem>
    var sessions = MockUploadSessions<MockDriveUploadTarget>()
    /// A listing's remaining pages: the query and the IDs it matched when its first page was asked for.
    var pageTokens: [String: (query: String, ids: ArraySlice<String>)] = [:]
    var rejectRemaining = 0
    /// Resumable chunks still to come of which only part is kept (the fault `keepOnlyPartOfNextChunks`).
    var shortChunksToCome = 0

    init(rootID: String) {
        let now = Date()
        tree = MockItemTree(
            root: MockDriveItem(
                id: rootID, name: "My Drive", mimeType: MockDriveItem.folderType, parents: [],
                createdTime: now, modifiedTime: now), caseInsensitiveNames: true)
    }

    var rootID: String { tree.rootID }
    var items: [String: MockDriveItem] { tree.items }
    var changes: [MockChange] { tree.changes }
    var latestChange: [String: Int] { tree.latestChange }
    var usage: Int64 { tree.usage }

    mutating func tick() -> Date { tree.tick() }

    func resolve(_ id: String) -> String { id == "root" ? rootID : id }

    func item(_ id: String) throws -> MockDriveItem {
        guard let item = tree[resolve(id)] else { throw MockDriveError.notFound(id) }
        return item
    }

    func isTrashed(_ id: String) -> Bool { tree.isTrashed(id) }

    /// Whether a `drive.file` token may see an item: the root, and what this app made (unknown IDs answer 404 later).
    func isVisibleToThisApp(_ id: String) -> Bool {
        let id = resolve(id)
        return id == rootID || items[id]?.createdByThisApp != false
    }

    func json(_ item: MockDriveItem) -> [String: Any] { item.json(trashed: isTrashed(item.id)) }

    /// A new item in a folder; Drive never refuses a duplicate name.
    mutating func create(
        _ metadata: MockDriveMetadata, content: MockContent?, md5: String?, defaultName: String = "Untitled"
    ) throws -> MockDriveItem {
        let parents = (metadata.parents ?? [rootID]).map(resolve)
        // Since 2020 an item has exactly one parent.
        guard parents.count <= 1 else { throw Self.cannotAddParent }
        for parent in parents {
            guard let folder = tree[parent] else { throw MockDriveError.notFound(parent) }
            guard folder.isFolder else { throw MockDriveError.badRequest("The parent \(parent) is not a folder.") }
        }
        let mimeType = metadata.mimeType ?? "application/octet-stream"
        let time = tick()
        var item = MockDriveItem(
            id: "1" + MockDriveID.make(), name: metadata.name ?? defaultName, mimeType: mimeType, parents: parents,
            createdTime: time, modifiedTime: time)
        if mimeType != MockDriveItem.folderType {
            item.content = content ?? .data(Data())
            item.md5 = md5 ?? DigestStream.hex(Data(), .md5)
        }
        metadata.applyWritable(to: &item)
        tree.insert(item)
        return item
    }

    mutating func update(
        _ id: String, _ metadata: MockDriveMetadata, content: MockContent?, md5: String?
    ) throws -> MockDriveItem {
        let id = try item(id).id
        let time = tick()
        return tree.update(id) { item in
            if let name = metadata.name { item.name = name }
            if let trashed = metadata.trashed { item.trashed = trashed }
            if let content, !item.isFolder {
                item.content = content
                item.md5 = md5
                item.version += 1
            }
            item.modifiedTime = time
            metadata.applyWritable(to: &item)
        }!
    }

    mutating func move(_ id: String, adding: [String], removing: [String]) throws {
        let id = try item(id).id
        let adding = adding.map(resolve), removing = removing.map(resolve)
        for parent in adding where tree[parent]?.isFolder != true { throw MockDriveError.notFound(parent) }
        // One parent only: adding one needs the old one removed in the same request.
        let current = tree[id]?.parents ?? []
        guard Set(current).subtracting(removing).union(adding).count <= 1 else { throw Self.cannotAddParent }
        // A folder cannot go into itself or anything below it.
        for parent in adding {
            var ancestor: String? = parent
            while let next = ancestor {
                if next == id {
                    throw MockDriveError.forbidden(
                        reason: "cannotMoveFolderIntoItself",
                        message: "A folder cannot be moved into itself or one of its descendants.")
                }
                ancestor = tree[next]?.parents.first
            }
        }
        // A parent both added and removed stays (rclone renames in place that way): Drive applies the removals to
        // the parents the item had, then adds.
        tree.update(id) { item in
            item.parents.removeAll { removing.contains($0) && !adding.contains($0) }
            for parent in adding where !item.parents.contains(parent) { item.parents.append(parent) }
        }
    }

    static let cannotAddParent = MockDriveError.forbidden(
        reason: "cannotAddParent", message: "Increasing the number of parents is not allowed.")

    /// Deletes every trashed item for good (`files.emptyTrash`); returns spooled files to remove.
    mutating func emptyTrash() -> [URL] {
        let trashed = items.values.filter { $0.trashed }.map(\.id)
        return trashed.flatMap { id in tree[id] == nil ? [] : (try? delete(id)) ?? [] }
    }

    /// Deletes an item for good, and everything inside it when it is a folder; returns spooled files to remove.
    mutating func delete(_ id: String) throws -> [URL] {
        let item = try item(id)
        guard item.id != rootID else {
            throw MockDriveError.forbidden(reason: "cannotDeleteRoot", message: "The root folder cannot be deleted.")
        }
        _ = tick()
        return tree.remove(item.id).compactMap { removed in
            if case .spooled(let url, _) = removed.content { return url }
            return nil
        }
    }

    /// The items a query matches, in creation order; only the named folder's children when the query names one.
    func search(_ query: DriveQuery?) throws -> [MockDriveItem] {
        let candidates: [MockDriveItem]
        if let parent = query?.requiredParent, let name = query?.requiredName {
            candidates = tree.children(of: resolve(parent), named: name)
        } else if let parent = query?.requiredParent {
            candidates = tree.children(of: resolve(parent))
        } else {
            candidates = items.values.filter { $0.id != rootID }.sorted {
                ($0.createdTime, $0.id) < ($1.createdTime, $1.id)
            }
        }
        guard let query else { return candidates }
        return try candidates.filter { item in
            try query.matches(
                DriveQuery.Subject(
                    name: item.name, mimeType: item.mimeType,
                    parents: item.parents.map { $0 == rootID ? "root" : $0 } + item.parents,
                    trashed: isTrashed(item.id), createdTime: item.createdTime, modifiedTime: item.modifiedTime))
        }
    }

    /// Puts back an item read from a saved state, with its place in the folder indexes.
    mutating func restore(_ item: MockDriveItem) { tree.restore(item) }

    /// The path of a live item from the root, for tests.
    func path(of id: String) -> String? { tree.path(of: id) }
}

/// Drive-looking IDs: 32 characters of letters, digits, `-` and `_`.
enum MockDriveID {
    static func make() -> String {
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        return String((0..<32).map { _ in alphabet[Int.random(in: 0..<alphabet.count)] })
    }
}
