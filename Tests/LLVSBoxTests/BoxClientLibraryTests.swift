import Foundation
import LLVSSupport
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// The mock held to the real service by Box's own Python SDK (box-sdk-gen, installed into .build/clients-venv by
/// scripts/install-client-libraries, which scripts/test runs).
@Suite struct BoxClientLibraryTests {
    static let sdkInstalled = ClientLibraries.installed("box_sdk_gen")

    @Test(
        .enabled(
            if: sdkInstalled || CIEnvironment.requiresEveryTest,
            "box-sdk-gen is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func boxsOwnSDKWorksAgainstTheMock() async throws {
        try #require(
            Self.sdkInstalled,
            "box-sdk-gen is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        let mock = try MockBoxServer(settings: BoxFixture.testSettings)
        defer { mock.stop() }
        let outcome = try await ClientLibraries.run(
            "box_client_library.py", [mock.endpoint.absoluteString, mock.issueToken().accessToken])
        #expect(
            outcome.status == 0,
            "the SDK failed against the mock:\n\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(
            mock.log.contains { $0.method == "PUT" && $0.target.contains("/upload_sessions/") },
            "the SDK's chunked upload used a session")
        #expect(mock.contentHost.requestsWithCredentials.isEmpty, "the SDK sent its token to the download host")
    }

    /// Tokens refreshed through the library itself (rotation, single use, a refused refresh token as the library's
    /// own error), against the mock's OAuth endpoints.
    @Test(
        .enabled(
            if: ClientLibraries.installed("box_sdk_gen, requests") || CIEnvironment.requiresEveryTest,
            "the library is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func boxsSDKExchangesACodeAndRefreshesAgainstTheMock() async throws {
        try #require(
            ClientLibraries.installed("box_sdk_gen, requests"),
            "the library is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        let mock = try MockBoxServer()
        defer { mock.stop() }
        try await ClientLibraries.expectRefreshesThroughTheLibrary(
            "box", endpoint: mock.endpoint, oauth: mock.oauth, refreshes: 2)
    }

    /// Every named fault of the mock (`llvs-mock box --list-faults`), injected through its control path and met
    /// through box-sdk-gen: retried where the SDK retries, else the SDK's own error with Box's code.
    @Test(
        .enabled(
            if: sdkInstalled || CIEnvironment.requiresEveryTest,
            "box-sdk-gen is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func boxsSDKMeetsEveryNamedFaultAsBoxSendsIt() async throws {
        try #require(Self.sdkInstalled, "box-sdk-gen is not installed (CI=true: every test must run)")
        let faults = MockFaults()
        let mock = try MockBoxServer(faults: faults)
        defer { mock.stop() }
        let token = mock.issueToken()
        try await ClientLibraries.expectEveryNamedFault(
            [
                "box", mock.endpoint.absoluteString, token.accessToken, mock.oauth.settings.clientId,
                mock.oauth.settings.clientSecret ?? "", token.refreshToken ?? "",
            ], faults: faults, catalogue: MockBoxServer.namedFaults)
    }
}
