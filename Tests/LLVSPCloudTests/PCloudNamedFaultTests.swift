import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// Every failure `llvs-mock pcloud --list-faults` names (each an HTTP 200 with a result code), met by the connector:
/// 4xxx and 5xxx waited out, a full account and a revoked token ending with pCloud's reason.
@Suite struct PCloudNamedFaultTests {
    static let finalReasons = ["over-quota": "no room", "token-revoked": "authorize"]

    @Test(arguments: MockPCloudServer.namedFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockPCloudServer.namedFaults[named: name])
        let fixture = try PCloudFixture {
            $0.simpleUploadLimit = 64 * 1024
            $0.chunkSize = 256 * 1024
        }
        await expectNamedFaultHandled(
            fault, fileSystem: fixture.fileSystem, faults: fixture.mock.faults,
            workload: NamedFaultWorkload(largeSize: 600 * 1024), finalReason: Self.finalReasons[name])
    }
}
