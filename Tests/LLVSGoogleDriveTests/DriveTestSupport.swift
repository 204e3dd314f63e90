import Foundation
import LLVS
import LLVSConformance
import LLVSGoogleDrive
import LLVSHTTP
import LLVSMocks

/// A mock Drive, a token file authorized against it, and the connector wired to both.
final class DriveFixture: Sendable {
    let mock: MockGoogleDriveServer
    let directory: URL
    let tokenSource: OAuthTokenSource
    let fileSystem: GoogleDriveFileSystem

    init(settings: MockGoogleDriveServer.Settings = MockGoogleDriveServer.Settings(),
         configure: (inout GoogleDriveConfiguration) -> Void = { _ in }) throws {
        mock = try MockGoogleDriveServer(settings: settings)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-drive-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = TokenFile(path: directory.appendingPathComponent("drive.token.json").path)
        try file.write(mock.issueToken())
        let http = quickClient()
        let oauth = GoogleDriveConfiguration.oauth(clientId: mock.oauth.settings.clientId, clientSecret: mock.oauth.settings.clientSecret,
                                                   endpoint: mock.endpoint)
        tokenSource = OAuthTokenSource(file: file, configuration: oauth, http: http, reauthorizeCommand: "llvs auth drive")
        var configuration = GoogleDriveConfiguration(endpoint: mock.endpoint)
        configuration.chunkSize = 1024 * 1024
        configure(&configuration)
        fileSystem = GoogleDriveFileSystem(configuration: configuration, http: http, authorizer: tokenSource)
    }

    func local(_ name: String) -> URL { directory.appendingPathComponent(name) }

    deinit {
        mock.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Requests to the API and upload hosts (not the token endpoint) with this method whose path starts so.
    func requests(_ method: String, _ prefix: String) -> [MockLogEntry] {
        mock.log.filter { $0.method == method && $0.target.hasPrefix(prefix) }
    }
}

/// Lets the conformance suite's failure checks make the mock Drive misbehave as Drive does.
struct DriveFaultControl: FaultControl {
    let mock: MockGoogleDriveServer
    var supportedFaults: Set<InjectedFault> { [.rateLimited, .serviceUnavailable, .droppedConnection, .expiredToken, .revokedToken] }
    func injectOnce(_ fault: InjectedFault) async {
        switch fault {
        case .rateLimited: mock.faults.injectNext(.status(403, retryAfter: 1)) // Drive's usual "slow down" is a 403
        case .serviceUnavailable: mock.faults.injectNext(.status(503, retryAfter: 1))
        case .droppedConnection: mock.faults.injectNext(.dropBeforeAnswer)
        case .expiredToken: mock.expireAccessTokens()
        case .revokedToken: mock.rejectNextRequests(2) // refused before and after the refresh
        }
    }
}

func quickClient() -> HTTPClient {
    var configuration = HTTPClientConfiguration()
    configuration.retryPolicy = RetryPolicy(maximumAttempts: 8, sleep: { _ in })
    return HTTPClient(configuration: configuration)
}

func bytes(_ count: Int, seed: UInt64) -> Data { SeededGenerator.bytes(count, seed: seed) }
