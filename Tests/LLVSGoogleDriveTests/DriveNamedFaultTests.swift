import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

/// Every failure `llvs-mock gdrive --list-faults` names, met by the connector: rate limits (403 and 429) waited out,
/// a daily limit, a full Drive and a revoked token ending with Drive's reason.
@Suite struct DriveNamedFaultTests {
    static let finalReasons = [
        "daily-limit": "dailyLimitExceeded", "storage-quota": "no room", "invalid-grant": "authorize",
    ]

    @Test(arguments: MockGoogleDriveServer.namedFaults.map(\.name))
    func theConnectorHandlesTheNamedFault(name: String) async throws {
        let fault = try #require(MockGoogleDriveServer.namedFaults[named: name])
        let fixture = try DriveFixture { $0.multipartLimit = 64 * 1024 }
        await expectNamedFaultHandled(
            fault, fileSystem: fixture.fileSystem, faults: fixture.mock.faults,
            workload: NamedFaultWorkload(largeSize: 1024 * 1024 + 300 * 1024), finalReason: Self.finalReasons[name],
            prepare: { fixture.mock.expireAccessTokens() })
    }
}
