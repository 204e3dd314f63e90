import Foundation
import LLVS
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSOneDrive
import Testing

/// A mock OneDrive, a token file authorized against it, and the connector wired to both.
final class OneDriveFixture: Sendable {
    let mock: MockOneDriveServer
    let directory: URL
    let tokenFile: TokenFile
    let tokenSource: OAuthTokenSource
    let fileSystem: OneDriveFileSystem
    let http: HTTPClient

    init(settings: MockOneDriveServer.Settings = MockOneDriveServer.Settings(), configure: (inout OneDriveConfiguration) -> Void = { _ in }) throws {
        mock = try MockOneDriveServer(settings: settings)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-onedrive-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        tokenFile = TokenFile(path: directory.appendingPathComponent("onedrive.token.json").path)
        try tokenFile.write(mock.issueToken())
        http = quickClient()
        tokenSource = OAuthTokenSource(file: tokenFile, configuration: Self.oauth(mock), http: http, reauthorizeCommand: "llvs auth onedrive")
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

/// Lets the conformance suite's failure checks make the mock misbehave as Graph does.
struct OneDriveFaultControl: FaultControl {
    let mock: MockOneDriveServer
    var supportedFaults: Set<InjectedFault> { [.rateLimited, .serviceUnavailable, .droppedConnection, .expiredToken, .revokedToken] }
    func injectOnce(_ fault: InjectedFault) async {
        switch fault {
        case .rateLimited: mock.faults.injectNext(.status(429, retryAfter: 1))
        case .serviceUnavailable: mock.faults.injectNext(.status(503, retryAfter: 1))
        case .droppedConnection: mock.faults.injectNext(.dropBeforeAnswer)
        case .expiredToken: mock.expireAccessTokens()
        case .revokedToken: mock.rejectNextRequests(2)
        }
    }
}

func quickClient() -> HTTPClient {
    var configuration = HTTPClientConfiguration()
    configuration.retryPolicy = RetryPolicy(maximumAttempts: 8, sleep: { _ in })
    return HTTPClient(configuration: configuration)
}

func expectConformance(_ fileSystem: any CloudFileSystem, options: ConformanceOptions, skippable: Set<String> = []) async {
    let report = await ConformanceSuite.run(on: fileSystem, options: options)
    for result in report.results {
        switch result.status {
        case .passed: break
        case .skipped: #expect(skippable.contains(result.id), "\(result.id) skipped: \(result.message ?? "")")
        case .failed: Issue.record("\(result.id) failed: \(result.message ?? "")")
        }
    }
}
