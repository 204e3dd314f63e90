import Foundation
import LLVS
import LLVSConformance
import LLVSHTTP
import LLVSMocks
@testable import LLVSPCloud
import LLVSTestSupport
import Testing

@Suite struct PCloudConformanceTests {
    @Test(arguments: [MockPCloudServer.Settings.Region.us, .eu])
    func theConnectorConformsAgainstTheMock(region: MockPCloudServer.Settings.Region) async throws {
        var settings = MockPCloudServer.Settings()
        settings.region = region
        let fixture = try PCloudFixture(settings: settings) {
            $0.simpleUploadLimit = 2 * 1024 * 1024
            $0.chunkSize = 1024 * 1024
        }
        var options = ConformanceOptions()
        options.faults = PCloudFaultControl(mock: fixture.mock, client: fixture.http)
        options.largeFileSize = 5 * 1024 * 1024 + 12_345
        options.listingCount = 250
        await expectConformance(fixture.fileSystem, options: options, skippable: ["expired-token"])
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
        #expect(!fixture.calls("upload_write").isEmpty, "the large file should go up in an upload session")
        #expect(fixture.mock.contentHost.requestsWithCredentials.isEmpty, "the token reached a download host")
        #expect(
            !fixture.mock.contentHost.server.log.contains { $0.target.contains("access_token") },
            "the token reached a download host")
    }

    /// The whole suite, failure checks included, through the encryption layer (what an `--encrypt` remote does).
    @Test func theConnectorConformsThroughEncryption() async throws {
        let fixture = try PCloudFixture {
            $0.simpleUploadLimit = 2 * 1024 * 1024
            $0.chunkSize = 1024 * 1024
        }
        var options = ConformanceOptions()
        options.faults = PCloudFaultControl(mock: fixture.mock, client: fixture.http)
        options.largeFileSize = 3 * 1024 * 1024 + 12_345
        options.listingCount = 250
        try await expectConformanceThroughEncryption(fixture.fileSystem, options: options, skippable: ["expired-token"])
    }

    /// Faults as pCloud gives them: result 5000 in an HTTP 200, and HTTP-level outages and dropped answers.
    @Test func theConnectorConformsWhenOneCallInTenFails() async throws {
        let fixture = try PCloudFixture {
            $0.simpleUploadLimit = 2 * 1024 * 1024
            $0.chunkSize = 1024 * 1024
        }
        fixture.mock.failCallsRandomly(rate: 0.07, result: 5000, seed: 5)
        fixture.mock.faults.injectRandomly(
            rate: 0.03, faults: [.status(503, retryAfter: 0), .dropBeforeAnswer], seed: 3)
        var options = ConformanceOptions()
        options.largeFileSize = 5 * 1024 * 1024
        options.listingCount = 250
        await expectConformance(fixture.fileSystem, options: options, skippable: checksNeedingFaults)
        #expect(fixture.mock.log.contains { $0.status == 200 && $0.faults.isEmpty }, "the run reached the mock")
        #expect(fixture.mock.log.filter { !$0.faults.isEmpty }.count > 5, "faults were injected")
    }
}

@Suite struct PCloudBehaviourTests {
    /// An EU account: the token names eapi's host, and not one request with the token reaches the US host, from
    /// sign-in to download.
    @Test func anEUAccountsTokenNeverReachesTheUSHost() async throws {
        var settings = MockPCloudServer.Settings()
        settings.region = .eu
        let fixture = try PCloudFixture(settings: settings)
        #expect(fixture.fileSystem.configuration.apiURL.port == Int(fixture.mock.euServer.port))
        try await fixture.fileSystem.upload(Data("eu".utf8), to: "eu/file.txt")
        #expect(try await fixture.fileSystem.download("eu/file.txt") == Data("eu".utf8))
        #expect(try await fixture.fileSystem.list("eu").map(\.name) == ["file.txt"])
        #expect(fixture.mock.server.log.isEmpty, "the US host saw \(fixture.mock.server.log.map(\.target))")
        #expect(!fixture.mock.euServer.log.isEmpty)
    }

    /// The sign-in learns the region: the redirect names the EU host, the code is exchanged there, and the token
    /// keeps `hostname` and `locationid`, from which the connector picks the API host.
    @Test func signInExchangesTheCodeAtTheRegionTheRedirectNames() async throws {
        var settings = MockPCloudServer.Settings()
        settings.region = .eu
        let mock = try MockPCloudServer(settings: settings)
        defer { mock.stop() }
        let authorization = OAuthAuthorization(
            configuration: PCloudConfiguration.oauth(
                clientId: mock.settings.clientId,
                clientSecret: mock.settings.clientSecret, endpoint: mock.endpoint),
            http: quickClient())
        let attempt = authorization.makeAttempt(redirectURI: "http://127.0.0.1:53682/")
        var visit = HTTPRequest(url: attempt.url)
        visit.followsRedirects = false
        let answer = try await quickClient().send(visit)
        let redirect = try #require(answer.headers["Location"])
        #expect(redirect.contains("locationid=2"))
        let token = try await authorization.finish(attempt, answer: redirect)
        #expect(token.extras["locationid"] == "2")
        #expect(token.extras["hostname"] == "127.0.0.1:\(mock.euServer.port)")
        #expect(token.refreshToken == nil && token.expiresAt == nil, "pCloud's tokens have no refresh and no expiry")
        #expect(mock.euServer.log.contains { $0.target.hasPrefix("/oauth2_token") })
        #expect(!mock.server.log.contains { $0.target.hasPrefix("/oauth2_token") })
        #expect(try PCloudConfiguration(token: token, endpoint: mock.endpoint).apiURL.port == Int(mock.euServer.port))
    }

    /// A redirect naming a host pCloud does not have never receives the code or the client secret.
    @Test func aRedirectNamingAnotherHostIsRefused() async throws {
        let configuration = PCloudConfiguration.oauth(clientId: "id", clientSecret: "secret")
        #expect(throws: OAuthError.self) { _ = try configuration.regionalTokenURL?(["hostname": "evil.example.com"]) }
        #expect(
            try configuration.regionalTokenURL?(["hostname": "eapi.pcloud.com"])
                == URL(string: "https://eapi.pcloud.com/oauth2_token"))
        #expect(throws: OAuthError.self) {
            _ = try PCloudConfiguration(
                token: OAuthToken(accessToken: "a", extras: ["hostname": "api.pcloud.com.evil.net"]))
        }
    }

    /// An upload session whose answer to a write is lost carries on from what `upload_info` says it holds: the
    /// upload never goes back. (libcurl itself sends a request again, once, when a reused connection dies before any
    /// answer; the mock keeps the bytes at their offset, so that repeat changes nothing.)
    @Test func anInterruptedUploadSessionResumesFromUploadInfo() async throws {
        let fixture = try PCloudFixture {
            $0.simpleUploadLimit = 1024 * 1024
            $0.chunkSize = 512 * 1024
        }
        let data = bytes(5 * 512 * 1024 + 321, seed: 11)
        fixture.mock.faults.inject(.dropBeforeAnswer, times: 1) {
            $0.path == "/upload_write" && ($0.headers["Content-Length"] ?? "") == "524288"
        }
        fixture.mock.faults.inject(.dropBeforeAnswer, times: 1) { $0.path == "/upload_write" }
        try await fixture.fileSystem.upload(data, to: "big/file.bin")
        #expect(try await fixture.fileSystem.download("big/file.bin") == data)
        let offsets = fixture.calls("upload_write").compactMap { entry in
            entry.target.split(separator: "&").first { $0.hasPrefix("uploadoffset=") }.flatMap {
                Int($0.dropFirst("uploadoffset=".count))
            }
        }
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 }, "the upload went back: \(offsets)")
        #expect(Set(offsets).count == 6, "six pieces: \(offsets)")
        #expect(fixture.calls("upload_info").count >= 1, "a lost answer is settled by asking the session")
        #expect(fixture.calls("upload_create").count == 1)
    }

    @Test func anExpiredUploadSessionStartsOver() async throws {
        let fixture = try PCloudFixture {
            $0.simpleUploadLimit = 1024 * 1024
            $0.chunkSize = 512 * 1024
        }
        let data = bytes(4 * 512 * 1024, seed: 12)
        fixture.mock.expireUploadSessions(afterWrites: 2)
        try await fixture.fileSystem.upload(data, to: "again.bin")
        #expect(try await fixture.fileSystem.download("again.bin") == data)
        #expect(fixture.calls("upload_create").count == 2)
    }

    /// The link expires while its first transfer is under way (the transfer is cut off): the stale link is refused,
    /// a new one is asked for, and the download completes.
    @Test func aDownloadLinkThatExpiredMidTransferIsFetchedAgain() async throws {
        let fixture = try PCloudFixture()
        let data = bytes(300_000, seed: 13)
        try await fixture.fileSystem.upload(data, to: "d/file.bin")
        let mock = fixture.mock
        mock.contentHost.server.faults.inject(.dropMidBody, times: 1) { _ in
            mock.expireDownloadLinks()
            return true
        }
        let local = fixture.directory.appendingPathComponent("down.bin")
        try await fixture.fileSystem.download("d/file.bin", toFileAt: local)
        #expect(try Data(contentsOf: local) == data)
        #expect(fixture.calls("getfilelink").count == 2)
        #expect(mock.contentHost.server.log.contains { $0.status == 410 }, "the stale link should have been refused")
    }

    /// A download host that keeps failing is left for the next one pCloud named.
    @Test func theNextDownloadHostIsTriedWhenOneFails() async throws {
        let fixture = try PCloudFixture()
        try await fixture.fileSystem.upload(Data("hosts".utf8), to: "h.txt")
        fixture.mock.contentHost.server.faults.inject(.status(500), intoRequest: 1)
        fixture.mock.contentHost.server.faults.inject(.status(500), intoRequest: 2)
        #expect(try await fixture.fileSystem.read("h.txt", range: .bytes(1, 3)) == Data("ost".utf8))
        let hosts = fixture.mock.contentHost.server.log.compactMap { $0.headers["Host"] }
        #expect(hosts.count == 3 && hosts[2].hasPrefix("localhost:"), "hosts asked: \(hosts)")
        #expect(fixture.calls("getfilelink").count == 1)
    }

    /// pCloud answers an outage with HTTP 200 and result 5000: the call is retried until it succeeds.
    @Test func result5000InAnHTTP200IsRetried() async throws {
        let fixture = try PCloudFixture()
        try await fixture.fileSystem.makeFolder("r")
        let before = fixture.calls("listfolder").count
        fixture.mock.failNextCalls(3, result: 5000)
        #expect(try await fixture.fileSystem.list("r").isEmpty)
        #expect(fixture.calls("listfolder").count - before == 4)
    }

    /// A revoked token is 2094 in an HTTP 200: unauthorized, saying to authorize again, and never retried.
    @Test func aRevokedTokenSaysToAuthorizeAgain() async throws {
        let fixture = try PCloudFixture()
        fixture.mock.revokeTokens()
        let before = fixture.mock.log.count
        await #expect {
            try await fixture.fileSystem.upload(Data("x".utf8), to: "x.txt")
        } throws: { error in
            guard case CloudFileSystemError.unauthorized(let message) = error else { return false }
            return message.contains("run `llvs auth pcloud` to authorize the remote again")
        }
        #expect(fixture.mock.log.count - before == 1)
    }

    /// Overwriting a file keeps its ID and the old contents as a revision; names are case-sensitive.
    @Test func anOverwriteKeepsARevisionAndNamesAreCaseSensitive() async throws {
        let fixture = try PCloudFixture()
        try await fixture.fileSystem.upload(Data("one".utf8), to: "c/Name.txt")
        try await fixture.fileSystem.upload(Data("two".utf8), to: "c/Name.txt")
        try await fixture.fileSystem.upload(Data("lower".utf8), to: "c/name.txt")
        #expect(try await fixture.fileSystem.download("c/Name.txt") == Data("two".utf8))
        #expect(try await fixture.fileSystem.download("c/name.txt") == Data("lower".utf8))
        #expect(fixture.mock.revisions(of: "c/Name.txt") == 1)
        #expect(Set(try await fixture.fileSystem.listNames("c")) == ["Name.txt", "name.txt"])
    }

    /// `hash` is a 64-bit unsigned number (often above Int64.max), never a checksum.
    @Test func aHashAboveInt64MaxIsRead() throws {
        let json =
            #"{"name":"a","isfolder":false,"fileid":7,"size":3,"hash":18446744073709551615,"modified":1700000000}"#
        let item = try JSONDecoder().decode(PCloudItem.self, from: Data(json.utf8))
        #expect(item.hash == UInt64.max)
        #expect(item.item().checksums.isEmpty)
    }
}
