import Foundation
import LLVS
import LLVSHTTP

/// Drive names items by ID; this turns paths into IDs one component at a time. Folder IDs are cached and reused for
/// everything below them, file IDs seen in listings make a later download one request, and a folder is created
/// once however many uploads want it at the same moment (and, across clients, the oldest of a racing pair wins).
extension GoogleDriveFileSystem {
    static func key(_ components: some Collection<String>) -> String { components.joined(separator: "/") }

    func cached(_ key: String) -> Entry? { ids.withLock { $0[key] } }
    func remember(_ key: String, _ file: DriveFile) { ids.withLock { $0[key] = Entry(id: file.id, isFolder: file.isFolder) } }

    /// Drops what is known about a path and everything below it.
    func forget(_ key: String) {
        ids.withLock { entries in
            for name in entries.keys where name == key || key.isEmpty || name.hasPrefix(key + "/") { entries[name] = nil }
        }
    }

    /// Every item of a query, page after page.
    func query(_ q: String, path: String, fields: String = DriveFile.fields) async throws -> [DriveFile] {
        var files: [DriveFile] = []
        var pageToken: String?
        repeat {
            var parameters = [("q", q), ("fields", "nextPageToken,files(\(fields))"), ("pageSize", String(configuration.pageSize)), ("spaces", "drive")]
            if let pageToken { parameters.append(("pageToken", pageToken)) }
            let page = try decode(DriveFileList.self, try await send(HTTPRequest(url: url(configuration.apiURL, "/files", parameters))), path)
            files += page.files ?? []
            pageToken = page.nextPageToken
        } while pageToken != nil
        return files
    }

    /// The items named exactly `name` in a folder (Drive's `name =` ignores case; LLVS names do not).
    func items(named name: String, in folderID: String, path: String) async throws -> [DriveFile] {
        try await query(DriveQuery.named(name, in: folderID), path: path).filter { $0.name == name }
    }

    /// The ID of the folder at `components`, creating missing folders when asked; nil when it is missing. A file
    /// where the last component should be a folder is `wrongKind`; a file on the way is a missing path.
    func folderID(_ components: [String], creating: Bool) async throws -> String? {
        var id = configuration.rootFolderID
        for depth in components.indices {
            let key = Self.key(components[...depth])
            if let entry = cached(key), entry.isFolder { id = entry.id; continue }
            if creating {
                id = try await ensureFolder(key, name: components[depth], parentID: id)
                continue
            }
            let found = try await items(named: components[depth], in: id, path: key)
            guard let folder = DriveFile.chosen(found.filter(\.isFolder)) else {
                if !found.isEmpty, depth == components.count - 1 { throw CloudFileSystemError.wrongKind(path: key, expectedFolder: true) }
                return nil
            }
            remember(key, folder)
            id = folder.id
        }
        return id
    }

    func ensureFolder(_ key: String, name: String, parentID: String) async throws -> String {
        let task = creating.withLock { tasks in
            if let running = tasks[key] { return running }
            let task = Task { try await self.createFolder(key, name: name, parentID: parentID) }
            tasks[key] = task
            return task
        }
        defer { creating.withLock { _ = $0.removeValue(forKey: key) } }
        return try await task.value
    }

    /// One folder, created only when no folder of that name is there. Another client may create the same folder
    /// at the same moment; looking again afterwards and taking the oldest makes every client use the same one.
    func createFolder(_ key: String, name: String, parentID: String) async throws -> String {
        if let entry = cached(key), entry.isFolder { return entry.id }
        let existing = try await items(named: name, in: parentID, path: key)
        if let folder = DriveFile.chosen(existing.filter(\.isFolder)) {
            remember(key, folder)
            return folder.id
        }
        guard existing.isEmpty else { throw CloudFileSystemError.wrongKind(path: key, expectedFolder: true) }
        let request = Self.jsonRequest("POST", url(configuration.apiURL, "/files", [("fields", DriveFile.fields)]),
                                       ["name": name, "mimeType": GoogleDriveConfiguration.folderMimeType, "parents": [parentID]],
                                       safeToRepeat: false)
        _ = try await createOnce(request, path: key) {
            DriveFile.chosen(try await self.items(named: name, in: parentID, path: key).filter(\.isFolder))
        }
        guard let folder = DriveFile.chosen(try await items(named: name, in: parentID, path: key).filter(\.isFolder)) else {
            throw CloudFileSystemError.transient("Google Drive did not create the folder \(key); try again")
        }
        remember(key, folder)
        return folder.id
    }

    /// Sends a creation that must not happen twice. Drive may have acted on a request whose answer was lost or
    /// was a 5xx, so before sending it again the connector looks whether the item landed.
    func createOnce(_ request: HTTPRequest, path: String, landed: () async throws -> DriveFile?) async throws -> DriveFile {
        let policy = http.configuration.retryPolicy
        var attempt = 1
        while true {
            do {
                return try decode(DriveFile.self, try await send(request), path)
            } catch let error as CloudFileSystemError where Self.isWorthResuming(error) {
                if let file = try await landed() { return file }
                guard attempt < policy.maximumAttempts else { throw error }
                try await policy.sleep(policy.delay(beforeRetry: attempt, retryAfter: nil))
                attempt += 1
            }
        }
    }

    static let rootItem = DriveFile(id: "", name: "", mimeType: GoogleDriveConfiguration.folderMimeType)

    /// The item at a path (the chosen one among duplicates), or nil.
    func find(_ path: String) async throws -> DriveFile? {
        let components = try CloudPath.components(path)
        guard let name = components.last else { return Self.rootItem }
        let parent: String?
        do {
            parent = try await folderID(Array(components.dropLast()), creating: false)
        } catch CloudFileSystemError.wrongKind {
            return nil
        }
        guard let parent, let file = DriveFile.chosen(try await items(named: name, in: parent, path: path)) else { return nil }
        remember(Self.key(components), file)
        return file
    }

    /// Runs `body` with the ID of the file at `path`: the cached one first, resolved again if Drive forgot it.
    func withFileID<T>(_ path: String, _ body: (String) async throws -> T) async throws -> T {
        let key = Self.key(try CloudPath.components(path))
        if let entry = cached(key), !entry.isFolder {
            do { return try await body(entry.id) } catch CloudFileSystemError.notFound { forget(key) }
        }
        guard let file = try await find(path) else { throw CloudFileSystemError.notFound(path: path) }
        guard !file.isFolder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        return try await body(file.id)
    }
}
