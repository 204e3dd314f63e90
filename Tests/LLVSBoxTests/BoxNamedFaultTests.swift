import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// Every failure `llvs-mock box --list-faults` names, met by the connector: transient ones waited out, final ones
/// ending with Box's reason.
@Suite struct BoxNamedFaultTests {
    static let finalReasons = ["storage-full": "storage", "invalid-grant": "authorize"]

    @Test(arguments: MockBoxServer.namedFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockBoxServer.namedFaults[named: name])
        let fixture = try BoxFixture()
        // Above the chunked-upload minimum, so sessions, parts and commits are met.
        await expectNamedFaultHandled(
            fault, fileSystem: fixture.fileSystem, faults: fixture.mock.faults,
            workload: NamedFaultWorkload(largeSize: Int(BoxFixture.testSettings.minimumSessionSize) + 300 * 1024),
            finalReason: Self.finalReasons[name], prepare: { fixture.mock.expireAccessTokens() })
    }
}
