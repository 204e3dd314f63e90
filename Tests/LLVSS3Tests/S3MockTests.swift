import Foundation
import LLVS
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSS3
import LLVSSupport
import LLVSTestSupport
import Testing

/// `llvs-mock s3`, and the connector against it.
struct S3MockFixture {
    let mock: MockS3Server

    init(faults: MockFaults = MockFaults()) throws { mock = try MockS3Server(faults: faults) }
    init(mock: MockS3Server) { self.mock = mock }

    func fileSystem(prefix: String = "tests", http: HTTPClient = quickClient()) -> S3FileSystem {
        var configuration = S3Configuration(
            bucket: "llvs", prefix: prefix, region: "us-east-1", endpoint: mock.endpoint)
        configuration.simpleUploadLimit = 6 * 1024 * 1024
        configuration.partSize = S3Configuration.minimumPartSize
        configuration.pageSize = 100
        return S3FileSystem(
            configuration: configuration, http: http,
            credentials: SigV4(
                accessKeyID: mock.settings.accessKeyID, secretAccessKey: mock.settings.secretAccessKey,
                region: "us-east-1"))
    }
}

@Suite struct S3MockTests {
    /// The whole suite, its failure checks made by the mock (503 SlowDown for a rate limit; keys do not expire, and a
    /// refused key is the mock's 403).
    @Test func theConnectorConformsAgainstTheMock() async throws {
        let fixture = try S3MockFixture()
        defer { fixture.mock.stop() }
        let http = quickClient()
        var options = ConformanceOptions()
        options.faults = MockFaultControl(faults: fixture.mock.faults, rateLimitStatus: 503, client: http)
        options.largeFileSize = 11 * 1024 * 1024 + 12_345
        options.listingCount = 250
        await expectConformance(fixture.fileSystem(http: http), options: options, skippable: ["expired-token"])
        #expect(fixture.mock.keys(in: "llvs").isEmpty, "left behind: \(fixture.mock.keys(in: "llvs").prefix(5))")
        #expect(fixture.mock.openUploads == 0, "every multipart upload was completed or aborted")
    }

    /// Every failure `llvs-mock s3 --list-faults` names, met by the connector.
    @Test(arguments: MockS3Server.namedFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockS3Server.namedFaults[named: name])
        let fixture = try S3MockFixture()
        defer { fixture.mock.stop() }
        await expectNamedFaultHandled(
            fault, fileSystem: fixture.fileSystem(), faults: fixture.mock.faults,
            workload: NamedFaultWorkload(largeSize: 11 * 1024 * 1024 + 300), finalReason: "refused the keys")
    }

    /// `--state`: objects (small, spooled and multipart) survive a restart with their bytes and ETags; a removed one
    /// stays removed.
    @Test func aMockRestartedWithItsStateKeepsItsObjects() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-s3-state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let big = SeededGenerator.bytes(2 * 1024 * 1024 + 5, seed: 41)
        let multipart = SeededGenerator.bytes(7 * 1024 * 1024 + 3, seed: 42)
        var before: [String: CloudItem] = [:]
        do {
            let fixture = S3MockFixture(mock: try MockS3Server(state: try MockStateDirectory(folder)))
            defer { fixture.mock.stop() }
            let s3 = fixture.fileSystem()
            try await s3.upload(Data("small".utf8), to: "a/small.txt")
            try await s3.upload(big, to: "a/big.bin")
            try await s3.upload(multipart, to: "a/multipart.bin")
            try await s3.upload(Data("gone".utf8), to: "a/gone.txt")
            try await s3.removeFile("a/gone.txt")
            for item in try await s3.list("a") { before[item.name] = item }
        }
        let fixture = S3MockFixture(mock: try MockS3Server(state: try MockStateDirectory(folder)))
        defer { fixture.mock.stop() }
        let s3 = fixture.fileSystem()
        #expect(try await s3.download("a/small.txt") == Data("small".utf8))
        #expect(try await s3.download("a/big.bin") == big)
        #expect(try await s3.download("a/multipart.bin") == multipart)
        #expect(try await !s3.exists("a/gone.txt"))
        let after = try await s3.list("a")
        #expect(Set(after.map(\.name)) == ["small.txt", "big.bin", "multipart.bin"])
        for item in after {
            let earlier = before[item.name]
            #expect(
                item.size == earlier?.size && item.checksums == earlier?.checksums
                    && item.modified == earlier?.modified, "\(item)")
        }
    }

    /// A signature made with another secret is refused as SignatureDoesNotMatch: the mock checks SigV4.
    @Test func aWrongSecretIsRefused() async throws {
        let fixture = try S3MockFixture()
        defer { fixture.mock.stop() }
        await expectWrongSecretRefused(
            S3Configuration(bucket: "llvs", region: "us-east-1", endpoint: fixture.mock.endpoint),
            accessKeyID: fixture.mock.settings.accessKeyID, saying: "SignatureDoesNotMatch")
    }
}

/// The mock held to AWS's own Python SDK, boto3.
@Suite struct S3ClientLibraryTests {
    static let installed = ClientLibraries.installed("boto3")

    @Test(
        .enabled(
            if: installed || CIEnvironment.requiresEveryTest,
            "boto3 is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func boto3WorksAgainstTheMock() async throws {
        try #require(Self.installed, "boto3 is not installed (CI=true: every test must run)")
        let fixture = try S3MockFixture()
        defer { fixture.mock.stop() }
        let outcome = try await ClientLibraries.run(
            "s3_client_library.py",
            [
                fixture.mock.endpoint.absoluteString, fixture.mock.settings.accessKeyID,
                fixture.mock.settings.secretAccessKey,
            ])
        #expect(
            outcome.status == 0,
            "boto3 failed against the mock:\n\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
    }
}
