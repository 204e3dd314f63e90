import Foundation
import LLVS
import LLVSSupport
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
@testable import LLVSWebDAV
import Testing

@Suite struct WebDAVMockTests {
    /// A client that did not wait as long as a 429 asked (here: a wait record the client never writes to, as if it
    /// had retried at once) fails the rate-limit check.
    @Test func aClientThatDoesNotWaitFailsTheRateLimitCheck() async throws {
        let mock = try MockWebDAVServer()
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient())
        var options = ConformanceOptions()
        options.faults = MockFaultControl(faults: mock.faults, clientWaits: HTTPWaitRecord())
        options.largeFileSize = 1024 * 1024
        options.listingCount = 20
        let report = await ConformanceSuite.run(on: fileSystem, options: options)
        let rateLimit = report.results.first { $0.id == "rate-limit" }
        #expect(
            rateLimit?.status == .failed && rateLimit?.message?.contains("should have waited") == true,
            "\(String(describing: rateLimit))")
    }

    @Test(arguments: MockWebDAVServer.Flavor.allCases)
    func theConnectorConformsAgainstTheMock(flavor: MockWebDAVServer.Flavor) async throws {
        let mock = try MockWebDAVServer(flavor: flavor, user: "u", password: "p")
        defer { mock.stop() }
        let http = quickClient()
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: mock.url, authentication: .basic(user: "u", password: "p")),
            http: http)
        var options = ConformanceOptions()
        options.faults = MockFaultControl(faults: mock.faults, client: http)
        options.largeFileSize = 10 * 1024 * 1024
        await expectConformance(fileSystem, options: options, skippable: ["expired-token"])
        // The connector's folder of large bodies' temporaries may stay, empty, at the top of the remote.
        #expect(mock.paths.filter { $0 != ".llvs-uploads" }.isEmpty, "left behind: \(mock.paths.prefix(5))")
    }

    /// A first push into a folder not there yet: nginx answers the PUT with 500, Apache 409, rclone 404. Each is
    /// taken as "make the folder" after one attempt, never retried with backoff first; a remote whose own folder
    /// is missing is made too.
    @Test(arguments: MockWebDAVServer.Flavor.allCases)
    func aPutIntoAMissingFolderMakesItAfterOneAttempt(flavor: MockWebDAVServer.Flavor) async throws {
        let mock = try MockWebDAVServer(flavor: flavor)
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: mock.url.appendingPathComponent("new remote/", isDirectory: true)),
            http: quickClient())
        try await fileSystem.upload(Data("x".utf8), to: "versions/one")
        let puts = mock.log.filter { $0.method == "PUT" }
        #expect(puts.count == 2, "\(puts.map(\.status))")
        #expect(puts.first?.status == flavor.putParentMissingStatus)
        #expect(try await fileSystem.download("versions/one") == Data("x".utf8))
        #expect(mock.paths.contains("new remote/versions/one"))
    }

    /// Each flavour escapes hrefs its own way (nginx leaves `[ ] ( ) '` raw, rclone escapes `'`): names come back as
    /// they were written, under a base path that needs escaping too.
    @Test(arguments: MockWebDAVServer.Flavor.allCases)
    func namesSurviveEachServersWayOfEscapingHrefs(flavor: MockWebDAVServer.Flavor) async throws {
        let mock = try MockWebDAVServer(flavor: flavor)
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: mock.url.appendingPathComponent("sp ace[1]/", isDirectory: true)),
            http: quickClient())
        let names = ["brackets[]{}().txt", "it's 100%.txt", "a&b;c=d.txt"]
        for name in names { try await fileSystem.upload(Data(name.utf8), to: "b/" + name) }
        #expect(Set(try await fileSystem.listNames("b")) == Set(names))
        for name in names { #expect(try await fileSystem.download("b/" + name) == Data(name.utf8)) }
    }

    /// The whole suite, failure checks included, through the encryption layer (what an `--encrypt` remote does).
    @Test func theConnectorConformsThroughEncryption() async throws {
        let mock = try MockWebDAVServer(user: "u", password: "p")
        defer { mock.stop() }
        let http = quickClient()
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: mock.url, authentication: .basic(user: "u", password: "p")),
            http: http)
        var options = ConformanceOptions()
        options.faults = MockFaultControl(faults: mock.faults, client: http)
        options.largeFileSize = 3 * 1024 * 1024 + 12_345
        try await expectConformanceThroughEncryption(fileSystem, options: options, skippable: ["expired-token"])
        // This test twice met 501 for every request in a full run (never alone). The mock answers 501 only to a
        // method it does not know: if it says it answered none, another server took these requests on its port.
        let log = mock.log
        let refused = log.filter { $0.status == 501 }
        #expect(
            refused.isEmpty,
            "the mock (port \(mock.server.port), \(log.count) requests) answered 501 to \(refused.prefix(5).map { "\($0.method) \($0.target)" })"
        )
        #expect(
            log.count > 100,
            "the mock on port \(mock.server.port) saw only \(log.count) requests: another server answered in its place")
    }

    @Test func theConnectorConformsWhenOneRequestInTenFails() async throws {
        let mock = try MockWebDAVServer()
        defer { mock.stop() }
        mock.faults.injectRandomly(
            rate: 0.1, faults: [.status(500), .status(503, retryAfter: 1), .dropBeforeAnswer], seed: 11)
        let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient())
        var options = ConformanceOptions()
        options.listingCount = 400
        options.largeFileSize = 6 * 1024 * 1024
        await expectConformance(fileSystem, options: options, skippable: checksNeedingFaults)
        #expect(mock.log.filter { !$0.faults.isEmpty }.count > 50)
    }

    /// A large upload's MOVE from its temporary name that meets a 503, or whose answer is lost after the server
    /// did it, is sent again and the upload succeeds: the file holds the new bytes and no temporary is left.
    @Test(arguments: [MockFault.status(503), .dropBeforeAnswer])
    func aLargeUploadsMoveIsRepeatedAfterAFailure(fault: MockFault) async throws {
        let mock = try MockWebDAVServer()
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient())
        // Above the 256 KiB direct-PUT limit.
        let bytes = Data((0..<300 * 1024).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try await fileSystem.upload(Data("old".utf8), to: "d/big.bin")
        mock.faults.inject(fault) { $0.method == "MOVE" }
        try await fileSystem.upload(bytes, to: "d/big.bin")
        #expect(try await fileSystem.download("d/big.bin") == bytes)
        #expect(!mock.paths.contains { $0.hasPrefix(".llvs-uploads/") }, "left behind: \(mock.paths)")
        #expect(mock.log.filter { $0.method == "MOVE" }.count == 2)
    }

    @Test func foldersAreMadeOnlyWhereMissingAndRemembered() async throws {
        let mock = try MockWebDAVServer()
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient())
        for i in 0..<20 { try await fileSystem.upload(Data("\(i)".utf8), to: "a/b/c/file-\(i)") }
        #expect(mock.log.filter { $0.method == "MKCOL" }.count == 3)
        #expect(mock.log.filter { $0.method == "PROPFIND" }.isEmpty)
        // The first small PUT goes out before the folders exist, is refused (409), and is sent again after them.
        #expect(mock.log.filter { $0.method == "PUT" }.count == 21)
    }

    @Test func aMockRestartedWithItsStateKeepsItsFiles() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-mock-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = SeededGenerator.bytes(9 << 20, seed: 12)
        do {
            let mock = try MockWebDAVServer(state: try MockStateDirectory(folder))
            defer { mock.stop() }
            let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient())
            try await fileSystem.upload(Data("kept".utf8), to: "a/b/kept.txt")
            try await fileSystem.upload(big, to: "a/big.bin")
            try await fileSystem.makeFolder("empty")
            try await fileSystem.upload(Data("x".utf8), to: "gone/x.txt")
            try await fileSystem.removeFolder("gone")
        }
        let again = try MockWebDAVServer(state: try MockStateDirectory(folder))
        defer { again.stop() }
        let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: again.url), http: quickClient())
        #expect(try await fileSystem.download("a/b/kept.txt") == Data("kept".utf8))
        #expect(try await fileSystem.download("a/big.bin") == big)
        #expect(try await fileSystem.metadata("empty").isFolder)
        #expect(try await !fileSystem.exists("gone"))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: folder.appendingPathComponent("files").path).count == 2)
    }

    @Test func wrongCredentialsAreUnauthorized() async throws {
        let mock = try MockWebDAVServer(user: "u", password: "right")
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: mock.url, authentication: .basic(user: "u", password: "wrong")),
            http: quickClient())
        await #expect {
            _ = try await fileSystem.list("")
        } throws: { error in
            if case CloudFileSystemError.unauthorized = error { true } else { false }
        }
    }

    @Test func credentialsComeFromTheEnvironment() {
        #expect(
            WebDAVConfiguration.authentication(from: ["LLVS_WEBDAV_USER": "u", "LLVS_WEBDAV_PASSWORD": "p"])
                == .basic(user: "u", password: "p"))
        #expect(
            WebDAVConfiguration.authentication(from: ["LLVS_WEBDAV_USER": "u", "LLVS_WEBDAV_AUTH": "digest"])
                == .digest(user: "u", password: ""))
        #expect(WebDAVConfiguration.authentication(from: ["LLVS_WEBDAV_BEARER_TOKEN": "t"]) == .bearer(token: "t"))
        #expect(WebDAVConfiguration.authentication(from: [:]) == .none)
    }
}

/// Hostile and odd PROPFIND answers from a server that says whatever a test wants.
@Suite struct WebDAVHostileAnswerTests {
    func fileSystem(answering body: String, status: Int = 207) throws -> (WebDAVFileSystem, MockHTTPServer) {
        let server = try MockHTTPServer { _ in .text(status, body, contentType: "application/xml") }
        let configuration = WebDAVConfiguration(url: server.baseURL.appendingPathComponent("dav/"))
        return (WebDAVFileSystem(configuration: configuration, http: quickClient()), server)
    }

    func expectRefused(_ body: String, containing: String, limit: Int? = nil) async throws {
        let (fileSystem, server) = try fileSystem(answering: body)
        defer { server.stop() }
        var configured = fileSystem
        if let limit {
            var configuration = fileSystem.configuration
            configuration.maximumListingBytes = limit
            configured = WebDAVFileSystem(configuration: configuration, http: quickClient())
        }
        do {
            let items = try await configured.list("folder")
            Issue.record("expected a refusal, listed \(items)")
        } catch let error as CloudFileSystemError {
            #expect("\(error)".contains(containing), "\(error)")
        }
    }

    static func response(_ href: String, collection: Bool = false) -> String {
        "<D:response><D:href>\(href)</D:href><D:propstat><D:prop><D:resourcetype>\(collection ? "<D:collection/>" : "")</D:resourcetype><D:getcontentlength>3</D:getcontentlength></D:prop><D:status>HTTP/1.1 200 OK</D:status></D:propstat></D:response>"
    }

    static func multistatus(_ responses: String) -> String {
        #"<?xml version="1.0"?><D:multistatus xmlns:D="DAV:">"# + responses + "</D:multistatus>"
    }

    @Test func entityExpansionIsRefused() async throws {
        let laughs =
            #"<?xml version="1.0"?><!DOCTYPE m [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;"><!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">]>"#
            + #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/folder/&c;</D:href></D:response></D:multistatus>"#
        try await expectRefused(laughs, containing: "DTD")
    }

    @Test func anExternalEntityIsRefusedAndNoFileIsRead() async throws {
        let external =
            #"<?xml version="1.0"?><!DOCTYPE m [<!ENTITY x SYSTEM "file:///etc/passwd">]>"#
            + #"<D:multistatus xmlns:D="DAV:"><D:response><D:href>/dav/folder/&x;</D:href></D:response></D:multistatus>"#
        try await expectRefused(external, containing: "DTD")
        // An entity declared alone, at the very end of the answer, is found too.
        try await expectRefused(
            Self.multistatus(Self.response("/dav/folder/", collection: true)) + "<!ENTITY", containing: "DTD")
    }

    @Test func hrefsLeavingTheCollectionAreRefused() async throws {
        try await expectRefused(
            Self.multistatus(
                Self.response("/dav/folder/", collection: true) + Self.response("/dav/folder/../../etc/passwd")),
            containing: "outside the listed collection")
        try await expectRefused(
            Self.multistatus(
                Self.response("/dav/folder/", collection: true) + Self.response("http://evil.example/dav/folder/x")),
            containing: "another host")
        try await expectRefused(
            Self.multistatus(Self.response("/elsewhere/x")), containing: "outside the listed collection")
    }

    @Test func brokenXMLAndHugeAnswersAreClearErrors() async throws {
        try await expectRefused("<D:multistatus xmlns:D=\"DAV:\"><D:response>", containing: "not well-formed")
        try await expectRefused("<html>hello</html>", containing: "not a DAV: multistatus")
        let huge = Self.multistatus(String(repeating: Self.response("/dav/folder/x"), count: 20_000))
        try await expectRefused(huge, containing: "limit", limit: 100_000)
    }

    @Test func everyHrefFormIsUnderstood() async throws {
        // Full URLs and absolute paths, upper- and lowercase hex, &amp; and %26, the collection itself not first,
        // with and without a trailing slash, a default namespace, and mixed propstats.
        let body =
            #"<?xml version="1.0"?><multistatus xmlns="DAV:">"#
            + "<response><href>/dav/folder/a%20b%c3%a9.txt</href><propstat><prop><getcontentlength>3</getcontentlength><getetag>W/\"x\"</getetag></prop><status>HTTP/1.1 200 OK</status></propstat><propstat><prop><quota/></prop><status>HTTP/1.1 404 Not Found</status></propstat></response>"
            + "<response><href>HOST/dav/folder</href><propstat><prop><resourcetype><collection/></resourcetype></prop><status>HTTP/1.1 200 OK</status></propstat></response>"
            + "<response><href>/dav/folder/x%26y&amp;z</href><propstat><prop><getcontentlength>1</getcontentlength><getlastmodified>Wed, 27 Sep 2017 14:28:34 GMT</getlastmodified></prop><status>HTTP/1.1 200 OK</status></propstat></response>"
            + "<response><href>/dav/folder/sub%2Fdir/</href><propstat><prop><resourcetype><collection/></resourcetype></prop><status>HTTP/1.1 200 OK</status></propstat></response>"
            + "<response><href>/dav/folder/Caf%C3%A9</href><propstat><prop><resourcetype/></prop><status>HTTP/1.1 200 OK</status></propstat></response>"
            + "</multistatus>"
        let server = try MockHTTPServer { request in
            .text(
                207, body.replacingOccurrences(of: "HOST", with: "http://\(request.headers["Host"] ?? "")"),
                contentType: "application/xml")
        }
        defer { server.stop() }
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: server.baseURL.appendingPathComponent("dav/")), http: quickClient())
        let items = try await fileSystem.list("folder")
        let byName = Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0) })
        #expect(Set(byName.keys) == ["a béé.txt".replacingOccurrences(of: "éé", with: "é"), "x&y&z", "Café"])
        #expect(byName["a bé.txt"]?.size == 3)
        #expect(byName["x&y&z"]?.modified == Date(timeIntervalSince1970: 1_506_522_514))
    }
}

/// Apache, nginx and `rclone serve webdav` are installed by scripts/test; elsewhere a missing one is a skip that says
/// why. In CI they must be there: the tests run and fail.
let realServersMissing: String? = [
    RealWebDAVServer.apacheBinary, RealWebDAVServer.rcloneBinary, RealWebDAVServer.nginxBinary,
    RealWebDAVServer.phpBinary,
]
.lazy.compactMap(RealWebDAVServer.unavailable).first

@Suite(
    .serialized,
    .enabled(
        if: realServersMissing == nil || CIEnvironment.requiresEveryTest,
        "a real WebDAV server is missing (\(realServersMissing ?? "")); scripts/test installs Apache, nginx and rclone")
)
struct WebDAVRealServerTests {
    enum Kind: String, CaseIterable { case apache, nginx, rclone, sabre }

    func start(_ kind: Kind) async throws -> RealWebDAVServer {
        let binary =
            switch kind {
            case .apache: RealWebDAVServer.apacheBinary
            case .nginx: RealWebDAVServer.nginxBinary
            case .rclone: RealWebDAVServer.rcloneBinary
            case .sabre: RealWebDAVServer.phpBinary
            }
        if let reason = RealWebDAVServer.unavailable(binary) {
            throw CloudFileSystemError.server(status: 0, message: "CI must have \(kind.rawValue): \(reason)")
        }
        return switch kind {
        case .apache: try await RealWebDAVServer.apache()
        case .nginx: try await RealWebDAVServer.nginx()
        case .rclone: try await RealWebDAVServer.rclone()
        case .sabre: try await RealWebDAVServer.sabre()
        }
    }

    /// A remote whose own folder, and its parent, are not there yet, as a user's first push meets it (with a name
    /// that needs escaping and the brackets nginx writes raw in hrefs).
    func fileSystem(_ server: RealWebDAVServer, faults: HTTPFaultInjector? = nil) -> WebDAVFileSystem {
        let url = server.url.appendingPathComponent("not yet/sp ace[1]", isDirectory: true)
        return WebDAVFileSystem(
            configuration: WebDAVConfiguration(
                url: url, authentication: .basic(user: server.user, password: server.password)),
            http: quickClient(faults: faults))
    }

    @Test(arguments: Kind.allCases)
    func theConnectorConformsAgainstARealServer(kind: Kind) async throws {
        let server = try await start(kind)
        var options = ConformanceOptions()
        options.listingCount = 300
        // The failure checks too, with faults injected between the connector and the server (as `--faults` does);
        // a password does not expire, so only the expired-token check does not apply.
        let injector = HTTPFaultInjector()
        options.faults = HTTPFaultControl(injector: injector, renewsCredentials: false)
        await expectConformance(fileSystem(server, faults: injector), options: options, skippable: ["expired-token"])
        let injected = injector.injectedCounts
        #expect(
            injected[.rateLimited] == 1 && injected[.serviceUnavailable] == 1 && injected[.droppedAfterServerActed] == 6
                && injected[.droppedMidBody] == 2
                && injected[.revoked] == 1, "faults met: \(injected)")
    }

    /// The port Apache is given is taken by another test's mock (which answers every request) before Apache binds
    /// it: the start is not fooled by the mock's answers, and Apache comes up on another port, serving its own folder.
    @Test func aServerWhosePortIsTakenStartsOnAnotherAndIsNotConfusedWithWhatAnswersThere() async throws {
        if let reason = RealWebDAVServer.unavailable(RealWebDAVServer.apacheBinary) {
            throw CloudFileSystemError.server(status: 0, message: reason)
        }
        let squatter = try MockWebDAVServer()
        defer { squatter.stop() }
        let server = try await RealWebDAVServer.apache(firstPort: UInt16(squatter.url.port!))
        #expect(server.url.port != squatter.url.port)
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(
                url: server.url, authentication: .basic(user: server.user, password: server.password)),
            http: quickClient())
        try await fileSystem.upload(Data("apache".utf8), to: "proof.txt")
        #expect(
            FileManager.default.contents(atPath: server.dataFolder.appendingPathComponent("proof.txt").path)
                == Data("apache".utf8))
        #expect(
            try await fileSystem.listNames("").filter { $0.hasPrefix(".llvs-ready") }.isEmpty,
            "the readiness file is removed")
    }

    @Test(arguments: Kind.allCases)
    func storesConvergeAndASnapshotBootstrapsAThirdStore(kind: Kind) async throws {
        let server = try await start(kind)
        try await convergeAndBootstrap(through: fileSystem(server))
    }
}

@Suite struct WebDAVSyncTests {
    @Test func storesConvergeThroughTheMockAndASnapshotBootstrapsAThirdStore() async throws {
        let mock = try MockWebDAVServer()
        defer { mock.stop() }
        try await convergeAndBootstrap(
            through: WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient()))
    }
}

@Suite struct WebDAVIntegrityTests {
    /// WebDAV reports no checksum, so the suite downloads and hashes: a connector that reads back other bytes fails.
    @Test func withNoChecksumDeclaredTheIntegrityCheckReadsTheBytesBack() async throws {
        let mock = try MockWebDAVServer()
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(configuration: WebDAVConfiguration(url: mock.url), http: quickClient())
        #expect(fileSystem.capabilities.checksums.isEmpty)
        var options = ConformanceOptions()
        options.listingCount = 10
        options.largeFileSize = 1024
        let lying = await ConformanceSuite.run(on: MisreportingFileSystem(fileSystem, lie: .contents), options: options)
        let integrity = try #require(lying.results.first { $0.id == "integrity" })
        #expect(integrity.status == .failed)
        #expect(integrity.message?.contains("bytes read back") == true, "\(integrity.message ?? "")")
        // The large-file checks compare what came back by size and SHA-256, read in pieces: a flipped byte fails them.
        for id in ["large-file", "large-overwrite"] {
            let check = try #require(lying.results.first { $0.id == id })
            #expect(check.status == .failed, "\(id): \(check.message ?? "")")
        }
    }
}

@Suite struct WebDAVAuthenticationTests {
    /// Over plain HTTP every request carries its Basic credentials the first time: no request is sent twice.
    @Test func basicCredentialsGoWithTheFirstRequest() async throws {
        let mock = try MockWebDAVServer(user: "u", password: "p")
        defer { mock.stop() }
        let fileSystem = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: mock.url, authentication: .basic(user: "u", password: "p")),
            http: quickClient())
        try await fileSystem.upload(Data("one".utf8), to: "a/b/one.txt")
        #expect(try await fileSystem.download("a/b/one.txt") == Data("one".utf8))
        #expect(try await fileSystem.list("a/b").map(\.name) == ["one.txt"])
        try await fileSystem.removeFolder("a")
        let log = mock.log
        #expect(!log.contains { $0.status == 401 }, "challenged: \(log.filter { $0.status == 401 }.map(\.method))")
        #expect(log.allSatisfy { $0.headers["Authorization"]?.hasPrefix("Basic ") == true })
    }
}

/// nginx writes `[ ] ( ) '` raw in hrefs and escapes the rest; Foundation's URL refuses the raw ones and, escaped
/// again, turns `%7B` into `%257B`. The connector reads hrefs itself.
@Suite struct WebDAVHrefTests {
    @Test func rawAndEscapedCharactersDecodeOnceWhateverTheServerEscaped() {
        #expect(
            Href("/dav/sp%20ace[1]/brackets[]%7B%7D().txt", relativeTo: "/dav/").segments == [
                "dav", "sp ace[1]", "brackets[]{}().txt",
            ])
        #expect(Href("/dav/it's%2520", relativeTo: "/dav/").segments == ["dav", "it's%20"], "one decoding only")
        #expect(
            Href("/dav/100%", relativeTo: "/dav/").segments == ["dav", "100%"], "a malformed escape is kept as written")
        #expect(
            Href("/dav/x%A9%80", relativeTo: "/dav/").segments == ["dav", "x%A9%80"],
            "so are escapes of bytes that are not UTF-8")
        #expect(Href("a%20b", relativeTo: "/dav/x/").path == "/dav/x/a b")
        #expect(Href("/dav/x/?q=1#f", relativeTo: "/").path == "/dav/x")
    }

    /// URL syntax is bytes: a raw combining mark after a `/`, `?` or `#` (one Character with it) leaves it a delimiter.
    @Test func delimitersFollowedByCombiningMarksStillDelimit() {
        #expect(Href("/dav/e/\u{301}t\u{E9}", relativeTo: "/").segments == ["dav", "e", "\u{301}t\u{E9}"])
        #expect(Href("/dav/x?\u{301}q", relativeTo: "/").path == "/dav/x")
        #expect(Href("/dav/x#\u{301}", relativeTo: "/").path == "/dav/x")
    }

    /// The byte-level decoding agrees with Foundation's `removingPercentEncoding` (which it replaced for speed) on
    /// escapes valid and malformed, UTF-8 whole and broken, and raw non-ASCII; except that where Foundation turns
    /// some broken UTF-8 into U+FFFD (`%A9`, though `%80` gives nil), the segment is kept as written, not made lossy.
    @Test func segmentsDecodeAsFoundationDecodesThem() {
        var generator = SeededGenerator(seed: 11)
        let pieces = [
            "a", "Z", "0", " ", "%", "%2", "%20", "%25", "%2F", "%2f", "%C3", "%A9", "%c3%a9", "%E3%83%87", "%FF",
            "%80",
            "%00", "%G1", "%4", "é", "デ", "[", "'", "+", ":",
        ]
        var disagreements: [String] = []
        for _ in 0..<3000 {
            let segment = (0..<Int.random(in: 1...8, using: &generator)).map { _ in
                pieces.randomElement(using: &generator)!
            }.joined()
            let foundation = segment.removingPercentEncoding
            let expected = foundation?.unicodeScalars.contains("\u{FFFD}") == true ? nil : foundation
            if Href.percentDecoded(Substring(segment)) != expected { disagreements.append(segment) }
        }
        #expect(disagreements.isEmpty, "\(disagreements.prefix(5))")
    }

    @Test func onlyARealSchemeMakesAnHrefAbsolute() {
        #expect(Href("/dav/a://b", relativeTo: "/").scheme == nil)
        #expect(Href("/dav/a://b", relativeTo: "/").segments == ["dav", "a:", "b"])
        #expect(Href("svn+ssh://h/x", relativeTo: "/").scheme == "svn+ssh")
        #expect(Href("1http://h/x", relativeTo: "/dav/").scheme == nil)
        #expect(Href("://h/x", relativeTo: "/dav/").scheme == nil)
    }

    @Test func absoluteHrefsAreOnTheServerOnlyWithTheSameSchemeHostAndPort() throws {
        let listed = try #require(URL(string: "http://127.0.0.1:8080/dav/"))
        #expect(Href("http://127.0.0.1:8080/dav/a", relativeTo: "/dav/").isOnServer(of: listed))
        #expect(Href("HTTP://user@127.0.0.1:8080/dav/a", relativeTo: "/dav/").isOnServer(of: listed))
        #expect(!Href("http://127.0.0.1:9090/dav/a", relativeTo: "/dav/").isOnServer(of: listed))
        #expect(!Href("https://127.0.0.1:8080/dav/a", relativeTo: "/dav/").isOnServer(of: listed))
        #expect(!Href("http://evil.example/dav/a", relativeTo: "/dav/").isOnServer(of: listed))
        let plain = try #require(URL(string: "https://dav.example.com/x/"))
        #expect(Href("https://dav.example.com:443/x/a", relativeTo: "/x/").isOnServer(of: plain))
        #expect(Href("http://[::1]:80/x", relativeTo: "/").host == "::1")
    }
}
