import Foundation
import LLVS
import LLVSBox
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
import Testing

/// A mock Box, a token file authorized against it, and the connector wired to both. Sessions start at 1 MiB with
/// 256 KiB parts here, so chunked uploads are tested without 20 MB files.
final class BoxFixture: Sendable {
    let mock: MockBoxServer
    let directory: URL
    let tokenFile: TokenFile
    let tokenSource: OAuthTokenSource
    let fileSystem: BoxFileSystem
    let http: HTTPClient

    static var testSettings: MockBoxServer.Settings {
        var settings = MockBoxServer.Settings()
        settings.minimumSessionSize = 1024 * 1024
        settings.partSize = 256 * 1024
        return settings
    }

    init(
        settings: MockBoxServer.Settings = BoxFixture.testSettings, http: HTTPClient = quickClient(),
        configure: (inout BoxConfiguration) -> Void = { _ in }
    ) throws {
        mock = try MockBoxServer(settings: settings)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-box-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        tokenFile = TokenFile(path: directory.appendingPathComponent("box.token.json").path)
        try tokenFile.write(mock.issueToken())
        self.http = http
        tokenSource = OAuthTokenSource(
            file: tokenFile, configuration: Self.oauth(mock), http: http, reauthorizeCommand: "llvs auth box")
        fileSystem = Self.connector(mock, http: http, tokens: tokenSource, configure: configure)
    }

    static func connector(
        _ mock: MockBoxServer, http: HTTPClient, tokens: OAuthTokenSource,
        configure: (inout BoxConfiguration) -> Void = { _ in }
    ) -> BoxFileSystem {
        var configuration = BoxConfiguration(endpoint: mock.endpoint)
        configuration.chunkedUploadMinimum = mock.settings.minimumSessionSize
        configure(&configuration)
        return BoxFileSystem(configuration: configuration, http: http, authorizer: tokens)
    }

    static func oauth(_ mock: MockBoxServer) -> OAuthConfiguration {
        BoxConfiguration.oauth(
            clientId: mock.oauth.settings.clientId, clientSecret: mock.oauth.settings.clientSecret ?? "",
            endpoint: mock.endpoint)
    }

    deinit {
        mock.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func requests(_ method: String, containing text: String) -> [MockLogEntry] {
        mock.log.filter { $0.method == method && $0.target.contains(text) }
    }
}

/// Box's faults on the shared control: 429 with retry-after, expired access tokens, and a refused token.
func boxFaultControl(mock: MockBoxServer, http: HTTPClient) -> MockFaultControl {
    MockFaultControl(
        faults: mock.faults, expireTokens: { mock.expireAccessTokens() }, revokeTokens: { mock.rejectNextRequests(2) },
        client: http)
}
