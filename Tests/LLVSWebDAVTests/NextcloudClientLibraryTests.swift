import Foundation
import LLVS
import LLVSMocks
import LLVSSupport
import LLVSTestSupport
import LLVSWebDAV
import Testing

/// The Nextcloud mock held to Nextcloud's own Python framework (`nc-py-api`, installed into .build/clients-venv by
/// scripts/install-client-libraries): its OCS calls, uploads small and chunked (v2), listings, downloads and
/// checksums, including the SHA-1 LLVS's connector sent with a file.
@Suite struct NextcloudClientLibraryTests {
    static let libraryInstalled = ClientLibraries.installed("nc_py_api")

    @Test(
        .enabled(
            if: libraryInstalled || CIEnvironment.requiresEveryTest,
            "nc-py-api is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func ncPyAPIWorksAgainstTheMock() async throws {
        try #require(
            Self.libraryInstalled,
            "nc-py-api is not installed in .build/clients-venv; run scripts/install-client-libraries (CI=true: every test must run)"
        )
        let mock = try MockWebDAVServer.nextcloud(password: "p")
        defer { mock.stop() }
        let connector = WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: mock.url, authentication: .basic(user: "llvs", password: "p")),
            http: quickClient())
        let value = Data("a value LLVS sent".utf8)
        try await connector.upload(value, to: "llvs/value.bin")
        let outcome = try await ClientLibraries.run(
            "nextcloud_client_library.py",
            [
                mock.serverURL.absoluteString, "llvs", "p", "llvs/value.bin",
                DigestStream.hex(value, .sha1),
            ])
        #expect(
            outcome.status == 0,
            "the library failed against the mock:\n\(outcome.output.suffix(2000))\n\(outcome.errors.suffix(3000))")
        #expect(outcome.output.trimmingCharacters(in: .whitespacesAndNewlines) == "ok")
        #expect(
            mock.server.log.contains {
                $0.method == "MKCOL" && $0.target.hasPrefix("/remote.php/dav/uploads/llvs/")
                    && $0.headers["Destination"] != nil
            },
            "the library's large upload was chunked v2")
        #expect(
            mock.server.log.contains { $0.method == "MOVE" && $0.target.hasSuffix("/.file") && $0.status == 201 },
            "and assembled")
        #expect(mock.server.log.contains { $0.target.hasPrefix("/ocs/v1.php/cloud/capabilities") && $0.status == 200 })
    }

    /// Every named fault of the Nextcloud mock, injected through its control path and met through nc-py-api: the
    /// status Nextcloud answers in the library's own error, a transient one gone when the call is made again, and an
    /// assembly answered 423 that made the file whole anyway.
    @Test(
        .enabled(
            if: libraryInstalled || CIEnvironment.requiresEveryTest,
            "nc-py-api is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func ncPyAPIMeetsEveryNamedFaultAsNextcloudSendsIt() async throws {
        try #require(Self.libraryInstalled, "nc-py-api is not installed (CI=true: every test must run)")
        let faults = MockFaults()
        let mock = try MockWebDAVServer.nextcloud(password: "p", faults: faults)
        defer { mock.stop() }
        let server = mock.serverURL.absoluteString
        try await ClientLibraries.expectEveryNamedFault(
            ["nextcloud", server, "llvs", "p", server], faults: faults, catalogue: MockWebDAVServer.nextcloudFaults)
    }
}
