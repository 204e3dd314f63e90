import Foundation
import LLVSSupport
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// The mock held to the real service by Google's own API client (google-api-python-client, installed into
/// .build/clients-venv by scripts/install-client-libraries, which scripts/test runs).
@Suite struct GoogleDriveClientLibraryTests {
    static let clientInstalled = ClientLibraries.installed("googleapiclient.discovery, google.oauth2.credentials")

    @Test(
        .enabled(
            if: clientInstalled || CIEnvironment.requiresEveryTest,
            "google-api-python-client is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func googlesOwnClientWorksAgainstTheMock() async throws {
        try #require(
            Self.clientInstalled,
            "google-api-python-client is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        let mock = try MockGoogleDriveServer()
        defer { mock.stop() }
        let outcome = try await ClientLibraries.run(
            "google_drive_client_library.py", [mock.endpoint.absoluteString, mock.issueToken().accessToken])
        #expect(
            outcome.status == 0,
            "the client failed against the mock:\n\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        let multipart = mock.log.first { $0.method == "POST" && $0.target.contains("uploadType=multipart") }
        #expect(multipart != nil, "the client made a multipart upload")
        #expect(mock.log.contains { $0.target.contains("uploadType=resumable") }, "the client made a resumable upload")
    }

    /// Tokens refreshed through the library itself (rotation, single use, a refused refresh token as the library's
    /// own error), against the mock's OAuth endpoints.
    @Test(
        .enabled(
            if: ClientLibraries.installed("google.auth.transport.requests, requests")
                || CIEnvironment.requiresEveryTest,
            "the library is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func googleAuthRefreshesTokensAgainstTheMock() async throws {
        try #require(
            ClientLibraries.installed("google.auth.transport.requests, requests"),
            "the library is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        let mock = try MockGoogleDriveServer()
        defer { mock.stop() }
        try await ClientLibraries.expectRefreshesThroughTheLibrary(
            "gdrive", endpoint: mock.endpoint, oauth: mock.oauth, refreshes: 2)
    }

    /// Every named fault of the mock, injected through its control path and met through google-api-python-client
    /// and google-auth: retried where the client retries (403 rate limits included), else its error with Drive's
    /// reason.
    @Test(
        .enabled(
            if: clientInstalled || CIEnvironment.requiresEveryTest,
            "google-api-python-client is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func googlesClientMeetsEveryNamedFaultAsDriveSendsIt() async throws {
        try #require(Self.clientInstalled, "google-api-python-client is not installed (CI=true: every test must run)")
        let faults = MockFaults()
        let mock = try MockGoogleDriveServer(faults: faults)
        defer { mock.stop() }
        let token = mock.issueToken()
        try await ClientLibraries.expectEveryNamedFault(
            [
                "gdrive", mock.endpoint.absoluteString, token.accessToken, mock.oauth.settings.clientId,
                mock.oauth.settings.clientSecret ?? "", token.refreshToken ?? "",
            ], faults: faults, catalogue: MockGoogleDriveServer.namedFaults)
    }
}
