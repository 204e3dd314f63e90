import Foundation
import LLVS
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSOneDrive
import LLVSTestSupport
import Testing

/// A mock OneDrive, a token file authorized against it, and the connector wired to both.
final class OneDriveFixture: Sendable {
    let mock: MockOneDriveServer
    let directory: URL
    let tokenFile: TokenFile
    let tokenSource: OAuthTokenSource
    let fileSystem: OneDriveFileSystem
    let http: HTTPClient

    init(
        settings: MockOneDriveServer.Settings = MockOneDriveServer.Settings(),
        configure: (inout OneDriveConfiguration) -> Void = { _ in }
    ) throws {
        mock = try MockOneDriveServer(settings: settings)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-onedrive-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        tokenFile = TokenFile(path: directory.appendingPathComponent("onedrive.token.json").path)
        try tokenFile.write(mock.issueToken())
        http = quickClient()
        tokenSource = OAuthTokenSource(
            file: tokenFile, configuration: Self.oauth(mock), http: http, reauthorizeCommand: "llvs auth onedrive")
        var configuration = OneDriveConfiguration(endpoint: mock.endpoint)
        configuration.fragmentSize = 3 * 320 * 1024
        configure(&configuration)
        fileSystem = OneDriveFileSystem(configuration: configuration, http: http, authorizer: tokenSource)
    }

    static func oauth(_ mock: MockOneDriveServer) -> OAuthConfiguration {
        OneDriveConfiguration.oauth(clientId: mock.oauth.settings.clientId, endpoint: mock.endpoint)
    }

    deinit {
        mock.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func requests(_ method: String, containing text: String) -> [MockLogEntry] {
        mock.log.filter { $0.method == method && $0.target.contains(text) }
    }
}

/// Graph's faults on the shared control.
func oneDriveFaultControl(mock: MockOneDriveServer, http: HTTPClient) -> MockFaultControl {
    MockFaultControl(
        faults: mock.faults, expireTokens: { mock.expireAccessTokens() }, revokeTokens: { mock.rejectNextRequests(2) },
        client: http)
}
