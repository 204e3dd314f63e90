import Foundation
import LLVS
import LLVSSupport
import LLVSTestSupport
import LLVSGoogleDrive
import LLVSHTTP
import Testing
@testable import LLVSMocks

/// The mock answers as Drive does, checked over HTTP with raw requests (no connector in between).
@Suite struct MockGoogleDriveTests {
    let mock: MockGoogleDriveServer
    let token: String
    let http = quickClient()

    init() throws {
        mock = try MockGoogleDriveServer()
        token = mock.issueToken().accessToken
    }

    func get(_ target: String, authorized: Bool = true) async throws -> (status: Int, json: [String: Any]) {
        var request = HTTPRequest(url: URL(string: mock.endpoint.absoluteString + target)!)
        if authorized { request.headers["Authorization"] = "Bearer \(token)" }
        let response = try await http.send(request)
        return (response.status, (try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]) ?? [:])
    }

    func reason(_ json: [String: Any]) -> String? {
        ((json["error"] as? [String: Any])?["errors"] as? [[String: Any]])?.first?["reason"] as? String
    }

    func q(_ text: String) -> String { FormEncoding.escape(text) }

    @Test func theQueryLanguageReadsWhatDriveClientsSend() throws {
        let query = try DriveQuery.parse(
            #"'root' in parents and (name contains 'rep' or mimeType = 'application/vnd.google-apps.folder') and not trashed = true"#
        )
        #expect(query.requiredParent == "root")
        func subject(_ name: String, _ type: String = "text/plain", trashed: Bool = false) -> DriveQuery.Subject {
            DriveQuery.Subject(
                name: name, mimeType: type, parents: ["root"], trashed: trashed, createdTime: Date(),
                modifiedTime: Date())
        }
        #expect(try query.matches(subject("report.txt")))
        #expect(try query.matches(subject("Old Reports")))
        #expect(try !query.matches(subject("prepare.txt")), "contains matches the start of a word, as Drive does")
        #expect(try query.matches(subject("x", "application/vnd.google-apps.folder")))
        #expect(try !query.matches(subject("report.txt", trashed: true)))
        #expect(
            try DriveQuery.parse(#"name = 'it\'s \\ here'"#)
                == .compare(field: "name", op: "=", value: .string(#"it's \ here"#)))
        #expect(try DriveQuery.parse("name = 'A.TXT'").matches(subject("a.txt")), "name = ignores case")
        for bad in ["name = ", "'x' in", "name ~ 'x'", "(name = 'x'", "name = 'open"] {
            #expect(throws: DriveQuery.Invalid.self, "\(bad)") { try DriveQuery.parse(bad) }
        }
    }

    @Test func listingsAnswerWithTheFieldsAskedForAndPageTokensOnlyWhenAsked() async throws {
        for i in 0..<5 { try mock.addFile(named: "f\(i)", data: Data(repeating: 7, count: 1234)) }
        let all = try await get(
            "/drive/v3/files?q=\(q("'root' in parents and trashed = false"))&pageSize=2&fields=\(q("nextPageToken,files(id,name,size,modifiedTime)"))"
        )
        #expect(all.status == 200)
        let files = all.json["files"] as? [[String: Any]] ?? []
        #expect(files.count == 2)
        #expect(files.first?["size"] as? String == "1234", "size is a string")
        #expect((files.first?["modifiedTime"] as? String)?.contains(".") == true, "times carry milliseconds")
        #expect(files.first?["mimeType"] == nil, "only the fields asked for")
        #expect(all.json["nextPageToken"] is String)
        let withoutToken = try await get("/drive/v3/files?pageSize=2&fields=\(q("files(id)"))")
        #expect(withoutToken.json["nextPageToken"] == nil, "a listing whose fields leave out nextPageToken has none")
        let unknown = try await get("/drive/v3/files?fields=\(q("files(id,colour)"))")
        #expect(unknown.status == 400)
        #expect(reason(unknown.json) == "invalidParameter")
        let tooBig = try await get("/drive/v3/files?pageSize=1001")
        #expect(tooBig.status == 400)
        let badQuery = try await get("/drive/v3/files?q=\(q("name = "))")
        #expect(badQuery.status == 400)
        #expect(reason(badQuery.json) == "invalid")
    }

    @Test func errorsCarryDrivesReasons() async throws {
        let missing = try await get("/drive/v3/files/nope?fields=id")
        #expect(missing.status == 404)
        #expect(reason(missing.json) == "notFound")
        let anonymous = try await get("/drive/v3/files", authorized: false)
        #expect(anonymous.status == 401)
        #expect(reason(anonymous.json) == "authError")
        mock.faults.injectNext(.status(403))
        var request = HTTPRequest(url: mock.endpoint.appendingPathComponent("drive/v3/files"))
        request.headers["Authorization"] = "Bearer \(token)"
        var once = HTTPClientConfiguration()
        once.retryPolicy = RetryPolicy(maximumAttempts: 1)
        let limited = try await HTTPClient(configuration: once).send(request)
        #expect(limited.status == 403)
        #expect(limited.text.contains("userRateLimitExceeded") && limited.text.contains("usageLimits"))
        let root = try await get("/drive/v3/files/root?fields=id,mimeType")
        #expect(root.json["id"] as? String == mock.rootID)
    }

    @Test func uploadsFollowDrivesRules() async throws {
        let big = Data(repeating: 1, count: mock.settings.multipartLimit + 1)
        let multipart = MultipartRelated(parts: [
            .init(contentType: "application/json", data: Data(#"{"name":"big"}"#.utf8)),
            .init(contentType: "application/octet-stream", data: big),
        ])
        var request = HTTPRequest(
            method: "POST",
            url: URL(string: mock.endpoint.absoluteString + "/upload/drive/v3/files?uploadType=multipart")!,
            headers: ["Content-Type": multipart.contentType, "Authorization": "Bearer \(token)"],
            body: .data(multipart.body))
        #expect(try await http.send(request).status == 400, "multipart is for files up to 5 MB")

        request = HTTPRequest(
            method: "POST",
            url: URL(string: mock.endpoint.absoluteString + "/upload/drive/v3/files?uploadType=resumable")!,
            headers: [
                "Content-Type": "application/json", "Authorization": "Bearer \(token)",
                "X-Upload-Content-Length": "600000",
            ],
            body: .data(Data(#"{"name":"r.bin"}"#.utf8)))
        let opened = try await http.send(request)
        let session = try #require(opened.headers["Location"].flatMap(URL.init(string:)))
        func put(_ range: String, _ body: Data) async throws -> HTTPResponse {
            try await http.send(
                HTTPRequest(
                    method: "PUT", url: session, headers: ["Content-Range": range, "Authorization": "Bearer \(token)"],
                    body: .data(body)))
        }
        let odd = try await put("bytes 0-99999/600000", Data(count: 100_000))
        #expect(odd.status == 400, "an intermediate chunk must be a multiple of 256 KiB")
        let first = try await put("bytes 0-262143/600000", Data(count: 262_144))
        #expect(first.status == 308)
        #expect(first.headers["Range"] == "bytes=0-262143")
        let status = try await put("bytes */600000", Data())
        #expect(status.status == 308)
        #expect(status.headers["Range"] == "bytes=0-262143")
        let last = try await put("bytes 262144-599999/600000", Data(count: 600_000 - 262_144))
        #expect(last.status == 200)
        #expect(last.text.contains("r.bin"))
    }
}

@Suite struct MockStateTests {
    @Test func aDriveMockRestartedWithItsStateKeepsTheDriveAndTheTokens() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-mock-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = bytes(7 * 1024 * 1024 + 3, seed: 9)
        let tokenFile = TokenFile(path: folder.appendingPathExtension("token").path)
        defer { try? FileManager.default.removeItem(atPath: tokenFile.path) }
        func connect(_ mock: MockGoogleDriveServer) -> GoogleDriveFileSystem {
            let oauth = GoogleDriveConfiguration.oauth(
                clientId: mock.oauth.settings.clientId, clientSecret: mock.oauth.settings.clientSecret,
                endpoint: mock.endpoint)
            var configuration = GoogleDriveConfiguration(endpoint: mock.endpoint)
            configuration.chunkSize = 1 << 20
            return GoogleDriveFileSystem(
                configuration: configuration, http: quickClient(),
                authorizer: OAuthTokenSource(
                    file: tokenFile, configuration: oauth, http: quickClient(), reauthorizeCommand: "llvs auth x"))
        }
        do {
            let mock = try MockGoogleDriveServer(state: try MockStateDirectory(folder))
            defer { mock.stop() }
            try tokenFile.write(mock.issueToken())
            let drive = connect(mock)
            try await drive.upload(Data("small".utf8), to: "a/small.txt")
            try await drive.upload(big, to: "a/big.bin")
            try await drive.upload(Data("gone".utf8), to: "a/gone.txt")
            try await drive.removeFile("a/gone.txt")
        }
        let again = try MockGoogleDriveServer(state: try MockStateDirectory(folder))
        defer { again.stop() }
        let drive = connect(again)
        #expect(try await drive.download("a/small.txt") == Data("small".utf8))
        #expect(try await drive.download("a/big.bin") == big)
        #expect(try await !drive.exists("a/gone.txt"))
        #expect(again.oauth.refreshCount == 0, "the saved access token is still accepted")
    }
}

/// Google's OAuth endpoints as the mock answers them, by raw requests: loopback redirects on 127.0.0.1, [::1] or
/// localhost only (redirect_uri_mismatch otherwise), PKCE optional, a refresh token only with access_type=offline,
/// and token answers never cached.
@Suite struct MockGoogleOAuthTests {
    let mock: MockGoogleDriveServer
    let http = quickClient()

    init() throws { mock = try MockGoogleDriveServer() }

    /// The code from the authorize redirect, or the error answer.
    func authorize(
        redirect: String, scope: String = "https://www.googleapis.com/auth/drive.file", extra: [(String, String)] = []
    ) async throws -> (code: String?, response: HTTPResponse) {
        let url = try URLEscaping.url(
            mock.endpoint, mock.oauth.authorizePath,
            [
                ("client_id", mock.oauth.settings.clientId), ("response_type", "code"),
                ("redirect_uri", redirect), ("scope", scope),
            ] + extra)
        var request = HTTPRequest(url: url)
        request.followsRedirects = false
        let response = try await http.send(request)
        let location = response.headers["Location"].flatMap(URLComponents.init(string:))
        return (location?.queryItems?.first { $0.name == "code" }?.value, response)
    }

    func exchange(_ code: String, redirect: String) async throws -> HTTPResponse {
        let body = FormEncoding.encode([
            ("grant_type", "authorization_code"), ("code", code), ("redirect_uri", redirect),
            ("client_id", mock.oauth.settings.clientId), ("client_secret", mock.oauth.settings.clientSecret ?? ""),
        ])
        return try await http.send(
            HTTPRequest(
                method: "POST", url: mock.endpoint.appendingPathComponent(mock.oauth.tokenPath),
                headers: ["Content-Type": "application/x-www-form-urlencoded"], body: .data(body)))
    }

    @Test func loopbackRedirectsWithoutPKCEAndOfflineAccessDecidesTheRefreshToken() async throws {
        let wrong = try await authorize(redirect: "https://example.com/callback")
        #expect(
            wrong.code == nil && wrong.response.status == 400 && wrong.response.text.contains("redirect_uri_mismatch"),
            "\(wrong.response.text)")

        let online = try await authorize(redirect: "http://[::1]:53682/")
        let onlineCode = try #require(online.code, "an IPv6 loopback redirect without PKCE is accepted")
        let first = try await exchange(onlineCode, redirect: "http://[::1]:53682/")
        #expect(first.status == 200 && first.headers["Cache-Control"] == "no-store")
        #expect(!first.text.contains("refresh_token"), "no refresh token without access_type=offline: \(first.text)")

        let offline = try await authorize(redirect: "http://127.0.0.1:53682/", extra: [("access_type", "offline")])
        let answer = try await exchange(try #require(offline.code), redirect: "http://127.0.0.1:53682/")
        #expect(answer.text.contains("refresh_token"), "\(answer.text)")
        let reused = try await exchange(try #require(offline.code), redirect: "http://127.0.0.1:53682/")
        #expect(
            reused.status == 400 && reused.headers["Cache-Control"] == "no-store",
            "an error answer is not cached either")
    }

    /// A token granted `drive.file` sees what this app made and nothing else; the full `drive` scope sees all.
    @Test func aDriveFileTokenSeesOnlyWhatThisAppMade() async throws {
        let mine = try mock.addFile(named: "mine.txt", data: Data("m".utf8))
        let theirs = try mock.addFile(named: "theirs.txt", data: Data("t".utf8), byThisApp: false)
        func token(_ scope: String) async throws -> String {
            let granted = try await authorize(redirect: "http://127.0.0.1:53682/", scope: scope)
            let answer = try await exchange(try #require(granted.code), redirect: "http://127.0.0.1:53682/")
            return try #require(
                (try JSONSerialization.jsonObject(with: answer.body) as? [String: Any])?["access_token"] as? String)
        }
        func get(_ target: String, _ token: String) async throws -> HTTPResponse {
            try await http.send(
                HTTPRequest(
                    url: try #require(URL(string: mock.endpoint.absoluteString + target)),
                    headers: ["Authorization": "Bearer \(token)"]))
        }
        let limited = try await token("https://www.googleapis.com/auth/drive.file")
        let listing = try await get("/drive/v3/files?fields=files(id)", limited)
        #expect(listing.text.contains(mine) && !listing.text.contains(theirs), "\(listing.text)")
        #expect(try await get("/drive/v3/files/\(theirs)", limited).status == 404)
        let full = try await token("https://www.googleapis.com/auth/drive")
        #expect(try await get("/drive/v3/files/\(theirs)", full).status == 200)
        #expect(try await get("/drive/v3/files?fields=files(id)", full).text.contains(theirs))
    }
}
