import Foundation
import LLVSSupport
import LLVSMocks
import LLVSTestSupport
import Testing

/// The WebDAV mock held to a WebDAV client library from PyPI (webdav4, installed into .build/clients-venv by
/// scripts/install-client-libraries): every named fault of `llvs-mock webdav --list-faults`, injected through the
/// mock's control path, comes back as the library's own error for the status (or is waited out), and the call made
/// again succeeds.
@Suite struct WebDAVClientLibraryTests {
    static let libraryInstalled = ClientLibraries.installed("webdav4.client")

    @Test(
        .enabled(
            if: libraryInstalled || CIEnvironment.requiresEveryTest,
            "webdav4 is not installed in .build/clients-venv; run scripts/install-client-libraries"))
    func webdav4MeetsEveryNamedFaultAsApacheSendsIt() async throws {
        try #require(Self.libraryInstalled, "webdav4 is not installed (CI=true: every test must run)")
        let faults = MockFaults()
        let mock = try MockWebDAVServer(user: "llvs", password: "p", faults: faults)
        defer { mock.stop() }
        try await ClientLibraries.expectEveryNamedFault(
            ["webdav", mock.server.baseURL.absoluteString, "llvs", "p", mock.url.absoluteString], faults: faults,
            catalogue: MockWebDAVServer.namedFaults)
    }
}
