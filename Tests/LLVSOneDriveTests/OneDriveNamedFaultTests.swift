import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// Every failure `llvs-mock onedrive --list-faults` names, met by the connector: transient ones waited out, final
/// ones ending with Graph's reason.
@Suite struct OneDriveNamedFaultTests {
    static let finalReasons = ["quota-full": "no room", "invalid-grant": "authorize"]

    @Test(arguments: MockOneDriveServer.namedFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockOneDriveServer.namedFaults[named: name])
        let fixture = try OneDriveFixture {
            $0.simpleUploadLimit = 64 * 1024
            $0.fragmentSize = 320 * 1024
        }
        await expectNamedFaultHandled(
            fault, fileSystem: fixture.fileSystem, faults: fixture.mock.faults,
            workload: NamedFaultWorkload(largeSize: 2 * 320 * 1024 + 100), finalReason: Self.finalReasons[name],
            prepare: { fixture.mock.expireAccessTokens() })
    }
}
