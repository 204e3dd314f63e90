import Foundation
import LLVSSupport
import LLVSHTTP
import Synchronization

/// A mock Google Drive (API v3) that behaves as Drive does (docs/services/google-drive.md): items with IDs and
/// parents, duplicate names allowed, trash, the query language, `fields`, page tokens, multipart, media and
/// resumable uploads with the 308/Range protocol, PATCH updates, `alt=media` with Range, delete and trash, error
/// bodies with reasons, rate-limit answers as Drive gives them, Google's OAuth endpoints and answer shapes, and
/// the changes feed. Everything is served from one port: the API under `/drive/v3`, uploads under
/// `/upload/drive/v3`, OAuth at `/o/oauth2/v2/auth`, `/token` and `/device/code`.
public final class MockGoogleDriveServer: Sendable, MockOAuthService, MockAPIService {
    public struct Settings: Sendable {
        /// The largest media part a multipart upload takes; larger files must use a resumable upload.
        public var multipartLimit = 5 * 1024 * 1024
        public var defaultPageSize = 100
        public var maximumPageSize = 1000
        /// The account's storage quota in bytes; nil for unlimited.
        public var quotaBytes: Int64?
        public var oauth = MockOAuthServer.Settings.google
        public init() {}
    }

    public let settings: Settings
    public let server: MockHTTPServer
    public let oauth: MockOAuthServer
    /// The real ID behind the `root` alias.
    public let rootID: String
    let state: Mutex<MockDriveState>
    let storage: URL
    let stateDirectory: MockStateDirectory?

    /// `state`: a folder to keep the drive (and the issued tokens) in between runs, loaded now and written after
    /// every change.
    public init(
        settings: Settings = Settings(), port: UInt16 = 0, faults: MockFaults = MockFaults(),
        state saved: MockStateDirectory? = nil
    ) throws {
        self.settings = settings
        oauth = MockOAuthServer(settings: settings.oauth)
        stateDirectory = saved
        let loaded = try saved?.load(Saved.self)
        rootID = loaded?.rootID ?? "0A" + MockDriveID.make().prefix(17) + "Uk9PVA"
        var drive = MockDriveState(rootID: rootID)
        if let loaded, let saved {
            for item in loaded.items { drive.restore(item.item(in: saved)) }
            oauth.restore(loaded.tokens)
        }
        state = Mutex(drive)
        storage = try MockStorageFolder.make("gdrive")
        let box = MockBackReference<MockGoogleDriveServer>()
        server = try box.apiServer(port: port, faults: faults)
        box.attach(self)
    }

    deinit { stop() }

    public func stop() {
        MockStorageFolder.stop([server], removing: storage)
    }

    // MARK: For tests

    /// A token as if the user had authorized (Google's shape: `Bearer`, about an hour).
    public func issueToken() -> OAuthToken {
        let token = oauth.issueToken()
        persist()
        return token
    }
    /// Answers the next `count` API requests 401, as Drive does once a token is revoked (the token endpoint is
    /// not affected, so a refresh still succeeds).
    public func rejectNextRequests(_ count: Int) { state.withLock { $0.rejectRemaining += count } }
    /// Makes every open upload session forgotten, as Drive does after a week.
    public func expireUploadSessions() { state.withLock { $0.sessions.expireAll() } }
    /// The next `count` resumable chunks (not final, at least two granules) are kept only in part, as Drive may do:
    /// its 308 names a shorter Range than was sent.
    public func keepOnlyPartOfNextChunks(_ count: Int) { state.withLock { $0.shortChunksToCome += count } }
    /// Refuses every changes page token handed out so far (400 invalid value, as for a token Drive does not know).
    public func expireChangeCursors() { state.withLock { $0.tree.forgetChanges() } }
    /// Forgets every upload session once this many more chunks have been stored (a deterministic mid-upload expiry).
    public func expireUploadSessions(afterChunks count: Int) {
        state.withLock { $0.sessions.piecesUntilExpiry = count }
    }
    /// Bytes sent to each upload session so far, repeats included, in no particular order.
    public var uploadSessionBytes: [Int64] { state.withLock { $0.sessions.bytesSent } }
    /// Paths of items not in the trash (folders included), for tests.
    public var paths: [String] {
        state.withLock { $0.tree.livePaths }
    }
    /// How many items (trashed or not) have this name.
    public func count(named name: String) -> Int { state.withLock { $0.items.values.filter { $0.name == name }.count } }
    public var itemCount: Int { state.withLock { $0.items.count - 1 } }

    /// Adds a file directly (for duplicate-name tests); returns its ID. `byThisApp: false` makes it as another app
    /// or the Drive web page would: a `drive.file` token does not see it.
    @discardableResult
    /// `created`: the file's createdTime, for a test that needs an order finer than the clock's (two files made in
    /// one millisecond tie, as they can on Drive); now when not given.
    public func addFile(
        named name: String, in parentID: String = "root", data: Data, byThisApp: Bool = true, created: Date? = nil
    ) throws -> String {
        try state.withLock { state in
            var metadata = try MockDriveMetadata(json: Data())
            metadata.name = name
            metadata.parents = [parentID]
            let id = try state.create(metadata, content: .data(data), md5: DigestStream.hex(data, .md5)).id
            _ = state.tree.update(id) { item in
                item.createdByThisApp = byThisApp
                if let created { item.createdTime = created }
            }
            return id
        }
    }

    /// Adds a folder directly; returns its ID (`byThisApp` as for `addFile`).
    @discardableResult
    public func addFolder(named name: String, in parentID: String = "root", byThisApp: Bool = true) throws -> String {
        try state.withLock { state in
            var metadata = try MockDriveMetadata(json: Data())
            metadata.name = name
            metadata.parents = [parentID]
            metadata.mimeType = MockDriveItem.folderType
            let id = try state.create(metadata, content: nil, md5: nil).id
            _ = state.tree.update(id) { $0.createdByThisApp = byThisApp }
            return id
        }
    }

    /// The ID of the live item at a path, if any (the oldest among duplicates).
    public func id(at path: String) -> String? {
        state.withLock { state in
            var id = rootID
            for name in path.split(separator: "/").map(String.init) {
                let match = state.tree.children(of: id)
                    .filter { $0.name == name && !state.isTrashed($0.id) }
                    .min { ($0.createdTime, $0.id) < ($1.createdTime, $1.id) }
                guard let match else { return nil }
                id = match.id
            }
            return id
        }
    }

    // MARK: Serving

    func handle(_ request: IncomingRequest) -> MockResponse {
        if let answer = oauth.handle(request) {
            if stateDirectory != nil, request.method == "POST", answer.status == 200 { persist() }  // new tokens
            return answer
        }
        let path = request.path
        let isAPI = path.hasPrefix("/drive/v3/"), isUpload = path.hasPrefix("/upload/drive/v3/")
        guard isAPI || isUpload else { return Self.error(404, "notFound", "Not Found") }
        guard oauth.isAuthorized(request.headers["Authorization"]) else { return unauthorized() }
        if state.withLock({ state -> Bool in
            guard state.rejectRemaining > 0 else { return false }
            state.rejectRemaining -= 1
            return true
        }) {
            return unauthorized()
        }
        // A token granted only `drive.file` sees the items this app made, nothing else (Drive's least privilege).
        let scopes = oauth.grantedScopes(request.headers["Authorization"])
        let restricted = scopes.map { !$0.contains("https://www.googleapis.com/auth/drive") } ?? false
        do {
            if restricted { try hideOtherAppsItems(request, path: path) }
            let answer =
                if isUpload {
                    try upload(request, String(path.dropFirst("/upload/drive/v3".count)), restricted: restricted)
                } else { try api(request, String(path.dropFirst("/drive/v3".count)), restricted: restricted) }
            if stateDirectory != nil, request.method != "GET", answer.status < 300 { persist() }
            return answer
        } catch let error as MockDriveError {
            return Self.answer(error)
        } catch let error as DriveQuery.Invalid {
            return Self.error(400, "invalid", "Invalid Value: \(error.description)", location: "q")
        } catch let error as DriveFieldMask.Invalid {
            return Self.error(400, "invalidParameter", "Invalid field selection \(error.field)", location: "fields")
        } catch {
            return Self.error(500, "backendError", "Backend Error: \(error)", domain: "global")
        }
    }

    private func unauthorized() -> MockResponse {
        var answer = oauth.unauthorizedResponse()
        answer.headers["WWW-Authenticate"] = #"Bearer realm="https://accounts.google.com/", error="invalid_token""#
        return answer
    }

    /// For a `drive.file` token: an item another app made, named in the path or in `addParents`, is not found.
    private func hideOtherAppsItems(_ request: IncomingRequest, path: String) throws {
        let parts = path.split(separator: "/").map(String.init)
        var named: [String] = []
        if let index = parts.firstIndex(of: "files"), index + 1 < parts.count { named.append(parts[index + 1]) }
        named += (request.query["addParents"] ?? "").split(separator: ",").map(String.init)
        try state.withLock { state in
            for id in named where !state.isVisibleToThisApp(id) { throw MockDriveError.notFound(id) }
        }
    }

    /// For a `drive.file` token: new items may only go into folders this app made (or the root).
    func checkParents(_ metadata: MockDriveMetadata, restricted: Bool) throws {
        guard restricted else { return }
        try state.withLock { state in
            for id in metadata.parents ?? [] where !state.isVisibleToThisApp(id) { throw MockDriveError.notFound(id) }
        }
    }

    private func api(_ request: IncomingRequest, _ path: String, restricted: Bool) throws -> MockResponse {
        let parts = path.split(separator: "/", omittingEmptySubsequences: true).map(String.init)
        let query = request.query
        switch (request.method, parts.count, parts.first) {
        case ("GET", 1, "files"): return try list(query, restricted: restricted)
        case ("GET", 2, "files") where parts[1] == "generateIds": return try generateIDs(query)
        case ("DELETE", 2, "files") where parts[1] == "trash":
            let spooled = state.withLock { $0.emptyTrash() }
            for url in spooled { try? FileManager.default.removeItem(at: url) }
            return .empty(204)
        case ("POST", 3, "files") where parts[2] == "copy": return try copy(parts[1], request, restricted: restricted)
        case ("POST", 1, "files"): return try createMetadataOnly(request, restricted: restricted)
        case ("GET", 2, "files"):
            if query["alt"] == "media" { return try download(parts[1], request) }
            let item = try state.withLock { try $0.item(parts[1]) }
            return try fileAnswer(item, fields: query["fields"])
        case ("PATCH", 2, "files"): return try patch(parts[1], request)
        case ("DELETE", 2, "files"):
            let spooled = try state.withLock { try $0.delete(parts[1]) }
            for url in spooled { try? FileManager.default.removeItem(at: url) }
            return .empty(204)
        case ("GET", 2, "changes") where parts[1] == "startPageToken":
            let token = state.withLock { $0.tree.feedPosition($0.changes.count) + 1 }
            return .json(200, ["kind": "drive#startPageToken", "startPageToken": String(token)])
        case ("GET", 1, "changes"): return try changes(query, restricted: restricted)
        case ("GET", 1, "about"):
            // Drive requires `fields` here (and nowhere else).
            guard let fields = query["fields"] else {
                throw MockDriveError.invalidParameter(
                    location: "fields", message: "The 'fields' parameter is required for this method.")
            }
            let usage = state.withLock { $0.usage }
            var quota: [String: Any] = [
                "usage": String(usage), "usageInDrive": String(usage), "usageInDriveTrash": "0",
            ]
            if let limit = settings.quotaBytes { quota["limit"] = String(limit) }
            let about: [String: Any] = [
                "kind": "drive#about", "storageQuota": quota, "maxUploadSize": "5242880000000",
                "user": [
                    "kind": "drive#user", "displayName": "Mock User", "emailAddress": "mock@example.com", "me": true,
                ],
            ]
            return .json(200, try DriveFieldMask.parse(fields).apply(to: about, schema: .about))
        default:
            return Self.error(404, "notFound", "Not Found")
        }
    }

    // MARK: Files

    func fileAnswer(_ item: MockDriveItem, fields: String?) throws -> MockResponse {
        let mask = try fields.map(DriveFieldMask.parse) ?? DriveSchema.defaultFile
        let object = state.withLock { $0.json(item) }
        return .json(200, try mask.apply(to: object, schema: .file))
    }

    private func list(_ query: [String: String], restricted: Bool) throws -> MockResponse {
        let pageSize =
            try query["pageSize"].map { text -> Int in
                guard let size = Int(text), (1...settings.maximumPageSize).contains(size) else {
                    throw MockDriveError.invalidParameter(
                        location: "pageSize",
                        message:
                            "Invalid value '\(text)'. Values must be within the range: [1, \(settings.maximumPageSize)]"
                    )
                }
                return size
            } ?? settings.defaultPageSize
        let mask = try query["fields"].map(DriveFieldMask.parse) ?? DriveSchema.defaultFileList
        let q = query["q"] ?? ""
        let parsed = q.isEmpty ? nil : try DriveQuery.parse(q)
        let order = try query["orderBy"].map(DriveOrder.parse)
        let object: [String: Any] = try state.withLock { state in
            // Like Drive, a listing is a snapshot taken at its first page; later pages continue it.
            let matches: ArraySlice<String>
            if let token = query["pageToken"] {
                guard let saved = state.pageTokens[token], saved.query == q else {
                    throw MockDriveError.invalidParameter(location: "pageToken", message: "Invalid Value")
                }
                matches = saved.ids
            } else {
                let found = try state.search(parsed).filter {
                    (!restricted || $0.createdByThisApp) && state.tree.lagging[$0.id] == nil
                }
                // Counted once served: a lagging file is left out of this listing and the next.
                if let parent = parsed?.requiredParent { state.tree.listingServed(of: state.resolve(parent)) }
                matches = ArraySlice((order.map { $0.sorted(found) } ?? found).map(\.id))
            }
            let page = matches.prefix(pageSize).compactMap { state.items[$0] }
            var object: [String: Any] = [
                "kind": "drive#fileList", "incompleteSearch": false, "files": page.map { state.json($0) },
            ]
            if matches.count > pageSize {
                let token = "~!!~" + MockDriveID.make()
                state.pageTokens[token] = (q, matches.dropFirst(pageSize))
                object["nextPageToken"] = token
            }
            return object
        }
        return .json(200, try mask.apply(to: object, schema: .fileList))
    }

    /// `files.generateIds`: IDs a client may give new files (`count` 1…1000, 10 by default).
    private func generateIDs(_ query: [String: String]) throws -> MockResponse {
        let count =
            try query["count"].map { text -> Int in
                guard let count = Int(text), (1...1000).contains(count) else {
                    throw MockDriveError.invalidParameter(
                        location: "count",
                        message: "Invalid value '\(text)'. Values must be within the range: [1, 1000]")
                }
                return count
            } ?? 10
        return .json(
            200,
            [
                "kind": "drive#generatedIds", "space": query["space"] ?? "drive",
                "ids": (0..<count).map { _ in "1" + MockDriveID.make() },
            ])
    }

    /// `files.copy` of a file (not a folder): same contents under a new ID, in the parent given or the source's.
    private func copy(_ id: String, _ request: IncomingRequest, restricted: Bool) throws -> MockResponse {
        let metadata = try MockDriveMetadata(json: request.bodyData)
        try checkParents(metadata, restricted: restricted)
        let item = try state.withLock { state -> MockDriveItem in
            let source = try state.item(id)
            guard !source.isFolder else {
                throw MockDriveError.forbidden(
                    reason: "fileNotCopyable", message: "The file cannot be copied: folders cannot be copied.")
            }
            var copy = metadata
            copy.name = metadata.name ?? source.name
            copy.mimeType = metadata.mimeType ?? source.mimeType
            copy.parents = metadata.parents ?? source.parents
            let content: MockContent? =
                switch source.content {
                case .data(let data)?: .data(data)
                case .spooled(let url, let size)?:
                    { () -> MockContent? in
                        let kept = url.deletingLastPathComponent().appendingPathComponent(UUID().uuidString)
                        return (try? FileManager.default.copyItem(at: url, to: kept)).map { .spooled(kept, size: size) }
                    }()
                case nil: nil
                }
            return try state.create(copy, content: content, md5: source.md5)
        }
        return try fileAnswer(item, fields: request.query["fields"])
    }

    private func createMetadataOnly(_ request: IncomingRequest, restricted: Bool) throws -> MockResponse {
        let metadata = try MockDriveMetadata(json: request.bodyData)
        try checkParents(metadata, restricted: restricted)
        let item = try state.withLock { try $0.create(metadata, content: nil, md5: nil) }
        return try fileAnswer(item, fields: request.query["fields"])
    }

    private func patch(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        let metadata = try MockDriveMetadata(json: request.bodyData)
        let query = request.query
        let item = try state.withLock { state in
            let adding = query["addParents"].map { $0.split(separator: ",").map(String.init) } ?? []
            let removing = query["removeParents"].map { $0.split(separator: ",").map(String.init) } ?? []
            if !adding.isEmpty || !removing.isEmpty { try state.move(id, adding: adding, removing: removing) }
            return try state.update(id, metadata, content: nil, md5: nil)
        }
        return try fileAnswer(item, fields: query["fields"])
    }

    private func download(_ id: String, _ request: IncomingRequest) throws -> MockResponse {
        let item = try state.withLock { try $0.item(id) }
        guard !item.isFolder, let content = item.content else {
            throw MockDriveError.forbidden(
                reason: "fileNotDownloadable",
                message: "Only files with binary content can be downloaded. Use Export with Docs Editors files.")
        }
        return content.response(range: request.headers["Range"], headers: ["Content-Type": item.mimeType])
    }

    private func changes(_ query: [String: String], restricted: Bool) throws -> MockResponse {
        // Tokens are feed positions + 1, as Drive's start at 1.
        guard let token = query["pageToken"], let position = Int(token), position >= 1 else {
            throw MockDriveError.invalidParameter(location: "pageToken", message: "Invalid Value")
        }
        let pageSize =
            query["pageSize"].flatMap(Int.init).map { min(max($0, 1), settings.maximumPageSize) }
            ?? settings.defaultPageSize
        let mask = try query["fields"].map(DriveFieldMask.parse) ?? DriveSchema.defaultChangeList
        let object: [String: Any] = try state.withLock { state in
            guard let index = state.tree.changeIndex(atFeedPosition: position - 1) else {
                throw MockDriveError.invalidParameter(location: "pageToken", message: "Invalid Value")
            }
            let start = index + 1
            let end = min(state.changes.count, start - 1 + pageSize)
            var list: [[String: Any]] = []
            if start - 1 < end {
                // Drive reports each file once, in its latest state: a change superseded later is left out.
                for (offset, change) in state.changes[(start - 1)..<end].enumerated()
                where state.latestChange[change.id] == start - 1 + offset
                    && (!restricted || state.items[change.id]?.createdByThisApp != false)
                {
                    var entry: [String: Any] = [
                        "kind": "drive#change", "changeType": "file", "fileId": change.id,
                        "time": RFC3339Date.format(change.time), "removed": change.removed,
                    ]
                    if !change.removed, let item = state.items[change.id] { entry["file"] = state.json(item) }
                    list.append(entry)
                }
            }
            var object: [String: Any] = ["kind": "drive#changeList", "changes": list]
            if end < state.changes.count {
                object["nextPageToken"] = String(state.tree.feedPosition(end) + 1)
            } else {
                object["newStartPageToken"] = String(state.tree.feedPosition(state.changes.count) + 1)
            }
            return object
        }
        return .json(200, try mask.apply(to: object, schema: .changeList))
    }

    // MARK: Keeping the drive between runs

    struct Saved: Codable {
        struct Item: Codable {
            var id, name, mimeType: String
            var parents: [String]
            var trashed: Bool
            var createdTime, modifiedTime: Date
            var md5: String?
            var version: Int
            /// The content's name under `files/` and its size (files only).
            var file: String?
            var size: Int64?
            /// Writable metadata (absent in states saved before the mock kept it).
            var description: String?
            var appProperties: [String: String]?
            var properties: [String: String]?
            var createdElsewhere: Bool?

            func item(in directory: MockStateDirectory) -> MockDriveItem {
                var item = MockDriveItem(
                    id: id, name: name, mimeType: mimeType, parents: parents, createdTime: createdTime,
                    modifiedTime: modifiedTime)
                item.trashed = trashed
                item.md5 = md5
                item.version = version
                item.description = description
                item.appProperties = appProperties ?? [:]
                item.properties = properties ?? [:]
                item.createdByThisApp = createdElsewhere != true
                if let file { item.content = .spooled(directory.file(file), size: size ?? 0) }
                return item
            }
        }
        var rootID: String
        var items: [Item]
        var tokens: MockOAuthServer.Tokens
    }

    private func persist() {
        guard let directory = stateDirectory else { return }
        let tokens = oauth.tokens
        state.withLock { state in
            let live = state.items.values.filter { $0.id != rootID }
            let files = directory.keepContents(of: live) { "\($0.id)-\($0.version)" }
            let items = live.map { item in
                Saved.Item(
                    id: item.id, name: item.name, mimeType: item.mimeType, parents: item.parents, trashed: item.trashed,
                    createdTime: item.createdTime, modifiedTime: item.modifiedTime, md5: item.md5,
                    version: item.version,
                    file: files[item.id], size: item.content?.size, description: item.description,
                    appProperties: item.appProperties.isEmpty ? nil : item.appProperties,
                    properties: item.properties.isEmpty ? nil : item.properties,
                    createdElsewhere: item.createdByThisApp ? nil : true)
            }
            try? directory.save(
                Saved(
                    rootID: rootID, items: items.sorted { ($0.createdTime, $0.id) < ($1.createdTime, $1.id) },
                    tokens: tokens))
        }
    }

    // MARK: Errors in Drive's shape

    static func error(
        _ status: Int, _ reason: String, _ message: String, domain: String = "global", location: String? = nil
    ) -> MockResponse {
        var detail: [String: Any] = ["domain": domain, "reason": reason, "message": message]
        if let location {
            detail["locationType"] = "parameter"
            detail["location"] = location
        }
        return .json(status, ["error": ["errors": [detail], "code": status, "message": message]])
    }

    static func answer(_ error: MockDriveError) -> MockResponse {
        switch error {
        case .badRequest(let message): Self.error(400, "badRequest", message)
        case .notFound(let id): Self.error(404, "notFound", "File not found: \(id).", location: "fileId")
        case .forbidden(let reason, let message):
            Self.error(403, reason, message, domain: reason == "storageQuotaExceeded" ? "usageLimits" : "global")
        case .invalidParameter(let location, let message):
            Self.error(400, "invalidParameter", message, location: location)
        }
    }

    /// Injected faults answer as Drive does: 403 and 429 say the rate limit was exceeded, 5xx are backend errors.
    static let faultBody: MockHTTPServer.FaultBody = { status in
        switch status {
        case 403: error(403, "userRateLimitExceeded", "User Rate Limit Exceeded", domain: "usageLimits")
        case 429: error(429, "rateLimitExceeded", "Rate Limit Exceeded", domain: "usageLimits")
        case 401: error(401, "authError", "Invalid Credentials", location: "Authorization")
        case 500...599: error(status, "backendError", "Backend Error")
        default: error(status, "failed", "Injected failure")
        }
    }
}

extension MockOAuthServer.Settings {
    /// Google's endpoints and answer shapes: `Bearer`, 3599-second tokens, no new refresh token on refresh,
    /// `verification_url`, and the 401 body of Google's APIs.
    public static var google: MockOAuthServer.Settings {
        var settings = MockOAuthServer.Settings()
        settings.clientId = "000000000000-llvsmock.apps.googleusercontent.com"
        settings.clientSecret = "GOCSPX-llvs-mock-secret"
        settings.authorizePath = "/o/oauth2/v2/auth"
        settings.tokenPath = "/token"
        settings.devicePath = "/device/code"
        settings.tokenType = "Bearer"
        settings.accessTokenLifetime = 3599
        settings.scope = "https://www.googleapis.com/auth/drive.file"
        settings.deviceScopes = [
            "https://www.googleapis.com/auth/drive.file", "https://www.googleapis.com/auth/drive.appdata",
            "openid", "email", "profile",
        ]
        settings.invalidGrantDescription = "Token has been expired or revoked."
        settings.refreshTokenNeedsOfflineAccess = true
        // PKCE is optional at Google (a confidential client may do without); the redirect URI is always repeated.
        settings.requiresPKCE = false
        settings.exchangeNeedsRedirectURI = true
        settings.deviceVerificationField = "verification_url"
        settings.unauthorizedBody =
            #"{"error":{"errors":[{"domain":"global","reason":"authError","message":"Invalid Credentials","locationType":"header","location":"Authorization"}],"code":401,"message":"Invalid Credentials"}}"#
        return settings
    }
}

/// `orderBy`: comma-separated keys, each optionally followed by ` desc` (`folder,name_natural desc`). The keys this
/// mock can order by are sorted on; the others Drive knows (the ones about viewing and sharing) keep creation order;
/// an unknown key is refused as Drive refuses it.
struct DriveOrder {
    var keys: [(name: String, descending: Bool)]

    static let known: Set<String> = [
        "createdTime", "folder", "modifiedByMeTime", "modifiedTime", "name", "name_natural",
        "quotaBytesUsed", "recency", "sharedWithMeTime", "starred", "viewedByMeTime",
    ]

    static func parse(_ text: String) throws -> DriveOrder {
        var keys: [(String, Bool)] = []
        for part in text.split(separator: ",") {
            let words = part.split(separator: " ").map(String.init)
            guard let name = words.first, known.contains(name),
                words.count == 1 || (words.count == 2 && words[1].lowercased() == "desc")
            else {
                throw MockDriveError.invalidParameter(location: "orderBy", message: "Invalid Value")
            }
            keys.append((name, words.count == 2))
        }
        return DriveOrder(keys: keys)
    }

    func sorted(_ items: [MockDriveItem]) -> [MockDriveItem] {
        items.sorted { a, b in
            for key in keys {
                let order: ComparisonResult =
                    switch key.name {
                    case "name": compare(a.name, b.name)
                    case "name_natural": a.name.localizedStandardCompare(b.name)
                    case "createdTime": compare(a.createdTime, b.createdTime)
                    case "modifiedTime", "modifiedByMeTime", "recency": compare(a.modifiedTime, b.modifiedTime)
                    case "folder": compare(a.isFolder ? 0 : 1, b.isFolder ? 0 : 1)
                    case "quotaBytesUsed": compare(a.content?.size ?? 0, b.content?.size ?? 0)
                    default: .orderedSame
                    }
                if order != .orderedSame { return (order == .orderedAscending) != key.descending }
            }
            return false
        }
    }

    private func compare<T: Comparable>(_ a: T, _ b: T) -> ComparisonResult {
        a < b ? .orderedAscending : a > b ? .orderedDescending : .orderedSame
    }
}
