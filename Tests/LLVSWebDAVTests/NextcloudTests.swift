import Foundation
import LLVS
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSSupport
import LLVSTestSupport
import LLVSWebDAV
import Testing

/// The connector against the Nextcloud mock: recognized from its files URL, large files in chunks (v2) whatever
/// the proxy's body limit, the SHA-1 it sends kept and listed, and Nextcloud's failures met.
@Suite struct NextcloudTests {
    func connector(
        _ mock: MockWebDAVServer, password: String = "p", chunkSize: Int64? = nil, http: HTTPClient = quickClient()
    ) -> WebDAVFileSystem {
        var configuration = WebDAVConfiguration(url: mock.url, authentication: .basic(user: "llvs", password: password))
        if let chunkSize { configuration.nextcloudChunkSize = chunkSize }
        return WebDAVFileSystem(configuration: configuration, http: http)
    }

    @Test func theLayoutIsRecognizedFromAFilesURL() throws {
        let layout = try #require(
            NextcloudLayout(filesURL: URL(string: "https://cloud.example/nc/remote.php/dav/files/ada/Notes/llvs")!))
        #expect(layout.uploadsURL.absoluteString == "https://cloud.example/nc/remote.php/dav/uploads/ada/")
        #expect(layout.serverURL.absoluteString == "https://cloud.example/nc")
        #expect(
            NextcloudLayout(filesURL: URL(string: "http://127.0.0.1:8080/remote.php/dav/files/ada/")!)?.serverURL
                .absoluteString == "http://127.0.0.1:8080")
        #expect(NextcloudLayout(filesURL: URL(string: "https://cloud.example/remote.php/webdav/Notes")!) == nil)
        #expect(NextcloudLayout(filesURL: URL(string: "https://dav.example/dav/")!) == nil)
    }

    @Test(arguments: [false, true])
    func theConnectorConformsAgainstTheMock(withFaults: Bool) async throws {
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        let http = quickClient()
        // Chunks of 1 MiB, so the suite's large files go up in several.
        let fileSystem = connector(mock, chunkSize: 1024 * 1024, http: http)
        #expect(fileSystem.capabilities.checksums == [.sha1])
        var options = ConformanceOptions()
        options.largeFileSize = 3 * 1024 * 1024 + 123
        if withFaults {
            options.faults = MockFaultControl(faults: mock.faults, client: http)
            await expectConformance(fileSystem, options: options, skippable: ["expired-token"])
        } else {
            await expectConformance(fileSystem, options: options, skippable: ConformanceSuite.checksNeedingFaults)
        }
        // The connector's folder of large bodies' temporaries may stay, empty, at the top of the remote.
        #expect(mock.paths.filter { $0 != ".llvs-uploads" }.isEmpty, "left behind: \(mock.paths.prefix(5))")
    }

    /// A 30 MiB file through a proxy that refuses bodies over 10 MiB: in chunks, whole, with its SHA-1 listed.
    @Test func aLargeFilePassesAProxysBodyLimitInChunks() async throws {
        var settings = MockNextcloudSettings()
        settings.maximumBody = 10 * 1024 * 1024
        let mock = try MockWebDAVServer.nextcloud(settings, password: "p")
        defer { mock.stop() }
        let fileSystem = connector(mock)
        let large = Data((0..<(30 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 13) })
        try await fileSystem.upload(large, to: "values/large.bin")
        #expect(try await fileSystem.download("values/large.bin") == large)
        let item = try await fileSystem.metadata("values/large.bin")
        #expect(item.checksums[.sha1] == DigestStream.hex(large, .sha1))
        let puts = mock.server.log.filter { $0.method == "PUT" }
        #expect(
            puts.count == 3 && puts.allSatisfy { $0.target.contains("/remote.php/dav/uploads/llvs/") },
            "\(puts.map(\.target))")
        #expect(!mock.server.log.contains { $0.status == 413 })
    }

    /// A proxy whose limit is below the chunk size: the first chunk's 413 halves the chunk size until chunks pass,
    /// and the upload completes; so does a plain PUT the proxy refuses.
    @Test func aChunkTooLargeForTheProxyIsSentAgainSmaller() async throws {
        var settings = MockNextcloudSettings()
        settings.maximumBody = 3 * 1024 * 1024
        let mock = try MockWebDAVServer.nextcloud(settings, password: "p")
        defer { mock.stop() }
        let fileSystem = connector(mock, chunkSize: 8 * 1024 * 1024)
        let large = Data((0..<(20 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await fileSystem.upload(large, to: "large.bin")
        #expect(try await fileSystem.download("large.bin") == large)
        let middle = Data((0..<(5 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try await fileSystem.upload(middle, to: "middle.bin")
        #expect(try await fileSystem.download("middle.bin") == middle)
        #expect(mock.server.log.contains { $0.status == 413 })
        #expect(!mock.paths.contains { $0.hasPrefix(".llvs-uploads/") }, "left behind: \(mock.paths)")
    }

    /// Bodies below the chunk size that the proxy refuses, as the first upload of a connector, go in chunks of half
    /// their size. One no larger than the smallest chunk cannot be cut smaller, and fails naming the body limit.
    @Test(arguments: [5 * 1024 * 1024, 600 * 1024])
    func aBodyBelowTheChunkSizeThatTheProxyRefusesGoesInChunks(size: Int) async throws {
        var settings = MockNextcloudSettings()
        settings.maximumBody = Int64(size / 2)
        let mock = try MockWebDAVServer.nextcloud(settings, password: "p")
        defer { mock.stop() }
        let fileSystem = connector(mock)
        let data = Data((0..<size).map { UInt8(truncatingIfNeeded: $0 &* 11) })
        try await fileSystem.upload(data, to: "values/file.bin")
        #expect(try await fileSystem.download("values/file.bin") == data)
        #expect(mock.server.log.contains { $0.status == 413 })
        #expect(mock.paths.sorted() == [".llvs-uploads", "values", "values/file.bin"], "\(mock.paths)")

        let small = Data(count: 200 * 1024)
        var tight = MockNextcloudSettings()
        tight.maximumBody = 100 * 1024
        let strict = try MockWebDAVServer.nextcloud(tight, password: "p")
        defer { strict.stop() }
        await #expect {
            try await connector(strict).upload(small, to: "small.bin")
        } throws: { error in
            "\(error)".contains("body limit")
        }
    }

    @Test func aFullQuotaSaysHowMuchWasNeededAndIsLeft() async throws {
        var settings = MockNextcloudSettings()
        settings.quota = 4 * 1024 * 1024
        let mock = try MockWebDAVServer.nextcloud(settings, password: "p")
        defer { mock.stop() }
        let fileSystem = connector(mock, chunkSize: 1024 * 1024)
        try await fileSystem.upload(Data(count: 3 * 1024 * 1024), to: "first.bin")
        await #expect {
            try await fileSystem.upload(Data(count: 2 * 1024 * 1024), to: "second.bin")
        } throws: { error in
            guard case CloudFileSystemError.quotaExceeded(let message) = error else { return false }
            return message.contains("2097152 required") && message.contains("available")
        }
        #expect(!mock.paths.contains("second.bin"))
    }

    /// Each step of a chunked upload done by the server with its answer lost (the connection dropped before it):
    /// the MKCOL, a chunk and the assembly are sent again, and the upload completes with the file whole.
    @Test(arguments: ["MKCOL", "PUT", "MOVE"])
    func aChunkedUploadSurvivesALostAnswerAtEachStep(method: String) async throws {
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        let fileSystem = connector(mock, chunkSize: 1024 * 1024)
        try await fileSystem.makeFolder("d")
        mock.faults.inject(.dropBeforeAnswer) { $0.method == method && $0.path.contains("/remote.php/dav/uploads/") }
        let large = Data((0..<(3 * 1024 * 1024 + 5)).map { UInt8(truncatingIfNeeded: $0 &* 5) })
        try await fileSystem.upload(large, to: "d/large.bin")
        #expect(try await fileSystem.download("d/large.bin") == large)
        #expect(
            mock.server.log.filter { $0.method == method && $0.target.contains("/remote.php/dav/uploads/") }.count >= 2,
            "the step was sent again")
    }

    /// An assembly that answers 423 while the server merges, then finds the upload gone: the file is in place.
    @Test func anAssemblyStillLockedWhenAnsweredIsFoundDone() async throws {
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        mock.faults.inject(try #require(MockWebDAVServer.nextcloudFaults[named: "assembly-locked"]), at: 1)
        let fileSystem = connector(mock, chunkSize: 1024 * 1024)
        let large = Data((0..<(3 * 1024 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* 3) })
        try await fileSystem.upload(large, to: "large.bin")
        #expect(try await fileSystem.download("large.bin") == large)
        #expect(mock.server.log.contains { $0.status == 423 })
    }

    @Test(arguments: MockWebDAVServer.nextcloudFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockWebDAVServer.nextcloudFaults[named: name])
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        await expectNamedFaultHandled(
            fault, fileSystem: connector(mock, chunkSize: 512 * 1024), faults: mock.faults,
            workload: NamedFaultWorkload(largeSize: 1024 * 1024 + 17),
            finalReason: ["insufficient-storage": "no room", "too-large": "body limit"][name])
    }

    /// SEARCH as Nextcloud answers it (by file ID: NextcloudClientLibraryTests): `like` with `%` and `_`, sizes, an unknown
    /// property refused, and a pattern built to make a backtracking matcher take for ever answered like any other.
    @Test func searchFindsByNameAndSizeAndRefusesWhatItCannot() async throws {
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        let fileSystem = connector(mock)
        try await fileSystem.upload(Data(count: 10), to: "s/abc.txt")
        try await fileSystem.upload(Data(count: 5000), to: "s/axc.bin")
        try await fileSystem.upload(Data(count: 20), to: "s/deep/abd.txt")
        let http = quickClient()
        func search(_ condition: String, depth: String = "infinity") async throws -> (status: Int, names: [String]) {
            let body =
                #"<?xml version="1.0"?><d:searchrequest xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns"><d:basicsearch>"#
                + #"<d:select><d:prop><d:displayname/><oc:fileid/></d:prop></d:select>"#
                + #"<d:from><d:scope><d:href>/files/llvs/s</d:href><d:depth>\#(depth)</d:depth></d:scope></d:from>"#
                + "<d:where>\(condition)</d:where></d:basicsearch></d:searchrequest>"
            var request = HTTPRequest(method: "SEARCH", url: mock.serverURL.appendingPathComponent("remote.php/dav/"))
            request.body = .data(Data(body.utf8))
            request.credentials = HTTPCredentials(user: "llvs", password: "p", scheme: .basic)
            let response = try await http.send(request)
            let names = response.text.components(separatedBy: "<d:href>").dropFirst().compactMap {
                $0.components(separatedBy: "</d:href>").first?.split(separator: "/").last.map(String.init)
            }
            return (response.status, names.sorted())
        }
        func like(_ pattern: String) -> String {
            "<d:like><d:prop><d:displayname/></d:prop><d:literal>\(pattern)</d:literal></d:like>"
        }
        #expect(try await search(like("a_c%")) == (207, ["abc.txt", "axc.bin"]))
        #expect(try await search(like("%.TXT")) == (207, ["abc.txt", "abd.txt"]))
        #expect(try await search(like("%.txt"), depth: "1") == (207, ["abc.txt"]))
        #expect(
            try await search("<d:gt><d:prop><oc:size/></d:prop><d:literal>100</d:literal></d:gt>") == (207, ["axc.bin"])
        )
        #expect(try await search("<d:not>" + like("%.txt") + "</d:not>").names == ["axc.bin", "deep"])
        #expect(try await search("<d:eq><d:prop><oc:nothing/></d:prop><d:literal>1</d:literal></d:eq>").status == 400)
        let hostile = String(repeating: "%a", count: 40) + "b"
        #expect(try await search(like(hostile)) == (207, []))
    }

    @Test func anAppPasswordFromLoginFlowSignsIn() async throws {
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        let http = quickClient()
        let started = try await http.send(
            HTTPRequest(method: "POST", url: mock.serverURL.appendingPathComponent("index.php/login/v2")))
        let flow = try #require(try JSONSerialization.jsonObject(with: started.body) as? [String: Any])
        let poll = try #require(flow["poll"] as? [String: String])
        let login = try #require((flow["login"] as? String).flatMap(URL.init(string:)))
        func pollOnce() async throws -> HTTPResponse {
            var request = HTTPRequest(method: "POST", url: try #require(poll["endpoint"].flatMap(URL.init(string:))))
            request.body = .data(FormEncoding.encode([("token", try #require(poll["token"]))]))
            request.headers["Content-Type"] = "application/x-www-form-urlencoded"
            return try await http.send(request)
        }
        #expect(try await pollOnce().status == 404)
        #expect(try await http.send(HTTPRequest(method: "POST", url: login)).status == 200)
        let granted = try await pollOnce()
        let answer = try #require(try JSONSerialization.jsonObject(with: granted.body) as? [String: String])
        let password = try #require(answer["appPassword"])
        #expect(answer["loginName"] == "llvs" && granted.status == 200)
        #expect(try await pollOnce().status == 404, "a granted token is spent")
        let fileSystem = connector(mock, password: password)
        try await fileSystem.upload(Data("signed in".utf8), to: "hello.txt")
        await #expect(throws: CloudFileSystemError.self) { try await connector(mock, password: "wrong").list("") }
    }

    /// A hostile server that names a poll endpoint (or login address) on another port, host or scheme: the flow stops
    /// before its token goes there. A grant to another user than the files URL's is refused; the timeout message says
    /// seconds when it is seconds.
    @Test(arguments: ["http://127.0.0.1:1/poll", "https://SERVER/poll", "http://elsewhere.example/poll"])
    func aLoginFlowOnAnotherOriginIsRefused(endpoint: String) async throws {
        let server = try MockHTTPServer { request in
            let base = "http://127.0.0.1:\(request.headers["Host"]?.split(separator: ":").last ?? "")"
            return .json(
                200,
                [
                    "poll": [
                        "token": "t", "endpoint": endpoint.replacingOccurrences(of: "SERVER", with: base.dropFirst(7)),
                    ],
                    "login": base + "/login/v2/flow/x",
                ])
        }
        defer { server.stop() }
        let flow = NextcloudLoginFlow(server: server.baseURL, http: quickClient())
        do {
            _ = try await flow.start()
            Issue.record("a poll endpoint at \(endpoint) was taken")
        } catch let failure as NextcloudLoginFlow.Failure {
            guard case .foreignAddress = failure else { Issue.record("\(failure)"); return }
        }
        #expect(server.log.count == 1, "nothing was sent to the endpoint")
    }

    @Test func aGrantToAnotherUserIsRefusedAndTheTimeoutIsSaidInSeconds() async throws {
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        let flow = NextcloudLoginFlow(server: mock.serverURL, http: quickClient())
        let started = try await flow.start()
        await #expect(throws: NextcloudLoginFlow.Failure.notGranted(after: .seconds(1))) {
            _ = try await flow.waitForGrant(started, every: .milliseconds(300), timeout: .seconds(1))
        }
        #expect(NextcloudLoginFlow.Failure.notGranted(after: .seconds(5)).description.contains("within 5 seconds"))
        #expect(try await quickClient().send(HTTPRequest(method: "POST", url: started.login)).status == 200)
        await #expect(throws: NextcloudLoginFlow.Failure.otherUser(granted: "llvs", expected: "ada")) {
            _ = try await flow.waitForGrant(started, every: .milliseconds(100), timeout: .seconds(30), user: "ada")
        }
    }
}
