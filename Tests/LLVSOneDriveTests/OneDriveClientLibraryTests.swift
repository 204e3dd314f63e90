import Foundation
import LLVSSupport
import LLVS
import LLVSTestSupport
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
import Testing

/// The mock held to the real service by Microsoft's own Graph SDK for Python (msgraph-sdk, installed into
/// .build/clients-venv by scripts/install-client-libraries, which scripts/test runs).
@Suite struct OneDriveClientLibraryTests {
    static let sdkInstalled = ClientLibraries.installed("msgraph, httpx")

    @Test(
        .enabled(
            if: sdkInstalled || CIEnvironment.requiresEveryTest,
            "msgraph-sdk is not installed in .build/clients-venv; run scripts/install-client-libraries"),
        arguments: [MockOneDriveServer.Settings.DriveType.personal, .business])
    func microsoftsGraphSDKWorksAgainstTheMock(driveType: MockOneDriveServer.Settings.DriveType) async throws {
        try #require(
            Self.sdkInstalled,
            "msgraph-sdk is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        var settings = MockOneDriveServer.Settings()
        settings.driveType = driveType
        let mock = try MockOneDriveServer(settings: settings)
        defer { mock.stop() }
        let outcome = try await ClientLibraries.run(
            "onedrive_client_library.py", [mock.endpoint.absoluteString, mock.issueToken().accessToken])
        #expect(outcome.status == 0, "the SDK failed against the mock:\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(
            mock.contentHost.requestsWithCredentials.isEmpty, "the SDK sent its token to the upload or download host")
        #expect(mock.log.contains { $0.target.contains("delta") })
    }

    /// Tokens refreshed through the library itself (rotation, single use, a refused refresh token as the library's
    /// own error), against the mock's OAuth endpoints.
    @Test(
        .enabled(
            if: ClientLibraries.installed("msal, requests") || CIEnvironment.requiresEveryTest,
            "the library is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func msalSignsInByDeviceFlowAndRefreshesAgainstTheMock() async throws {
        try #require(
            ClientLibraries.installed("msal, requests"),
            "the library is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        let mock = try MockOneDriveServer()
        defer { mock.stop() }
        try await ClientLibraries.expectRefreshesThroughTheLibrary(
            "onedrive", endpoint: mock.endpoint, oauth: mock.oauth, refreshes: 1)
        #expect(
            mock.log.contains { $0.target.hasSuffix("/v2.0/.well-known/openid-configuration") },
            "msal read the discovery document")
    }

    /// Every named fault of the mock, injected through its control path and met through msgraph-sdk (its retry
    /// handler waits out throttling), httpx for upload-session fragments, and msal for a revoked refresh token.
    @Test(
        .enabled(
            if: (sdkInstalled && ClientLibraries.installed("msal")) || CIEnvironment.requiresEveryTest,
            "msgraph-sdk or msal is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func microsoftsLibrariesMeetEveryNamedFaultAsGraphSendsIt() async throws {
        try #require(
            Self.sdkInstalled && ClientLibraries.installed("msal"),
            "msgraph-sdk or msal is not installed (CI=true: every test must run)")
        let faults = MockFaults()
        let mock = try MockOneDriveServer(faults: faults)
        defer { mock.stop() }
        let token = mock.issueToken()
        try await ClientLibraries.expectEveryNamedFault(
            [
                "onedrive", mock.endpoint.absoluteString, token.accessToken, mock.oauth.settings.clientId, "",
                token.refreshToken ?? "",
            ], faults: faults, catalogue: MockOneDriveServer.namedFaults)
    }
}
