import Foundation
import LLVS
import LLVSConformance
import LLVSHTTP
import LLVSMocks
import LLVSPCloud
import LLVSTestSupport
import Testing

/// A mock pCloud account, a token file as a sign-in leaves it, and the connector wired to both: the API host comes
/// from the token (the account's region), as in `llvs`.
final class PCloudFixture: Sendable {
    let mock: MockPCloudServer
    let directory: URL
    let tokenFile: TokenFile
    let fileSystem: PCloudFileSystem
    let http: HTTPClient
    let token: OAuthToken
    let tokenSource: OAuthTokenSource

    init(
        settings: MockPCloudServer.Settings = MockPCloudServer.Settings(),
        configure: (inout PCloudConfiguration) -> Void = { _ in }
    ) throws {
        mock = try MockPCloudServer(settings: settings)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-pcloud-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        tokenFile = TokenFile(path: directory.appendingPathComponent("pcloud.token.json").path)
        token = mock.issueToken()
        try tokenFile.write(token)
        http = quickClient()
        tokenSource = OAuthTokenSource(
            file: tokenFile, configuration: Self.oauth(mock), http: http, reauthorizeCommand: "llvs auth pcloud")
        var configuration = try PCloudConfiguration(token: token, endpoint: mock.endpoint)
        configure(&configuration)
        fileSystem = PCloudFileSystem(configuration: configuration, http: http, authorizer: tokenSource)
    }

    static func oauth(_ mock: MockPCloudServer) -> OAuthConfiguration {
        PCloudConfiguration.oauth(
            clientId: mock.settings.clientId, clientSecret: mock.settings.clientSecret, endpoint: mock.endpoint)
    }

    deinit {
        mock.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Calls of one method on either region's host.
    func calls(_ method: String) -> [MockLogEntry] {
        mock.log.filter { $0.target.hasPrefix("/\(method)?") || $0.target == "/\(method)" }
    }
}

/// pCloud's faults as pCloud gives them: a rate limit is result 4000 and an outage result 5000, both in an HTTP 200;
/// a refused token is 2094 (its tokens never expire, so there is no expiry to inject).
struct PCloudFaultControl: FaultControl {
    let mock: MockPCloudServer
    let client: HTTPClient
    var clientWaits: HTTPWaitRecord? { client.configuration.waitRecord }
    /// pCloud's 4000 and 5000 name no wait: any the client decides on is right.
    func requestedWait(_ fault: InjectedFault) -> Duration? { nil }

    var supportedFaults: Set<InjectedFault> {
        [.rateLimited, .serviceUnavailable, .droppedConnection, .droppedMidUpload, .revokedToken]
    }

    func injectOnce(_ fault: InjectedFault) async {
        switch fault {
        case .rateLimited: mock.failNextCalls(1, result: 4000)
        case .serviceUnavailable: mock.failNextCalls(1, result: 5000)
        case .droppedConnection: mock.faults.injectNext(.dropBeforeAnswer)
        case .droppedMidUpload: client.configuration.faults?.injectOnce(.droppedMidBody)
        case .revokedToken: mock.failNextCalls(1, result: 2094)
        case .expiredToken: break
        }
    }
}
