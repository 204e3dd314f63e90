import Foundation
import LLVS
import LLVSPCloud
import LLVSTestSupport
import Testing

/// Syncs through pCloud's diff feed: one request when nothing is new, a full listing when the diffid is refused.
@Suite struct PCloudChangeFeedTests {
    /// Plaintext, and through the encryption layer (the feed passes through it; each sync reads the key file once).
    @Test(arguments: [false, true])
    func syncsFollowTheDiffFeed(encrypted: Bool) async throws {
        let fixture = try PCloudFixture()
        let configuration = fixture.fileSystem.configuration, tokens = fixture.tokenSource, mock = fixture.mock,
            http = fixture.http
        try await expectChangeFeedSync(
            ChangeFeedHarness(
                makeFileSystem: { PCloudFileSystem(configuration: configuration, http: http, authorizer: tokens) },
                expireCursors: { mock.expireChangeCursors() }, requests: { mock.log.count },
                passphrase: encrypted ? "feed passphrase" : nil), in: fixture.directory)
    }
}
