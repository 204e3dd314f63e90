import Foundation
import LLVS
import LLVSConformance
import LLVSGoogleDrive
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport

/// A mock Drive, a token file authorized against it, and the connector wired to both.
final class DriveFixture: Sendable {
    let mock: MockGoogleDriveServer
    let directory: URL
    let tokenSource: OAuthTokenSource
    let fileSystem: GoogleDriveFileSystem
    let http: HTTPClient

    init(
        settings: MockGoogleDriveServer.Settings = MockGoogleDriveServer.Settings(), http: HTTPClient = quickClient(),
        pacer: RequestPacer = RequestPacer(), configure: (inout GoogleDriveConfiguration) -> Void = { _ in }
    ) throws {
        mock = try MockGoogleDriveServer(settings: settings)
        self.http = http
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-drive-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let file = TokenFile(path: directory.appendingPathComponent("drive.token.json").path)
        try file.write(mock.issueToken())
        let oauth = GoogleDriveConfiguration.oauth(
            clientId: mock.oauth.settings.clientId, clientSecret: mock.oauth.settings.clientSecret,
            endpoint: mock.endpoint)
        tokenSource = OAuthTokenSource(
            file: file, configuration: oauth, http: http, reauthorizeCommand: "llvs auth drive")
        var configuration = GoogleDriveConfiguration(endpoint: mock.endpoint)
        configuration.chunkSize = 1024 * 1024
        configure(&configuration)
        fileSystem = GoogleDriveFileSystem(
            configuration: configuration, http: http, authorizer: tokenSource, pacer: pacer)
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

/// Drive's faults on the shared control: its usual "slow down" is a 403; a revoked token answers 401 before and after
/// the refresh.
func driveFaultControl(mock: MockGoogleDriveServer, http: HTTPClient) -> MockFaultControl {
    MockFaultControl(
        faults: mock.faults, rateLimitStatus: 403, expireTokens: { mock.expireAccessTokens() },
        revokeTokens: { mock.rejectNextRequests(2) }, client: http)
}
