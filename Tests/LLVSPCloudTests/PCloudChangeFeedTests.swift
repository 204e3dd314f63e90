import Foundation
import LLVS
import LLVSPCloud
import LLVSTestSupport
import Testing

/// Syncs through pCloud's diff feed: one request when nothing is new, a full listing when the diffid is refused.
@Suite struct PCloudChangeFeedTests {
    @Test func syncsFollowTheDiffFeed() async throws {
        let fixture = try PCloudFixture()
        let configuration = fixture.fileSystem.configuration, tokens = fixture.tokenSource, mock = fixture.mock, http = fixture.http
        try await expectChangeFeedSync(ChangeFeedHarness(
            makeFileSystem: { PCloudFileSystem(configuration: configuration, http: http, authorizer: tokens) },
            expireCursors: { mock.expireChangeCursors() }, requests: { mock.log.count }), in: fixture.directory)
    }
}
