import Foundation
import LLVSSupport
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// The mock held to the real service by Dropbox's own Python SDK (`dropbox`, installed into .build/clients-venv by
/// scripts/install-client-libraries, which scripts/test runs). The SDK speaks only https: the scripts put a TLS front
/// (Tests/Clients/tls_proxy.py, a certificate made with the `cryptography` package) before the mock.
@Suite struct DropboxClientLibraryTests {
    static let sdkInstalled = ClientLibraries.installed("dropbox, cryptography")

    @Test(
        .enabled(
            if: sdkInstalled || CIEnvironment.requiresEveryTest,
            "the dropbox SDK is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func dropboxsOwnSDKWorksAgainstTheMock() async throws {
        try #require(
            Self.sdkInstalled,
            "the dropbox SDK is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        let mock = try MockDropboxServer()
        defer { mock.stop() }
        let outcome = try await ClientLibraries.run(
            "dropbox_client_library.py", [mock.endpoint.absoluteString, mock.issueToken().accessToken])
        #expect(
            outcome.status == 0,
            "the SDK failed against the mock:\n\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(mock.log.contains { $0.target.hasSuffix("/upload_session/finish") }, "the SDK's session finished")
        #expect(
            mock.log.filter { $0.target.hasSuffix("/longpoll") }.allSatisfy { $0.headers["Authorization"] == nil },
            "the SDK's long poll carries no token")
    }

    /// Sign-in and refresh through the SDK's own OAuth flow: PKCE, `token_access_type=offline`, a refresh token that
    /// stays the same across refreshes, and a revoked one refused as the SDK's own AuthError.
    @Test(
        .enabled(
            if: sdkInstalled || CIEnvironment.requiresEveryTest,
            "the dropbox SDK is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func theSDKSignsInWithPKCEAndRefreshesAgainstTheMock() async throws {
        try #require(Self.sdkInstalled, "the dropbox SDK is not installed (CI=true: every test must run)")
        let mock = try MockDropboxServer()
        defer { mock.stop() }
        try await ClientLibraries.expectRefreshesThroughTheLibrary(
            "dropbox", endpoint: mock.endpoint, oauth: mock.oauth, refreshes: 2)
    }

    /// Every named fault of the mock, injected through its control path and met through the SDK (which waits out
    /// 429s by itself and refreshes an expired token).
    @Test(
        .enabled(
            if: sdkInstalled || CIEnvironment.requiresEveryTest,
            "the dropbox SDK is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func theSDKMeetsEveryNamedFaultAsDropboxSendsIt() async throws {
        try #require(Self.sdkInstalled, "the dropbox SDK is not installed (CI=true: every test must run)")
        let faults = MockFaults()
        let mock = try MockDropboxServer(faults: faults)
        defer { mock.stop() }
        let token = mock.issueToken()
        try await ClientLibraries.expectEveryNamedFault(
            [
                "dropbox", mock.endpoint.absoluteString, token.accessToken, mock.oauth.settings.clientId, "",
                token.refreshToken ?? "",
            ], faults: faults, catalogue: MockDropboxServer.namedFaults)
    }
}
