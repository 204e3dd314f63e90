import Foundation
import LLVS
import LLVSBox
import LLVSTestSupport
import Testing

/// Syncs through Box's event stream: one request when nothing is new, a full listing when the position is refused.
@Suite struct BoxChangeFeedTests {
    @Test func syncsFollowTheEventStream() async throws {
        let fixture = try BoxFixture()
        let tokens = fixture.tokenSource, mock = fixture.mock, http = fixture.http
        try await expectChangeFeedSync(ChangeFeedHarness(
            makeFileSystem: { BoxFixture.connector(mock, http: http, tokens: tokens) },
            expireCursors: { mock.expireChangeCursors() }, requests: { mock.log.count }), in: fixture.directory)
    }
}
