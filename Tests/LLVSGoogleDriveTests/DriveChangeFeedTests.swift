import Foundation
import LLVS
import LLVSGoogleDrive
import LLVSTestSupport
import Testing

/// Syncs through Drive's changes feed: one request when nothing is new, a full listing when the token is refused.
@Suite struct DriveChangeFeedTests {
    /// Plaintext, and through the encryption layer (the feed passes through it; each sync reads the key file once).
    @Test(arguments: [false, true])
    func syncsFollowTheChangesFeed(encrypted: Bool) async throws {
        let fixture = try DriveFixture()
        let configuration = fixture.fileSystem.configuration, tokens = fixture.tokenSource, mock = fixture.mock
        try await expectChangeFeedSync(
            ChangeFeedHarness(
                makeFileSystem: {
                    GoogleDriveFileSystem(configuration: configuration, http: quickClient(), authorizer: tokens)
                },
                expireCursors: { mock.expireChangeCursors() }, requests: { mock.log.count },
                requestsToSendOneVersion: 5,
                passphrase: encrypted ? "feed passphrase" : nil, requestsToReadKey: 3), in: fixture.directory)
    }
}
