import Foundation
import LLVS
import LLVSOneDrive
import LLVSTestSupport
import Testing

/// Syncs through Graph's delta feed: one request when nothing is new, a full listing after 410 resyncRequired.
@Suite struct OneDriveChangeFeedTests {
    /// Plaintext, and through the encryption layer (the feed passes through it; each sync reads the key file once).
    @Test(arguments: [false, true])
    func syncsFollowTheDeltaFeed(encrypted: Bool) async throws {
        let fixture = try OneDriveFixture()
        let configuration = fixture.fileSystem.configuration, tokens = fixture.tokenSource, mock = fixture.mock,
            http = fixture.http
        try await expectChangeFeedSync(
            ChangeFeedHarness(
                makeFileSystem: { OneDriveFileSystem(configuration: configuration, http: http, authorizer: tokens) },
                expireCursors: { mock.expireChangeCursors() }, requests: { mock.log.count },
                passphrase: encrypted ? "feed passphrase" : nil), in: fixture.directory)
    }
}
