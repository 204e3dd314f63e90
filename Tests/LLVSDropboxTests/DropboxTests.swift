import Foundation
import LLVS
import LLVSSupport
import LLVSTestSupport
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSDropbox
import Synchronization
import Testing

@Suite struct DropboxConformanceTests {
    @Test func theConnectorConformsAgainstTheMock() async throws {
        let fixture = try DropboxFixture { $0.pageSize = 100 }
        var options = ConformanceOptions()
        options.faults = dropboxFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 9 * 1024 * 1024 + 12_345
        options.listingCount = 250
        await expectConformance(fixture.fileSystem, options: options)
        #expect(fixture.mock.paths.isEmpty, "left behind: \(fixture.mock.paths.prefix(5))")
        #expect(!fixture.requests(containing: "upload_session/append_v2").isEmpty, "the large file goes in a session")
        #expect(!fixture.requests(containing: "list_folder/continue").isEmpty, "a listing needed a second page")
    }

    /// The whole suite, failure checks included, through the encryption layer (what an `--encrypt` remote does).
    @Test func theConnectorConformsThroughEncryption() async throws {
        let fixture = try DropboxFixture { $0.pageSize = 100 }
        var options = ConformanceOptions()
        options.faults = dropboxFaultControl(mock: fixture.mock, http: fixture.http)
        options.largeFileSize = 5 * 1024 * 1024 + 12_345
        options.listingCount = 250
        try await expectConformanceThroughEncryption(fixture.fileSystem, options: options)
    }

    @Test func theConnectorConformsWhenOneRequestInTenFails() async throws {
        let fixture = try DropboxFixture { $0.pageSize = 100 }
        fixture.mock.faults.injectRandomly(
            rate: 0.1,
            faults: [.status(429, retryAfter: 0), .status(503, retryAfter: 0), .status(500), .dropBeforeAnswer], seed: 3
        )
        var options = ConformanceOptions()
        options.largeFileSize = 9 * 1024 * 1024
        options.listingCount = 250
        // The random faults stand in for the failure checks' own, which need a fault control.
        await expectConformance(fixture.fileSystem, options: options, skippable: checksNeedingFaults)
        #expect(fixture.mock.log.filter { !$0.faults.isEmpty }.count > 20, "faults were injected")
    }
}

@Suite struct DropboxBehaviourTests {
    /// 100 MiB through an upload session of 48 MiB appends (the connector's default), with the answer to the second
    /// append lost after the mock stored it: the connector asks the session (an empty append), meets
    /// `incorrect_offset`, carries on from `correct_offset`, and no acknowledged byte is sent twice.
    @Test func aHundredMebibyteValueGoesUpInASessionThroughALostAnswer() async throws {
        let fixture = try DropboxFixture {
            $0.simpleUploadLimit = DropboxConfiguration().simpleUploadLimit
            $0.chunkSize = DropboxConfiguration().chunkSize
        }
        let source = fixture.directory.appendingPathComponent("big.bin")
        FileManager.default.createFile(atPath: source.path, contents: nil)
        let handle = try FileHandle(forWritingTo: source)
        for index in 0..<25 { handle.write(SeededGenerator.bytes(4 * 1024 * 1024, seed: UInt64(index))) }
        try handle.close()
        let appendsSeen = Mutex(0)
        fixture.mock.faults.inject(.dropBeforeAnswer, times: 1) { request in
            guard request.path.hasSuffix("/append_v2") else { return false }
            return appendsSeen.withLock {
                $0 += 1
                return $0 == 2
            }
        }
        try await fixture.fileSystem.upload(fileAt: source, to: "big/file.bin")
        let expected = try ChecksumStream.text(ofFileAt: source, .dropboxContentHash)
        #expect(fixture.mock.contentHash(of: "big/file.bin") == expected)
        #expect(
            try await fixture.fileSystem.metadata("big/file.bin").checksums[.dropboxContentHash] == expected)
        let sent = fixture.mock.uploadSessionBytes.reduce(0, +)
        #expect(sent == 100 * 1024 * 1024, "bytes sent to the session: \(sent)")
        let offsets = fixture.requests(containing: "append_v2").compactMap { entry -> Int64? in
            guard let arg = entry.headers["Dropbox-API-Arg"],
                let object = try? JSONSerialization.jsonObject(with: Data(arg.utf8)) as? [String: Any],
                let cursor = object["cursor"] as? [String: Any]
            else { return nil }
            return (cursor["offset"] as? NSNumber)?.int64Value
        }
        #expect(zip(offsets, offsets.dropFirst()).allSatisfy { $0 <= $1 }, "the upload went back: \(offsets)")
        #expect(offsets.count == 4, "three pieces and one look at the session: \(offsets)")
    }

    /// A finish whose answer is lost: the session is gone when it is sent again, and the file there (with this
    /// data's content hash) is taken as the upload's result instead of sending everything again.
    @Test func aFinishWhoseAnswerIsLostIsSettledByTheFileThere() async throws {
        let fixture = try DropboxFixture()
        let data = SeededGenerator.bytes(5 * 1024 * 1024, seed: 8)
        fixture.mock.faults.inject(.dropBeforeAnswer, times: 1) { $0.path.hasSuffix("/upload_session/finish") }
        try await fixture.fileSystem.upload(data, to: "f/lost-finish.bin")
        #expect(try await fixture.fileSystem.download("f/lost-finish.bin") == data)
        #expect(
            fixture.requests(containing: "upload_session/start").count == 1,
            "one session: \(fixture.mock.log.map { "\($0.target) \($0.status ?? 0)" })")
        #expect(fixture.mock.log.contains { $0.target.hasSuffix("/upload_session/finish") && !$0.faults.isEmpty })
        #expect(fixture.mock.uploadSessionBytes.reduce(0, +) == Int64(data.count))
    }

    /// Non-ASCII names travel in `Dropbox-API-Arg` as `\uXXXX` (the mock refuses a header with anything else), come
    /// back as written in listings and downloads, and names differing only in case are one item.
    @Test func namesTravelHeaderSafeAndCaseIsIgnored() async throws {
        let fixture = try DropboxFixture()
        let fs = fixture.fileSystem
        let names = ["ünïcødé 世界.txt", "😀 emoji", "back\\slash", "trailing "]
        for name in names { try await fs.upload(Data(name.utf8), to: "names/\(name)") }
        #expect(Set(try await fs.listNames("names")) == Set(names))
        for name in names { #expect(try await fs.download("names/\(name)") == Data(name.utf8)) }
        #expect(try await fs.read("names/😀 emoji", range: .bytes(0, 3)) == Data("😀".utf8))
        #expect(
            fixture.mock.log.compactMap { $0.headers["Dropbox-API-Arg"] }.allSatisfy {
                $0.unicodeScalars.allSatisfy { $0.isASCII }
            })
        try await fs.upload(Data("upper".utf8), to: "Names/CASE.txt")
        #expect(try await fs.download("names/case.txt") == Data("upper".utf8))
        #expect(try await fs.listNames("NAMES").contains("CASE.txt"))
    }

    /// Dropbox checks the content hash sent with an upload: bytes damaged on the way are refused, not stored.
    @Test func anUploadWhoseBytesDoNotMatchItsHashIsRefused() async throws {
        let fixture = try DropboxFixture()
        fixture.mock.faults.inject(
            .answer(
                status: 409, headers: ["Content-Type": "application/json"],
                body: Data(
                    #"{"error_summary": "content_hash_mismatch/..", "error": {".tag": "content_hash_mismatch"}}"#.utf8)),
            times: 1
        ) { $0.path.hasSuffix("/files/upload") }
        await #expect(throws: CloudFileSystemError.self) {
            try await fixture.fileSystem.upload(Data("damaged".utf8), to: "h/file.txt")
        }
        #expect(try await fixture.fileSystem.exists("h/file.txt") == false)
    }
}

@Suite struct DropboxMockStateTests {
    /// `--state`: files, folders and tokens survive a restart; a cursor from before it is `reset` (the journal is not
    /// kept), so a sync lists in full.
    @Test func aDropboxMockRestartedWithItsStateKeepsTheAccountAndTheTokens() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-dropbox-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let tokenFile = TokenFile(path: folder.appendingPathExtension("token").path)
        defer { try? FileManager.default.removeItem(atPath: tokenFile.path) }
        let big = SeededGenerator.bytes(5 * 1024 * 1024 + 11, seed: 31)
        func connect(_ mock: MockDropboxServer) -> DropboxFileSystem {
            DropboxFixture.connector(
                mock, http: quickClient(),
                tokens: OAuthTokenSource(
                    file: tokenFile, configuration: DropboxFixture.oauth(mock), http: quickClient(),
                    reauthorizeCommand: "llvs auth dropbox"))
        }
        let cursor: String
        do {
            let mock = try MockDropboxServer(state: try MockStateDirectory(folder))
            defer { mock.stop() }
            try tokenFile.write(mock.issueToken())
            let dropbox = connect(mock)
            try await dropbox.upload(Data("small".utf8), to: "a/small.txt")
            try await dropbox.upload(big, to: "a/big.bin")
            try await dropbox.upload(Data("gone".utf8), to: "a/gone.txt")
            try await dropbox.removeFile("a/gone.txt")
            cursor = try await dropbox.changeCursor(watching: ["a"])
        }
        let again = try MockDropboxServer(state: try MockStateDirectory(folder))
        defer { again.stop() }
        let dropbox = connect(again)
        #expect(try await dropbox.download("a/small.txt") == Data("small".utf8))
        #expect(try await dropbox.download("a/big.bin") == big)
        #expect(try await !dropbox.exists("a/gone.txt"))
        #expect(Set(try await dropbox.listNames("A")) == ["small.txt", "big.bin"])
        #expect(again.oauth.refreshCount == 0, "the saved access token is still accepted")
        await expectCursorExpired { _ = try await dropbox.changes(in: ["a"], since: cursor) }
    }
}
