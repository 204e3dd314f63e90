import Foundation
import LLVS
import LLVSGoogleDrive
import LLVSHTTP
import LLVSMocks
import LLVSWebDAV

/// `llvs-bench listing`: where the time of listing a large remote folder goes. Apache mod_dav serves a folder of N
/// files; the PROPFIND is timed with curl (the server's share) and through the connector (server, transfer and
/// parsing), so the difference is the client's.
func listingBenchmark(_ arguments: [String]) async throws {
    let count = Int(option("entries", in: arguments) ?? "") ?? 10_000
    let runs = Int(option("runs", in: arguments) ?? "") ?? 5
    if let reason = RealWebDAVServer.unavailable(RealWebDAVServer.apacheBinary) { throw BenchmarkError(reason) }
    let apache = try await RealWebDAVServer.apache()
    let folder = apache.dataFolder.appendingPathComponent("listing")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    for i in 0..<count { try Data("v".utf8).write(to: folder.appendingPathComponent(UUID().uuidString + "-\(i)")) }
    let fileSystem = WebDAVFileSystem(
        configuration: WebDAVConfiguration(
            url: apache.url, authentication: .basic(user: apache.user, password: apache.password)))
    _ = try await fileSystem.list("listing")  // warm the server's caches

    let body = Data(
        #"<?xml version="1.0" encoding="utf-8"?><d:propfind xmlns:d="DAV:"><d:prop><d:resourcetype/><d:getcontentlength/><d:getlastmodified/><d:getetag/></d:prop></d:propfind>"#
            .utf8)
    let target = apache.url.appendingPathComponent("listing/").absoluteString
    let answer = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-propfind-\(UUID().uuidString).xml")
    defer { try? FileManager.default.removeItem(at: answer) }
    let curl = try await measure(runs) { _ in
        try timeProcess([
            "/usr/bin/curl", "-sS", "-f", "-X", "PROPFIND", "-H", "Depth: 1", "-H", "Content-Type: application/xml",
            "--data-binary", String(decoding: body, as: UTF8.self), "-u", "\(apache.user):\(apache.password)", "-o",
            answer.path, target,
        ])
    }
    let connector = try await measure(runs) { _ in
        try await elapsed {
            let items = try await fileSystem.list("listing")
            guard items.count == count else { throw BenchmarkError("listed \(items.count) of \(count)") }
        }
    }
    let names = try await measure(runs) { _ in
        try await elapsed {
            guard try await fileSystem.listNames("listing").count == count else {
                throw BenchmarkError("listNames missed entries")
            }
        }
    }
    let xml = try Data(contentsOf: answer)
    print(
        "Listing a folder of \(count) files on Apache mod_dav (\(xml.count) bytes of PROPFIND answer), median of \(runs) [min–max]"
    )
    print("  curl PROPFIND (the server):   \(formatSeconds(curl))")
    print("  connector list (everything):  \(formatSeconds(connector))")
    print("  connector listNames:          \(formatSeconds(names)) (asks for the resource type only)")
}

/// `llvs-bench listing --remote gdrive`: the same for the Google Drive mock: the raw pages (the mock's time and the
/// transfer) against the connector's listing (plus decoding).
func driveListingBenchmark(_ arguments: [String]) async throws {
    let count = Int(option("entries", in: arguments) ?? "") ?? 10_000
    let runs = Int(option("runs", in: arguments) ?? "") ?? 5
    let mock = try MockGoogleDriveServer()
    let folder = try mock.addFolder(named: "listing")
    for i in 0..<count { try mock.addFile(named: UUID().uuidString + "-\(i)", in: folder, data: Data("v".utf8)) }
    let work = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-bench-listing-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: work, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: work) }
    let tokenFile = TokenFile(path: work.appendingPathComponent("token.json").path)
    let token = mock.issueToken()
    try tokenFile.write(token)
    let http = HTTPClient()
    let oauth = GoogleDriveConfiguration.oauth(
        clientId: mock.oauth.settings.clientId, clientSecret: mock.oauth.settings.clientSecret, endpoint: mock.endpoint)
    let fileSystem = GoogleDriveFileSystem(
        configuration: GoogleDriveConfiguration(endpoint: mock.endpoint), http: http,
        authorizer: OAuthTokenSource(file: tokenFile, configuration: oauth, http: http, reauthorizeCommand: "x"))
    _ = try await fileSystem.list("listing")
    let raw = try await measure(runs) { _ in
        try await elapsed {
            var pageToken: String?
            repeat {
                var query =
                    "q=" + FormEncoding.escape("'\(folder)' in parents and trashed = false") + "&pageSize=1000&fields="
                    + FormEncoding.escape(
                        "nextPageToken,files(id,name,mimeType,size,md5Checksum,modifiedTime,createdTime,trashed)")
                if let pageToken { query += "&pageToken=" + FormEncoding.escape(pageToken) }
                let response = try await http.send(
                    HTTPRequest(
                        url: URL(string: mock.endpoint.absoluteString + "/drive/v3/files?" + query)!,
                        headers: ["Authorization": "Bearer \(token.accessToken)"]))
                pageToken =
                    (try JSONSerialization.jsonObject(with: response.body) as? [String: Any])?["nextPageToken"]
                    as? String
            } while pageToken != nil
        }
    }
    let connector = try await measure(runs) { _ in
        try await elapsed {
            let items = try await fileSystem.list("listing")
            guard items.count == count else { throw BenchmarkError("listed \(items.count) of \(count)") }
        }
    }
    let names = try await measure(runs) { _ in
        try await elapsed {
            guard try await fileSystem.listNames("listing").count == count else {
                throw BenchmarkError("listNames missed entries")
            }
        }
    }
    print("Listing a folder of \(count) files on the Google Drive mock (pages of 1000), median of \(runs) [min–max]")
    print("  raw pages (the mock and the transfer): \(formatSeconds(raw))")
    print("  connector list (everything):           \(formatSeconds(connector))")
    print("  connector listNames:                   \(formatSeconds(names)) (id, name, mimeType, createdTime only)")
}
