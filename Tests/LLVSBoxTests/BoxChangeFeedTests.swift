import Foundation
import LLVS
import LLVSBox
import LLVSTestSupport
import Testing

/// Syncs through Box's event stream: one request when nothing is new, a full listing when the position is refused.
@Suite struct BoxChangeFeedTests {
    /// Plaintext, and through the encryption layer (the feed passes through it; each sync reads the key file once).
    @Test(arguments: [false, true])
    func syncsFollowTheEventStream(encrypted: Bool) async throws {
        let fixture = try BoxFixture()
        let tokens = fixture.tokenSource, mock = fixture.mock, http = fixture.http
        try await expectChangeFeedSync(
            ChangeFeedHarness(
                makeFileSystem: { BoxFixture.connector(mock, http: http, tokens: tokens) },
                expireCursors: { mock.expireChangeCursors() }, requests: { mock.log.count },
                passphrase: encrypted ? "feed passphrase" : nil, requestsToReadKey: 3), in: fixture.directory)
    }
}
