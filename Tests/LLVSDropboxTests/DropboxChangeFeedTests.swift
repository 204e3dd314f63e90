import Foundation
import LLVS
import LLVSDropbox
import LLVSMocks
import LLVSTestSupport
import Testing

/// Syncs through a `list_folder` cursor: one request when nothing is new, a full listing after `reset`; and the long
/// poll `sync --watch` waits on.
@Suite struct DropboxChangeFeedTests {
    /// Plaintext, and through the encryption layer (the feed passes through it; each sync reads the key file once).
    @Test(arguments: [false, true])
    func syncsFollowTheListFolderCursor(encrypted: Bool) async throws {
        let fixture = try DropboxFixture()
        let configuration = fixture.fileSystem.configuration, tokens = fixture.tokenSource, mock = fixture.mock,
            http = fixture.http
        try await expectChangeFeedSync(
            ChangeFeedHarness(
                makeFileSystem: { DropboxFileSystem(configuration: configuration, http: http, authorizer: tokens) },
                expireCursors: { mock.expireChangeCursors() }, requests: { mock.log.count },
                passphrase: encrypted ? "feed passphrase" : nil), in: fixture.directory)
    }

    /// The long poll is held until something changes, is sent without the token, and a `backoff` it answers holds the next poll back: a wait shorter than the backoff
    /// left is one look at the feed instead.
    @Test(.timeLimit(.minutes(10))) func theLongPollWakesOnAChangeAndHonoursItsBackoff() async throws {
        var settings = MockDropboxServer.Settings()
        settings.longpollBackoff = 600
        let fixture = try DropboxFixture(settings: settings)
        let fs = fixture.fileSystem
        try await fs.makeFolder("store/versions")
        try await fs.makeFolder("store/changes")
        let watched = ["store/versions", "store/changes"]
        let cursor = try await fs.changeCursor(watching: watched)
        let polls = { fixture.requests(containing: "/longpoll") }
        // Dropbox's longest poll: the change below comes however late the loaded machine lets it.
        async let woke = fs.waitForChanges(in: watched, since: cursor, timeout: .seconds(480))
        // The poll is in (and held): then a version arrives.
        #expect(await fixture.mock.longPoll.held(), "the long poll never came in")
        try await fs.upload(Data("v".utf8), to: "store/versions/v1")
        #expect(try await woke == true)
        #expect(polls().count == 1 && polls().allSatisfy { $0.headers["Authorization"] == nil })
        let changes = try await fs.changes(in: watched, since: cursor)
        #expect(changes.added["store/versions"] == ["v1"])
        // The answer asked for a 600 s backoff: the next wait of a minute looks at the feed once instead of polling.
        let next = changes.cursor
        #expect(try await fs.waitForChanges(in: watched, since: next, timeout: .seconds(60)) == false)
        #expect(polls().count == 1, "a poll was sent during the backoff")
    }

    /// A wait shorter than Dropbox's shortest poll (30 s) is one look at the feed: it answers at once.
    @Test func aShortWaitIsOneLookAtTheFeed() async throws {
        let fixture = try DropboxFixture()
        let fs = fixture.fileSystem
        try await fs.makeFolder("s/versions")
        let cursor = try await fs.changeCursor(watching: ["s/versions"])
        #expect(try await fs.waitForChanges(in: ["s/versions"], since: cursor, timeout: .seconds(5)) == false)
        try await fs.upload(Data("v".utf8), to: "s/versions/v2")
        #expect(try await fs.waitForChanges(in: ["s/versions"], since: cursor, timeout: .seconds(5)) == true)
        #expect(fixture.requests(containing: "/longpoll").isEmpty)
    }

    /// Removing a watched folder, or one above it, expires the cursor, so the next sync lists in full.
    @Test func removingAWatchedFolderOrItsParentExpiresTheCursor() async throws {
        let fixture = try DropboxFixture()
        let fs = fixture.fileSystem
        for parentRemoved in [false, true] {
            try await fs.upload(Data("v".utf8), to: "p/versions/v1")
            let cursor = try await fs.changeCursor(watching: ["p/versions"])
            try await fs.removeFolder(parentRemoved ? "p" : "p/versions")
            await expectCursorExpired { _ = try await fs.changes(in: ["p/versions"], since: cursor) }
            if !parentRemoved { try await fs.removeFolder("p") }
        }
    }
}
