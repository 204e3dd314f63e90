import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// Every failure `llvs-mock dropbox --list-faults` names, met by the connector: transient ones waited out, final ones
/// ending with Dropbox's reason.
@Suite struct DropboxNamedFaultTests {
    static let finalReasons = ["insufficient-space": "no room", "invalid-grant": "authorize"]

    @Test(arguments: MockDropboxServer.namedFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockDropboxServer.namedFaults[named: name])
        // One entry a page, so a listing meets `continue` (and a reset of its cursor).
        let fixture = try DropboxFixture { $0.pageSize = 1 }
        await expectNamedFaultHandled(
            fault, fileSystem: fixture.fileSystem, faults: fixture.mock.faults,
            workload: NamedFaultWorkload(largeSize: 2 * 4 * 1024 * 1024 + 300 * 1024),
            finalReason: Self.finalReasons[name], prepare: { fixture.mock.expireAccessTokens() })
    }
}
