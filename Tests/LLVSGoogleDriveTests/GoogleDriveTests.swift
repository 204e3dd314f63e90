import Foundation
import LLVS
import LLVSSupport
import LLVSConformance
import LLVSGoogleDrive
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
import Synchronization
import Testing

@Suite struct GoogleDriveConformanceTests {
    @Test(arguments: GoogleDriveConfiguration.Removal.allCases)
    func theConnectorConformsAgainstTheMock(removal: GoogleDriveConfiguration.Removal) async throws {
        let fixture = try DriveFixture {
            $0.pageSize = 100; $0.removal = removal
        }
        var options = ConformanceOptions()
        options.faults = driveFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 6 * 1024 * 1024 + 12_345
        options.listingCount = 250
        await expectConformance(fixture.fileSystem, options: options)
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
        #expect(
            fixture.requests("PUT", "/upload/drive/v3/files?uploadType=resumable").count >= 7,
            "the large file should go up in resumable chunks")
        #expect(
            fixture.mock.log.contains { $0.target.contains("pageToken=") },
            "the listing should have needed a second page")
        if removal == .delete { #expect(fixture.mock.itemCount == 0) }
    }

    /// The whole suite, failure checks included, through the encryption layer (what an `--encrypt` remote does).
    @Test func theConnectorConformsThroughEncryption() async throws {
        let fixture = try DriveFixture { $0.pageSize = 100 }
        var options = ConformanceOptions()
        options.faults = driveFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 3 * 1024 * 1024 + 12_345
        options.listingCount = 250
        try await expectConformanceThroughEncryption(fixture.fileSystem, options: options)
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
    }

    @Test func theConnectorConformsWhenOneRequestInTenFails() async throws {
        let fixture = try DriveFixture { $0.pageSize = 100 }
        fixture.mock.faults.injectRandomly(
            rate: 0.1, faults: [.status(403), .status(429), .status(503), .status(500), .dropBeforeAnswer], seed: 5)
        var options = ConformanceOptions()
        options.largeFileSize = 6 * 1024 * 1024
        options.listingCount = 250
        await expectConformance(
            fixture.fileSystem, options: options,
            skippable: checksNeedingFaults)
        #expect(fixture.mock.log.filter { !$0.faults.isEmpty }.count > 50)
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
        #expect(fixture.mock.count(named: "folder") <= 1, "a folder was created twice")
    }
}

@Suite struct GoogleDriveBehaviourTests {
    @Test func anInterruptedResumableUploadResumesWithoutSendingAcknowledgedChunksAgain() async throws {
        let fixture = try DriveFixture {
            $0.chunkSize = 256 * 1024; $0.multipartLimit = 256 * 1024
        }
        let data = bytes(9 * 256 * 1024 + 100, seed: 3)
        try data.write(to: fixture.local("big.bin"))
        try await fixture.fileSystem.makeFolder("up")
        // The fourth chunk is stored but its answer is lost (a fault chosen by the chunk's Content-Range, not by
        // request number). A chunk is not repeatable, so libcurl may not resend it in silence; the uploader asks the
        // session what it holds and goes on from there.
        let fourth = "bytes \(3 * 256 * 1024)-\(4 * 256 * 1024 - 1)/\(data.count)"
        fixture.mock.faults.inject(.dropBeforeAnswer, times: 1) {
            $0.method == "PUT" && $0.headers["Content-Range"] == fourth
        }
        try await fixture.fileSystem.upload(fileAt: fixture.local("big.bin"), to: "up/big.bin")

        #expect(try await fixture.fileSystem.download("up/big.bin") == data)
        let puts = fixture.requests("PUT", "/upload/drive/v3/files?uploadType=resumable")
        #expect(
            puts.contains { $0.headers["Content-Range"] == "bytes */\(data.count)" },
            "the session was asked what it holds")
        // Offsets never go back to a chunk Drive acknowledged, and the one whose answer was lost is not sent again.
        let starts = puts.compactMap {
            $0.headers["Content-Range"].flatMap { Int($0.dropFirst(6).prefix { $0 != "-" }) }
        }
        #expect(starts == starts.sorted())
        #expect(Set(starts).count == 10)
        #expect(fixture.mock.uploadSessionBytes == [Int64(data.count)])
        #expect(
            fixture.mock.log.filter { $0.faults.contains(.dropBeforeAnswer) }.count == 1, "the fault met its chunk")
    }

    @Test func aFailedChunkIsResumedFromWhatTheSessionHolds() async throws {
        let fixture = try DriveFixture {
            $0.chunkSize = 256 * 1024; $0.multipartLimit = 256 * 1024
        }
        let data = bytes(5 * 256 * 1024, seed: 4)
        let second = "bytes \(256 * 1024)-\(2 * 256 * 1024 - 1)/\(data.count)",
            fourth = "bytes \(3 * 256 * 1024)-\(4 * 256 * 1024 - 1)/\(data.count)"
        fixture.mock.faults.inject(.status(503)) { $0.method == "PUT" && $0.headers["Content-Range"] == second }
        fixture.mock.faults.inject(.status(500)) { $0.method == "PUT" && $0.headers["Content-Range"] == fourth }
        try await fixture.fileSystem.upload(data, to: "b.bin")
        #expect(
            fixture.mock.log.filter { !$0.faults.isEmpty }.map(\.status) == [503, 500], "both faults met their chunk")
        #expect(try await fixture.fileSystem.download("b.bin") == data)
        #expect(fixture.mock.uploadSessionBytes == [Int64(data.count)])
    }

    /// Drive's rate limit can answer any request, a chunk of a resumable upload included (403
    /// userRateLimitExceeded, or 429): the chunk is sent again from what the session holds, not given up on.
    @Test(arguments: [403, 429]) func aRateLimitedChunkIsSentAgain(status: Int) async throws {
        let fixture = try DriveFixture {
            $0.chunkSize = 256 * 1024; $0.multipartLimit = 256 * 1024
        }
        let data = bytes(4 * 256 * 1024, seed: 8)
        let third = "bytes \(2 * 256 * 1024)-\(3 * 256 * 1024 - 1)/\(data.count)"
        fixture.mock.faults.inject(.status(status)) { $0.method == "PUT" && $0.headers["Content-Range"] == third }
        try await fixture.fileSystem.upload(data, to: "limited.bin")
        #expect(fixture.mock.log.filter { !$0.faults.isEmpty }.map(\.status) == [status], "the fault met its chunk")
        #expect(try await fixture.fileSystem.download("limited.bin") == data)
    }

    /// A download to a file that Drive answers with its rate limit (403 userRateLimitExceeded) is waited out and
    /// sent again: the reason is in the answer's body, which is read, not written into the file.
    @Test func aRateLimitedDownloadToAFileIsSentAgain() async throws {
        let fixture = try DriveFixture()
        let data = bytes(300_000, seed: 9)
        try await fixture.fileSystem.upload(data, to: "d.bin")
        fixture.mock.faults.inject(.status(403)) { $0.method == "GET" && $0.path.hasPrefix("/drive/v3/files/") }
        try await fixture.fileSystem.download("d.bin", toFileAt: fixture.local("d.bin"))
        let faulted = fixture.mock.log.filter { !$0.faults.isEmpty }
        #expect(
            faulted.map(\.status) == [403] && faulted.allSatisfy { $0.target.contains("alt=media") },
            "the fault met the download: \(faulted.map(\.target))")
        #expect(FileManager.default.contents(atPath: fixture.local("d.bin").path) == data)
    }

    @Test func anExpiredUploadSessionStartsOver() async throws {
        let fixture = try DriveFixture {
            $0.chunkSize = 256 * 1024; $0.multipartLimit = 256 * 1024
        }
        let data = bytes(4 * 256 * 1024, seed: 6)
        fixture.mock.expireUploadSessions(afterChunks: 2)
        try await fixture.fileSystem.upload(data, to: "c.bin")
        #expect(
            fixture.mock.uploadSessionBytes.sorted() == [Int64(2 * 256 * 1024), Int64(data.count)],
            "a second session took the whole file")
        #expect(try await fixture.fileSystem.download("c.bin") == data)
        #expect(fixture.mock.count(named: "c.bin") == 1)
    }

    @Test func eightUploadsIntoOneNewNestedFolderCreateEachFolderOnce() async throws {
        let fixture = try DriveFixture()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for i in 0..<8 {
                group.addTask {
                    try await fixture.fileSystem.upload(Data("file \(i)".utf8), to: "new/nested/folder/f\(i).txt")
                }
            }
            try await group.waitForAll()
        }
        #expect(fixture.requests("POST", "/drive/v3/files").count == 3)
        for name in ["new", "nested", "folder"] {
            #expect(fixture.mock.count(named: name) == 1, "\(name) created more than once")
        }
        #expect(try await fixture.fileSystem.list("new/nested/folder").count == 8)
    }

    @Test func duplicateNamesResolveToTheOldestEveryTime() async throws {
        let fixture = try DriveFixture()
        let folder = try fixture.mock.addFile(named: "twice", data: Data())
        _ = folder
        // A second apart: made within one millisecond they would tie, and the lower ID (random here) would win.
        let now = Date()
        try fixture.mock.addFile(named: "dup.txt", data: Data("first".utf8), created: now.addingTimeInterval(-1))
        try fixture.mock.addFile(named: "dup.txt", data: Data("second".utf8), created: now)
        try fixture.mock.addFile(named: "DUP.txt", data: Data("other case".utf8))
        #expect(try await fixture.fileSystem.download("dup.txt") == Data("first".utf8))
        #expect(try await fixture.fileSystem.download("DUP.txt") == Data("other case".utf8))
        let listed = try await fixture.fileSystem.list("").filter { $0.name.lowercased() == "dup.txt" }
        #expect(listed.count == 2)
        // Replacing updates the chosen file by its ID: no third copy appears.
        try await fixture.fileSystem.upload(Data("replaced".utf8), to: "dup.txt")
        #expect(fixture.mock.count(named: "dup.txt") == 2)
        #expect(try await fixture.fileSystem.download("dup.txt") == Data("replaced".utf8))
        // Removing removes every copy, so no other takes its place.
        try await fixture.fileSystem.removeFile("dup.txt")
        #expect(try await !fixture.fileSystem.exists("dup.txt"))
        #expect(try await fixture.fileSystem.exists("DUP.txt"))
    }

    @Test func replacingAFileKeepsItsID() async throws {
        let fixture = try DriveFixture()
        try await fixture.fileSystem.upload(Data("one".utf8), to: "a/file.txt")
        let id = fixture.mock.id(at: "a/file.txt")
        try await fixture.fileSystem.upload(Data("two, longer".utf8), to: "a/file.txt")
        #expect(fixture.mock.id(at: "a/file.txt") == id)
        #expect(fixture.requests("DELETE", "/drive/v3/files").isEmpty)
        let item = try await fixture.fileSystem.metadata("a/file.txt")
        #expect(item.size == 11)
        #expect(item.checksums == [.md5: DigestStream.hex(Data("two, longer".utf8), .md5)])
    }

    /// The waits are asked of the policy's sleep, which records them and moves the pacer's own clock by as much:
    /// Retry-After: 1 is waited exactly 1 s, a 429 without one with a backoff, and nothing is slept for real.
    @Test func rateLimitsAreWaitedOutAndAFullQuotaIsFinal() async throws {
        var settings = MockGoogleDriveServer.Settings()
        settings.quotaBytes = 1000
        let waits = Mutex<[Duration]>([])
        let clock = Mutex<UInt64>(1_000_000_000)
        var configuration = HTTPClientConfiguration()
        configuration.retryPolicy = RetryPolicy(
            maximumAttempts: 8,
            sleep: { wait in
                waits.withLock { $0.append(wait) }
                let (seconds, attoseconds) = wait.components
                clock.withLock { $0 += UInt64(seconds) * 1_000_000_000 + UInt64(attoseconds / 1_000_000_000) }
            })
        let pacer = RequestPacer(now: { clock.withLock { $0 } })
        let fixture = try DriveFixture(settings: settings, http: HTTPClient(configuration: configuration), pacer: pacer)
        fixture.mock.faults.injectNext(.status(403, retryAfter: 1))
        fixture.mock.faults.injectNext(.status(429))
        try await fixture.fileSystem.upload(Data(repeating: 1, count: 600), to: "x.bin")
        let asked = waits.withLock { $0 }
        #expect(asked.first == .seconds(1), "Retry-After: 1 is waited exactly, on the pacer's clock: \(asked)")
        #expect(asked.count >= 2 && asked.allSatisfy { $0 > .zero }, "\(asked)")
        await #expect {
            try await fixture.fileSystem.upload(Data(repeating: 2, count: 600), to: "y.bin")
        } throws: { error in
            if case CloudFileSystemError.quotaExceeded = error { true } else { false }
        }
        #expect(try await !fixture.fileSystem.exists("y.bin"))
    }

    @Test func aRevokedRefreshTokenAsksForAuthorizationAgain() async throws {
        let fixture = try DriveFixture()
        fixture.mock.oauth.revokeRefreshTokens()
        fixture.mock.expireAccessTokens()
        let tokenBefore = try Data(contentsOf: URL(fileURLWithPath: fixture.tokenSource.file.path))
        await #expect {
            _ = try await fixture.fileSystem.list("")
        } throws: { error in
            guard case CloudFileSystemError.unauthorized(let message) = error else { return false }
            return message.contains("llvs auth drive") && message.contains("Token has been expired or revoked")
        }
        #expect(
            try Data(contentsOf: URL(fileURLWithPath: fixture.tokenSource.file.path)) == tokenBefore,
            "the token file is untouched")
    }

    /// Drive may keep only part of a resumable chunk; its 308 says how much, and the connector sends the rest again.
    @Test func aChunkKeptOnlyInPartIsCompletedFromTheRangeDriveGives() async throws {
        let fixture = try DriveFixture { $0.multipartLimit = 256 * 1024 }
        fixture.mock.keepOnlyPartOfNextChunks(2)
        let data = bytes(3 * 1024 * 1024 + 100, seed: 21)
        try await fixture.fileSystem.upload(data, to: "short/chunks.bin")
        #expect(try await fixture.fileSystem.download("short/chunks.bin") == data)
        let chunks = fixture.mock.log.filter { $0.method == "PUT" && $0.target.contains("upload_id=") }
        #expect(chunks.count > 4, "the parts Drive did not keep were sent again (\(chunks.count) chunk requests)")
    }

    @Test func theChangesFeedReportsNewAndRemovedFilesOfTheWatchedFolders() async throws {
        let fixture = try DriveFixture()
        try await fixture.fileSystem.makeFolder("feed")
        let start = try await fixture.fileSystem.changeCursor(watching: ["feed"])
        try await fixture.fileSystem.upload(Data("x".utf8), to: "feed/one.txt")
        try await fixture.fileSystem.upload(Data("y".utf8), to: "feed/two.txt")
        try await fixture.fileSystem.upload(Data("z".utf8), to: "elsewhere/three.txt")
        try await fixture.fileSystem.removeFile("feed/one.txt")
        let changes = try await fixture.fileSystem.changes(in: ["feed"], since: start)
        // Drive reports each file once, as it is now: one.txt only as trashed; nothing outside the watched folder.
        #expect(changes.added == ["feed": ["two.txt"]])
        #expect(changes.removed == ["feed": ["one.txt"]])
        let none = try await fixture.fileSystem.changes(in: ["feed"], since: changes.cursor)
        #expect(none.added.isEmpty && none.removed.isEmpty)
    }

    @Test func aRemovedWatchedFolderOrAnUnknownTokenExpiresTheCursor() async throws {
        let fixture = try DriveFixture()
        try await fixture.fileSystem.makeFolder("feed")
        let start = try await fixture.fileSystem.changeCursor(watching: ["feed"])
        try await fixture.fileSystem.removeFolder("feed")
        await #expect(throws: CloudFileSystemError.cursorExpired("the remote folder feed was removed on Google Drive"))
        {
            _ = try await fixture.fileSystem.changes(in: ["feed"], since: start)
        }
        await #expect {
            _ = try await fixture.fileSystem.changes(in: ["feed"], since: "{\"folders\":{},\"token\":\"0\"}")
        } throws: { error in
            if case CloudFileSystemError.cursorExpired = error { true } else { false }
        }
    }
}

@Suite struct DriveSharedLayerTests {
    /// Drive declares MD5: the suite compares it for every upload, and fails a connector whose MD5 is wrong.
    @Test func theIntegrityCheckComparesDrivesMD5() async throws {
        let fixture = try DriveFixture()
        #expect(fixture.fileSystem.capabilities.checksums == [.md5])
        var options = ConformanceOptions()
        options.listingCount = 10
        options.largeFileSize = 1024
        let honest = await ConformanceSuite.run(on: fixture.fileSystem, options: options)
        #expect(honest.results.first { $0.id == "integrity" }?.status == .passed)
        let lying = await ConformanceSuite.run(
            on: MisreportingFileSystem(fixture.fileSystem, lie: .checksums), options: options)
        let integrity = try #require(lying.results.first { $0.id == "integrity" })
        #expect(integrity.status == .failed)
        #expect(integrity.message?.contains("MD5") == true, "\(integrity.message ?? "")")
    }

    /// A folder POST answered 503 every time goes out at most the policy's attempts in all: the shared create-once
    /// is its only retry point (before, the client's retries and the connector's multiplied to 25).
    @Test func aRefusedFolderCreationIsSentAtMostThePolicysAttempts() async throws {
        let fixture = try DriveFixture()
        fixture.mock.faults.limit(toMethods: ["POST"])
        fixture.mock.faults.injectRandomly(rate: 1, faults: [.status(503)])
        await #expect(throws: CloudFileSystemError.self) { try await fixture.fileSystem.makeFolder("never/made") }
        #expect(fixture.requests("POST", "/drive/v3/files").count == 8, "quickClient's policy allows 8 attempts")
    }
}

@Suite struct HostileDriveTests {
    /// A server that answers every listing page with a next page: the same token again, or a new one for ever.
    func looping(newToken: Bool) throws -> (GoogleDriveFileSystem, MockHTTPServer) {
        let counter = Mutex(0)
        let server = try MockHTTPServer { request in
            let page = counter.withLock {
                $0 += 1; return $0
            }
            return .json(200, ["files": [], "nextPageToken": newToken ? "token-\(page)" : "same"])
        }
        var configuration = GoogleDriveConfiguration(endpoint: server.baseURL)
        configuration.maximumPages = 50
        return (GoogleDriveFileSystem(configuration: configuration, http: quickClient(), authorizer: nil), server)
    }

    @Test func aRepeatedPageTokenEndsTheListing() async throws {
        let (fileSystem, server) = try looping(newToken: false)
        defer { server.stop() }
        await #expect(throws: CloudFileSystemError.self) { _ = try await fileSystem.list("") }
        #expect(server.log.count == 2, "the second page repeated the first page's token")
    }

    @Test func aListingThatNeverEndsStopsAtThePageBound() async throws {
        let (fileSystem, server) = try looping(newToken: true)
        defer { server.stop() }
        do {
            _ = try await fileSystem.listNames("")
            Issue.record("the listing should have failed")
        } catch let error as CloudFileSystemError {
            #expect(error.description.contains("past 50 pages"), "\(error)")
        }
        #expect(server.log.count == 50)
    }
}
