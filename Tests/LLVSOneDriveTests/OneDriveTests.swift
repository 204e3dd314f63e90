import Foundation
import LLVS
import LLVSSupport
import LLVSTestSupport
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSOneDrive
import Testing

@Suite struct OneDriveConformanceTests {
    @Test(arguments: [MockOneDriveServer.Settings.DriveType.personal, .business])
    func theConnectorConformsAgainstTheMock(driveType: MockOneDriveServer.Settings.DriveType) async throws {
        var settings = MockOneDriveServer.Settings()
        settings.driveType = driveType
        let fixture = try OneDriveFixture(settings: settings) { $0.pageSize = 100 }
        var options = ConformanceOptions()
        options.faults = oneDriveFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 6 * 1024 * 1024 + 12_345
        options.listingCount = 250
        await expectConformance(fixture.fileSystem, options: options)
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
        #expect(
            fixture.mock.contentHost.server.log.contains { $0.method == "PUT" },
            "the large file should go up in an upload session")
        #expect(
            fixture.mock.log.contains { $0.target.contains("skiptoken") },
            "the listing should have needed a second page")
        #expect(
            fixture.mock.contentHost.requestsWithCredentials.isEmpty, "the token reached the upload or download host")
    }

    /// The whole suite, failure checks included, through the encryption layer (what an `--encrypt` remote does).
    @Test func theConnectorConformsThroughEncryption() async throws {
        let fixture = try OneDriveFixture { $0.pageSize = 100 }
        var options = ConformanceOptions()
        options.faults = oneDriveFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 3 * 1024 * 1024 + 12_345
        options.listingCount = 250
        try await expectConformanceThroughEncryption(fixture.fileSystem, options: options)
    }

    @Test func theConnectorConformsWhenOneRequestInTenFails() async throws {
        let fixture = try OneDriveFixture { $0.pageSize = 100 }
        fixture.mock.faults.injectRandomly(
            rate: 0.1,
            faults: [.status(429, retryAfter: 0), .status(503, retryAfter: 0), .status(500), .dropBeforeAnswer], seed: 3
        )
        var options = ConformanceOptions()
        options.largeFileSize = 6 * 1024 * 1024
        options.listingCount = 250
        // The random faults stand in for the failure checks' own, which need a fault control.
        await expectConformance(fixture.fileSystem, options: options, skippable: checksNeedingFaults)
        #expect(fixture.mock.log.filter { !$0.faults.isEmpty }.count > 20, "faults were injected")
    }
}

@Suite struct OneDriveBehaviourTests {
    /// Answers lost after the mock kept a fragment are settled from nextExpectedRanges: the upload goes on from
    /// where the session stands and never goes back. (libcurl itself sends a request again, once, when a reused
    /// connection dies before any answer; the mock answers that repeat 416 and the connector asks the session.)
    @Test func anInterruptedUploadSessionResumesWithoutResendingAcknowledgedBytes() async throws {
        let fixture = try OneDriveFixture { $0.simpleUploadLimit = 1024 * 1024 }
        let data = SeededGenerator.bytes(10 * 320 * 1024 + 777, seed: 4)
        // Fragment answers 2 and 4 are lost after the mock stored them (the 2nd and 4th PUT to the content host).
        fixture.mock.contentHost.server.faults.limit(toMethods: ["PUT"])
        fixture.mock.contentHost.server.faults.inject(.dropBeforeAnswer, intoRequest: 2)
        fixture.mock.contentHost.server.faults.inject(.dropBeforeAnswer, intoRequest: 4)
        try await fixture.fileSystem.upload(data, to: "big/file.bin")
        #expect(try await fixture.fileSystem.download("big/file.bin") == data)
        let puts = fixture.mock.contentHost.server.log.filter { $0.method == "PUT" }
        let starts = puts.compactMap { $0.headers["Content-Range"] }.compactMap {
            Int64($0.dropFirst(6).prefix { $0 != "-" })
        }
        #expect(zip(starts, starts.dropFirst()).allSatisfy { $0 <= $1 }, "the upload went back: \(starts)")
        #expect(Set(starts).count == 4, "four fragments: \(starts)")
        #expect(
            fixture.mock.contentHost.server.log.contains { $0.method == "GET" && $0.target.hasPrefix("/upload/") },
            "a lost answer is settled by asking the session")
    }

    @Test func anExpiredUploadSessionStartsOver() async throws {
        let fixture = try OneDriveFixture { $0.simpleUploadLimit = 1024 * 1024 }
        let data = SeededGenerator.bytes(10 * 320 * 1024, seed: 5)
        fixture.mock.expireUploadSessions(afterFragments: 2)
        try await fixture.fileSystem.upload(data, to: "again.bin")
        #expect(try await fixture.fileSystem.download("again.bin") == data)
        #expect(fixture.requests("POST", containing: "createUploadSession").count == 2)
    }

    /// Downloads answer a 302 to the content host, which refuses a token: whole, to a file and ranged, none carries it.
    @Test func aDownloadRedirectNeverCarriesTheToken() async throws {
        let fixture = try OneDriveFixture()
        let data = SeededGenerator.bytes(50_000, seed: 6)
        try await fixture.fileSystem.upload(data, to: "d/file.bin")
        #expect(try await fixture.fileSystem.download("d/file.bin") == data)
        #expect(try await fixture.fileSystem.read("d/file.bin", range: .bytes(10, 99)) == data[10...99])
        let local = fixture.directory.appendingPathComponent("down.bin")
        try await fixture.fileSystem.download("d/file.bin", toFileAt: local)
        #expect(try Data(contentsOf: local) == data)
        #expect(fixture.mock.contentHost.server.log.filter { $0.method == "GET" }.count == 3)
        #expect(fixture.mock.contentHost.requestsWithCredentials.isEmpty)
        #expect(
            fixture.mock.log.filter { $0.method == "GET" && $0.target.hasSuffix("/content") }.allSatisfy {
                $0.status == 302
            })
    }

    /// Names OneDrive refuses are stored encoded and come back as written; names differing in case are one item.
    @Test func namesOneDriveRefusesRoundTripAndCaseIsIgnored() async throws {
        let fixture = try OneDriveFixture()
        for name in ["what? ", "a:b*c", " lead", "dot."] {
            try await fixture.fileSystem.upload(Data(name.utf8), to: "names/\(name)")
        }
        #expect(Set(try await fixture.fileSystem.listNames("names")) == ["what? ", "a:b*c", " lead", "dot."])
        #expect(try await fixture.fileSystem.download("names/what? ") == Data("what? ".utf8))
        #expect(fixture.mock.paths.allSatisfy { !$0.contains("?") && !$0.hasSuffix(".") }, "\(fixture.mock.paths)")
        try await fixture.fileSystem.upload(Data("upper".utf8), to: "Names/CASE.txt")
        #expect(try await fixture.fileSystem.download("names/case.txt") == Data("upper".utf8))
    }

    @Test func aPathOver400CharactersIsRefusedBeforeAnyRequest() async throws {
        let fixture = try OneDriveFixture()
        let before = fixture.mock.log.count
        let long = (0..<9).map { _ in String(repeating: "x", count: 50) }.joined(separator: "/")
        await #expect(throws: CloudFileSystemError.self) { try await fixture.fileSystem.upload(Data(), to: long) }
        #expect(fixture.mock.log.count == before)
    }

    /// Microsoft rotates refresh tokens: two token sources on one file (two processes) refreshing at once both end
    /// with a working token, and the file holds the newest refresh token.
    @Test func aRotatedRefreshTokenIsSharedByTwoProcesses() async throws {
        let fixture = try OneDriveFixture()
        let other = OAuthTokenSource(
            file: fixture.tokenFile, configuration: OneDriveFixture.oauth(fixture.mock), http: fixture.http,
            reauthorizeCommand: "llvs auth onedrive")
        let second = OneDriveFileSystem(
            configuration: OneDriveConfiguration(endpoint: fixture.mock.endpoint), http: fixture.http, authorizer: other
        )
        try await fixture.fileSystem.upload(Data("1".utf8), to: "t/one")
        fixture.mock.expireAccessTokens()
        async let a: Void = fixture.fileSystem.upload(Data("a".utf8), to: "t/a")
        async let b: Void = second.upload(Data("b".utf8), to: "t/b")
        _ = try await (a, b)
        #expect(fixture.mock.oauth.refreshCount == 1, "one refresh for both: the second reads what the first wrote")
        fixture.mock.expireAccessTokens()
        try await second.upload(Data("c".utf8), to: "t/c")
        #expect(Set(try await fixture.fileSystem.listNames("t")) == ["one", "a", "b", "c"])
    }

    @Test func throttlingIsWaitedOutAndAFullDriveIsFinal() async throws {
        let fixture = try OneDriveFixture()
        fixture.mock.faults.injectNext(.status(429, retryAfter: 0))
        fixture.mock.faults.injectNext(.status(503, retryAfter: 0))
        try await fixture.fileSystem.upload(Data("x".utf8), to: "x.txt")
        var settings = MockOneDriveServer.Settings()
        settings.quotaBytes = 10
        let full = try OneDriveFixture(settings: settings)
        await #expect(
            throws: CloudFileSystemError.quotaExceeded("OneDrive has no room for big.txt: Insufficient Space Available")
        ) {
            try await full.fileSystem.upload(Data(repeating: 1, count: 100), to: "big.txt")
        }
    }
}

@Suite struct OneDriveSyncTests {
    @Test func twoStoresSyncThroughTheMockAndConverge() async throws {
        let fixture = try OneDriveFixture()
        let a = try Store(creatingAt: fixture.directory.appendingPathComponent("a"))
        let b = try Store(creatingAt: fixture.directory.appendingPathComponent("b"))
        func exchange(_ store: Store) -> CloudFileSystemExchange {
            CloudFileSystemExchange(store: store, fileSystem: fixture.fileSystem, basePath: "LLVS/stores")
        }
        var head: Version.ID?
        for index in 0..<12 {
            head = try a.makeVersion(
                basedOnPredecessor: head,
                inserting: [Value(id: Value.ID("what? \(index) "), data: Data("\(index)".utf8))]
            ).id
        }
        let big = SeededGenerator.bytes(5 * 1024 * 1024, seed: 9)
        head = try a.makeVersion(basedOnPredecessor: head, inserting: [Value(id: "big", data: big)]).id
        #expect(try await exchange(a).send().failures.isEmpty)
        let retrieved = try await exchange(b).retrieve()
        #expect(retrieved.failures.isEmpty)
        #expect(Set(b.history.versions.keys) == Set(a.history.versions.keys))
        #expect(try b.value(id: "big", at: head!)?.data == big)
        #expect(try b.value(id: "what? 11 ", at: head!)?.data == Data("11".utf8))
    }
}

@Suite struct OneDriveMockStateTests {
    /// `llvs-mock onedrive --state DIR`: stopped and started again, the mock still has the files and the tokens.
    @Test func aMockRestartedWithItsStateKeepsTheDriveAndTheTokens() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-onedrive-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let big = SeededGenerator.bytes(2 * 1024 * 1024, seed: 12)
        let token: OAuthToken
        do {
            let mock = try MockOneDriveServer(state: try MockStateDirectory(directory))
            token = mock.issueToken()
            let fileSystem = OneDriveFileSystem(
                configuration: OneDriveConfiguration(endpoint: mock.endpoint), http: quickClient(),
                authorizer: StaticBearer(token: token.accessToken))
            try await fileSystem.upload(Data("small".utf8), to: "kept/small.txt")
            try await fileSystem.upload(big, to: "kept/big.bin")
            mock.stop()
        }
        let again = try MockOneDriveServer(state: try MockStateDirectory(directory))
        defer { again.stop() }
        let fileSystem = OneDriveFileSystem(
            configuration: OneDriveConfiguration(endpoint: again.endpoint), http: quickClient(),
            authorizer: StaticBearer(token: token.accessToken))
        #expect(try await fileSystem.download("kept/small.txt") == Data("small".utf8))
        #expect(try await fileSystem.download("kept/big.bin") == big)
        try await fileSystem.upload(Data("new".utf8), to: "kept/new.txt")
        #expect(Set(try await fileSystem.listNames("kept")) == ["small.txt", "big.bin", "new.txt"])
    }
}

/// A fixed access token, for tests that need no refresh.
struct StaticBearer: HTTPAuthorizer {
    var token: String
    func authorize(_ request: inout HTTPRequest) async throws { request.headers["Authorization"] = "Bearer \(token)" }
    func renew(after response: HTTPResponse, to request: HTTPRequest) async throws -> Bool { false }
}
