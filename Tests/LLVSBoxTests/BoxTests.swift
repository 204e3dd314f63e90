import Foundation
import LLVS
import LLVSBox
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSSupport
import LLVSTestSupport
import Synchronization
import Testing

@Suite struct BoxConformanceTests {
    @Test func theConnectorConformsAgainstTheMock() async throws {
        let fixture = try BoxFixture { $0.pageSize = 100 }
        var options = ConformanceOptions()
        options.faults = boxFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 3 * 1024 * 1024 + 12_345
        options.listingCount = 250
        await expectConformance(fixture.fileSystem, options: options)
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
        #expect(
            !fixture.requests("PUT", containing: "/upload_sessions/").isEmpty,
            "the large file should go up in an upload session")
        #expect(
            fixture.mock.log.contains { $0.target.contains("marker=") }, "the listing should have needed a second page")
        #expect(fixture.mock.contentHost.requestsWithCredentials.isEmpty, "the token reached the download host")
    }

    /// The whole suite, failure checks included, through the encryption layer (what an `--encrypt` remote does).
    @Test func theConnectorConformsThroughEncryption() async throws {
        let fixture = try BoxFixture { $0.pageSize = 100 }
        var options = ConformanceOptions()
        options.faults = boxFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 3 * 1024 * 1024 + 12_345
        options.listingCount = 250
        try await expectConformanceThroughEncryption(fixture.fileSystem, options: options)
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
    }

    @Test func theConnectorConformsWhenOneRequestInTenFails() async throws {
        let fixture = try BoxFixture { $0.pageSize = 100 }
        fixture.mock.faults.injectRandomly(
            rate: 0.1,
            faults: [.status(429, retryAfter: 0), .status(503, retryAfter: 0), .status(500), .dropBeforeAnswer], seed: 7
        )
        var options = ConformanceOptions()
        options.largeFileSize = 3 * 1024 * 1024
        options.listingCount = 250
        await expectConformance(fixture.fileSystem, options: options, skippable: checksNeedingFaults)
        #expect(fixture.mock.log.filter { !$0.faults.isEmpty }.count > 20, "faults were injected")
    }
}

@Suite struct BoxBehaviourTests {
    /// Box's refresh tokens work once: two token sources on one file (two processes) meeting an expired token
    /// cause exactly one refresh; the second reads what the first wrote; the file holds the live refresh token.
    @Test func twoProcessesShareOneRefreshOfASingleUseToken() async throws {
        let fixture = try BoxFixture()
        let other = OAuthTokenSource(
            file: fixture.tokenFile, configuration: BoxFixture.oauth(fixture.mock), http: fixture.http,
            reauthorizeCommand: "llvs auth box")
        let second = BoxFixture.connector(fixture.mock, http: fixture.http, tokens: other)
        try await fixture.fileSystem.upload(Data("1".utf8), to: "t/one")
        fixture.mock.expireAccessTokens()
        async let a: Void = fixture.fileSystem.upload(Data("a".utf8), to: "t/a")
        async let b: Void = second.upload(Data("b".utf8), to: "t/b")
        _ = try await (a, b)
        #expect(fixture.mock.oauth.refreshCount == 1, "one refresh for both")
        #expect(fixture.mock.oauth.invalidGrantCount == 0, "no one used a spent refresh token")
        let onDisk = try #require(try fixture.tokenFile.read())
        #expect(fixture.mock.oauth.isLiveRefreshToken(onDisk.refreshToken ?? ""))
        fixture.mock.expireAccessTokens()
        try await second.upload(Data("c".utf8), to: "t/c")
        #expect(Set(try await fixture.fileSystem.listNames("t")) == ["one", "a", "b", "c"])
    }

    /// A chunked upload whose third part's answer is lost asks the session for its parts and goes on after them;
    /// the commit lists every part once and carries the whole file's SHA-1.
    @Test func aChunkedUploadInterruptedAfterTwoPartsResumesFromThePartsList() async throws {
        let fixture = try BoxFixture()
        let data = bytes(6 * 256 * 1024 + 999, seed: 21)
        // Once: a part is not repeatable, so libcurl may not send it again by itself (`CurlTransfer.mayRewind`).
        fixture.mock.faults.inject(.dropBeforeAnswer, times: 1) {
            $0.method == "PUT" && ($0.headers["Content-Range"] ?? "").hasPrefix("bytes \(2 * 256 * 1024)-")
        }
        try await fixture.fileSystem.upload(data, to: "big/file.bin")
        #expect(try await fixture.fileSystem.download("big/file.bin") == data)
        #expect(!fixture.requests("GET", containing: "/parts").isEmpty, "the session's parts should have been listed")
        let starts = fixture.requests("PUT", containing: "/upload_sessions/").compactMap { $0.headers["Content-Range"] }
            .compactMap { Int64($0.dropFirst(6).prefix { $0 != "-" }) }
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $0 <= $1 }, "the upload went back: \(starts)")
        #expect(Set(starts).count == 7)
        #expect(fixture.requests("POST", containing: "/commit").count == 1)
        #expect(fixture.mock.log.filter { $0.faults.contains(.dropBeforeAnswer) }.count == 1)
    }

    @Test func aCommitAnswered202IsWaitedOut() async throws {
        let fixture = try BoxFixture()
        fixture.mock.keepProcessingCommits(2)
        let data = bytes(5 * 256 * 1024, seed: 22)
        try await fixture.fileSystem.upload(data, to: "wait.bin")
        #expect(try await fixture.fileSystem.download("wait.bin") == data)
        #expect(fixture.requests("POST", containing: "/commit").count == 3)
    }

    @Test func anExpiredUploadSessionStartsOver() async throws {
        let fixture = try BoxFixture()
        fixture.mock.expireUploadSessions(afterParts: 2)
        let data = bytes(5 * 256 * 1024, seed: 23)
        try await fixture.fileSystem.upload(data, to: "again.bin")
        #expect(try await fixture.fileSystem.download("again.bin") == data)
        #expect(
            fixture.requests("POST", containing: "/upload_sessions").filter { !$0.target.contains("/commit") }.count
                == 2)
    }

    /// Downloads answer 302 to the download host (reached without the token) or 202 + Retry-After while not ready.
    @Test func downloadsFollowTheRedirectWithoutTheTokenAndWaitOutA202() async throws {
        let fixture = try BoxFixture()
        let data = bytes(40_000, seed: 24)
        try await fixture.fileSystem.upload(data, to: "d/file.bin")
        fixture.mock.delayDownloads(2)
        #expect(try await fixture.fileSystem.download("d/file.bin") == data)
        #expect(try await fixture.fileSystem.read("d/file.bin", range: .bytes(10, 99)) == data[10...99])
        #expect(fixture.mock.log.filter { $0.status == 202 }.count == 2)
        #expect(fixture.mock.contentHost.requestsWithCredentials.isEmpty)
    }

    /// Names are case-insensitive: `A.txt` then `a.txt` is one file with a new version, found by the upload's 409.
    @Test func aNameDifferingInCaseIsANewVersionOfTheSameFile() async throws {
        let fixture = try BoxFixture()
        try await fixture.fileSystem.upload(Data("upper".utf8), to: "c/A.txt")
        let other = BoxFixture.connector(fixture.mock, http: fixture.http, tokens: fixture.tokenSource)
        try await other.upload(Data("lower".utf8), to: "c/a.txt")
        #expect(try await fixture.fileSystem.listNames("c") == ["A.txt"])
        #expect(try await other.download("C/A.TXT") == Data("lower".utf8))
        #expect(fixture.mock.earlierVersions(of: "c/A.txt") == 1)
        #expect(
            fixture.requests("POST", containing: "/files/content").contains { $0.status == 409 },
            "the second uploader met the file as a 409")
        #expect(
            fixture.requests("OPTIONS", containing: "/files/content").isEmpty,
            "a small file goes up without a preflight")
    }

    /// Two clients creating one folder: the second looks for it in a listing that lags behind the first's creation (as
    /// Box's listings may), creates it, meets the 409 naming it and uses it. The stale listing is served once, after
    /// the first client made the folder, so the conflict happens on every run, and is checked to have happened.
    @Test func twoClientsCreatingOneFolderEndWithOne() async throws {
        let fixture = try BoxFixture()
        let other = BoxFixture.connector(fixture.mock, http: fixture.http, tokens: fixture.tokenSource)
        try await fixture.fileSystem.upload(Data("a".utf8), to: "shared/deeper/a")
        let stale = try JSONSerialization.data(withJSONObject: ["entries": [], "limit": 1000, "next_marker": NSNull()])
        fixture.mock.faults.inject(.answer(status: 200, headers: ["Content-Type": "application/json"], body: stale)) {
            $0.method == "GET" && $0.path.hasSuffix("/folders/0/items")
        }
        try await other.upload(Data("b".utf8), to: "shared/deeper/b")
        #expect(
            fixture.requests("POST", containing: "/folders").contains { $0.status == 409 },
            "the second client met the folder as a 409")
        #expect(Set(fixture.mock.paths) == ["shared", "shared/deeper", "shared/deeper/a", "shared/deeper/b"])
    }

    /// Box refuses `\` and a trailing space: they are stored encoded and listed back as written.
    @Test func namesBoxRefusesRoundTrip() async throws {
        let fixture = try BoxFixture()
        for name in ["back\\slash", "trailing "] {
            try await fixture.fileSystem.upload(Data(name.utf8), to: "n/\(name)")
        }
        #expect(Set(try await fixture.fileSystem.listNames("n")) == ["back\\slash", "trailing "])
        #expect(try await fixture.fileSystem.download("n/trailing ") == Data("trailing ".utf8))
    }

    /// Over the rate limit Box answers 429 with retry-after; the remote's pacer holds every transfer back and all
    /// of them finish. The window counts on a clock the client's waits move, so the test waits for nothing and the
    /// waits are the ones the client decided on.
    @Test func theRateLimitIsWaitedOut() async throws {
        let clock = MovedClock()
        var settings = BoxFixture.testSettings
        settings.requestsPerWindow = 20
        settings.rateWindow = 1
        settings.now = { clock.now }
        var configuration = HTTPClientConfiguration()
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 8, sleep: { clock.advance($0) })
        configuration.waitRecord = HTTPWaitRecord()
        let fixture = try BoxFixture(settings: settings, http: HTTPClient(configuration: configuration))
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<30 { group.addTask { try await fixture.fileSystem.upload(Data("\(i)".utf8), to: "r/\(i)") } }
            try await group.waitForAll()
        }
        #expect(try await fixture.fileSystem.listNames("r").count == 30)
        #expect(fixture.mock.log.contains { $0.status == 429 })
        let waits = configuration.waitRecord?.waits(after: 0) ?? []
        #expect(waits.contains { $0 >= .seconds(1) }, "the client waited the second the retry-after asked: \(waits)")
    }

    /// The attributes part must come before the file: the mock refuses the other order as Box does.
    @Test func theMockRefusesTheFileBeforeItsAttributes() async throws {
        let fixture = try BoxFixture()
        let token = try #require(try fixture.tokenFile.read()).accessToken
        let form = [
            FormPart(name: "file", filename: "x.txt", contentType: "text/plain", content: .data(Data("x".utf8))),
            FormPart(
                name: "attributes", filename: nil, contentType: nil,
                content: .data(Data(#"{"name":"x.txt","parent":{"id":"0"}}"#.utf8))),
        ]
        let response = try await fixture.http.send(
            HTTPRequest(
                method: "POST", url: fixture.mock.endpoint.appendingPathComponent("api/2.0/files/content"),
                headers: ["Authorization": "Bearer \(token)"], body: .form(form)))
        #expect(response.status == 400)
        #expect(response.text.contains("metadata_after_file_contents"))
    }
}

@Suite struct BoxMockStateTests {
    /// `llvs-mock box --state DIR`: a restarted mock still holds the files (small, and one made by an upload
    /// session), not the trashed one, and still accepts the token it issued.
    @Test func aBoxMockRestartedWithItsStateKeepsTheAccountAndTheTokens() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-box-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokenFile = TokenFile(path: folder.appendingPathExtension("token").path)
        defer { try? FileManager.default.removeItem(atPath: tokenFile.path) }
        let big = bytes(5 * 256 * 1024 + 11, seed: 31)
        func connect(_ mock: MockBoxServer) -> BoxFileSystem {
            BoxFixture.connector(
                mock, http: quickClient(),
                tokens: OAuthTokenSource(
                    file: tokenFile, configuration: BoxFixture.oauth(mock),
                    http: quickClient(), reauthorizeCommand: "llvs auth box"))
        }
        do {
            let mock = try MockBoxServer(settings: BoxFixture.testSettings, state: try MockStateDirectory(folder))
            defer { mock.stop() }
            try tokenFile.write(mock.issueToken())
            let box = connect(mock)
            try await box.upload(Data("small".utf8), to: "a/small.txt")
            try await box.upload(big, to: "a/big.bin")
            try await box.upload(Data("gone".utf8), to: "a/gone.txt")
            try await box.removeFile("a/gone.txt")
        }
        let again = try MockBoxServer(settings: BoxFixture.testSettings, state: try MockStateDirectory(folder))
        defer { again.stop() }
        let box = connect(again)
        #expect(try await box.download("a/small.txt") == Data("small".utf8))
        #expect(try await box.download("a/big.bin") == big)
        #expect(try await !box.exists("a/gone.txt"))
        #expect(again.oauth.refreshCount == 0, "the saved access token is still accepted")
        try await box.upload(Data("new".utf8), to: "a/new.txt")
        #expect(
            Set(again.paths) == ["a", "a/small.txt", "a/big.bin", "a/new.txt"],
            "new IDs do not collide with restored ones: \(again.paths)")
    }
}

/// A clock that moves only when told: what a mock's time-based rule counts on when a test waits for nothing.
final class MovedClock: Sendable {
    private let time = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
    var now: Date { time.withLock { $0 } }
    func advance(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        time.withLock { $0 = $0.addingTimeInterval(Double(seconds) + Double(attoseconds) / 1e18) }
    }
}
