import Foundation
import LLVS
import LLVSConformance
import LLVSDropbox
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
import Testing

/// A mock Dropbox, a token file authorized against it, and the connector wired to both. Files above 1 MiB go up in
/// sessions of 4 MiB appends here, so sessions are tested without 48 MiB files.
final class DropboxFixture: Sendable {
    let mock: MockDropboxServer
    let directory: URL
    let tokenFile: TokenFile
    let tokenSource: OAuthTokenSource
    let fileSystem: DropboxFileSystem
    let http: HTTPClient

    init(
        settings: MockDropboxServer.Settings = MockDropboxServer.Settings(), faults: MockFaults = MockFaults(),
        http: HTTPClient = quickClient(), configure: (inout DropboxConfiguration) -> Void = { _ in }
    ) throws {
        mock = try MockDropboxServer(settings: settings, faults: faults)
        directory = FileManager.default.temporaryDirectory.appendingPathComponent(
            "llvs-dropbox-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        tokenFile = TokenFile(path: directory.appendingPathComponent("dropbox.token.json").path)
        try tokenFile.write(mock.issueToken())
        self.http = http
        tokenSource = OAuthTokenSource(
            file: tokenFile, configuration: Self.oauth(mock), http: http, reauthorizeCommand: "llvs auth dropbox")
        fileSystem = Self.connector(mock, http: http, tokens: tokenSource, configure: configure)
    }

    static func connector(
        _ mock: MockDropboxServer, http: HTTPClient, tokens: OAuthTokenSource,
        configure: (inout DropboxConfiguration) -> Void = { _ in }
    ) -> DropboxFileSystem {
        var configuration = DropboxConfiguration(endpoint: mock.endpoint)
        configuration.simpleUploadLimit = 1024 * 1024
        configuration.chunkSize = DropboxConfiguration.blockSize
        configure(&configuration)
        return DropboxFileSystem(configuration: configuration, http: http, authorizer: tokens)
    }

    static func oauth(_ mock: MockDropboxServer) -> OAuthConfiguration {
        DropboxConfiguration.oauth(clientId: mock.oauth.settings.clientId, clientSecret: nil, endpoint: mock.endpoint)
    }

    deinit {
        mock.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    func requests(containing text: String) -> [MockLogEntry] {
        mock.log.filter { $0.target.contains(text) }
    }
}

/// Dropbox's faults on the shared control: 429 with Retry-After, expired access tokens, and a refused token.
func dropboxFaultControl(mock: MockDropboxServer, http: HTTPClient) -> MockFaultControl {
    MockFaultControl(
        faults: mock.faults, expireTokens: { mock.expireAccessTokens() }, revokeTokens: { mock.rejectNextRequests(2) },
        client: http)
}

/// Records an issue unless `body` throws `cursorExpired` (the caller then lists in full).
func expectCursorExpired(
    _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
) async {
    do {
        try await body()
        Issue.record("the cursor was still taken", sourceLocation: sourceLocation)
    } catch CloudFileSystemError.cursorExpired {
    } catch {
        Issue.record("expected cursorExpired, got \(error)", sourceLocation: sourceLocation)
    }
}
