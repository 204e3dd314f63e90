import Foundation
import LLVSSupport
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// The mock held to the real service by a pCloud client library from PyPI (`pcloud`, installed into
/// .build/clients-venv by scripts/install-client-libraries, which scripts/test runs).
@Suite struct PCloudClientLibraryTests {
    static let libraryInstalled = ClientLibraries.installed("pcloud, httpx")

    @Test(
        .enabled(
            if: libraryInstalled || CIEnvironment.requiresEveryTest,
            "the pcloud library is not installed in .build/clients-venv; run scripts/install-client-libraries"),
        arguments: [MockPCloudServer.Settings.Region.us, .eu])
    func thePCloudLibraryWorksAgainstTheMock(region: MockPCloudServer.Settings.Region) async throws {
        try #require(
            Self.libraryInstalled,
            "the pcloud library is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        var settings = MockPCloudServer.Settings()
        settings.region = region
        let mock = try MockPCloudServer(settings: settings)
        defer { mock.stop() }
        let outcome = try await ClientLibraries.run(
            "pcloud_client_library.py",
            [
                mock.homeEndpoint.absoluteString, mock.issueToken().accessToken, region.rawValue, settings.username,
                settings.password,
            ])
        #expect(
            outcome.status == 0,
            "the library failed against the mock:\n\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(
            mock.log.contains { $0.method == "POST" && $0.target.hasPrefix("/uploadfile") },
            "the library uploads with multipart")
        #expect(mock.log.contains { $0.target.hasPrefix("/getzip") }, "the library downloads through getzip")
        for method in ["renamefile", "renamefolder", "copyfile"] {
            #expect(
                mock.log.contains { $0.target.hasPrefix("/\(method)") && $0.status == 200 },
                "the library called \(method)")
        }
    }

    /// Every named fault of the mock, injected through its control path and met through the `pcloud` library: the
    /// result code pCloud answers in HTTP 200, and a transient one gone when the call is made again.
    @Test(
        .enabled(
            if: libraryInstalled || CIEnvironment.requiresEveryTest,
            "the pcloud library is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func thePCloudLibraryMeetsEveryNamedFaultAsPCloudSendsIt() async throws {
        try #require(Self.libraryInstalled, "the pcloud library is not installed (CI=true: every test must run)")
        let faults = MockFaults()
        let mock = try MockPCloudServer(faults: faults)
        defer { mock.stop() }
        try await ClientLibraries.expectEveryNamedFault(
            ["pcloud", mock.homeEndpoint.absoluteString, mock.issueToken().accessToken], faults: faults,
            catalogue: MockPCloudServer.namedFaults)
    }
}
