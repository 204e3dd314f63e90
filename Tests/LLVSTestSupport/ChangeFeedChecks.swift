import Foundation
import LLVS
import LLVSEncryption
import Testing

/// What the change feed checks need of a connector and its mock: a fresh connector for each sync (each `llvs sync`
/// is a new process, with an empty ID cache), a way to make the service refuse the cursors it handed out, and the
/// number of requests the service has answered.
public struct ChangeFeedHarness: Sendable {
    public var makeFileSystem: @Sendable () -> any CloudFileSystem
    public var expireCursors: @Sendable () -> Void
    public var requests: @Sendable () -> Int
    /// Requests an incremental sync may make when the remote has one new version (the feed and the version's two
    /// files, plus any the service needs to reach a file's bytes).
    public var requestsForOneNewVersion: Int
    /// Requests an incremental sync may make to send one new version: the feed and the two uploads, plus the
    /// lookups a service needs before writing a file (Drive, where names are not unique, looks before it creates).
    public var requestsToSendOneVersion: Int
    /// When set, every sync goes through the encryption layer with this passphrase, as an `--encrypt` remote's does;
    /// each (a new process) then reads the key file once more, in `requestsToReadKey` requests (a service that
    /// addresses files by ID looks up the folder and the file first).
    public var passphrase: String?
    public var requestsToReadKey: Int

    public init(
        makeFileSystem: @escaping @Sendable () -> any CloudFileSystem, expireCursors: @escaping @Sendable () -> Void,
        requests: @escaping @Sendable () -> Int, requestsForOneNewVersion: Int = 3, requestsToSendOneVersion: Int = 3,
        passphrase: String? = nil, requestsToReadKey: Int = 1
    ) {
        self.makeFileSystem = makeFileSystem
        self.expireCursors = expireCursors
        self.requests = requests
        self.requestsForOneNewVersion = requestsForOneNewVersion
        self.requestsToSendOneVersion = requestsToSendOneVersion
        self.passphrase = passphrase
        self.requestsToReadKey = requestsToReadKey
    }

    /// Requests a fresh file system makes before its first of the sync: the key file's, when encrypted.
    var requestsToOpen: Int { passphrase == nil ? 0 : requestsToReadKey }
}

/// Two stores syncing through one remote by its change feed, as `llvs sync` does: a sync with nothing new costs
/// one request; one new version costs the feed plus its files; a cursor the service declares expired gives a full
/// listing and misses nothing; a version written while a sync runs is picked up by the next; a crash between
/// storing versions and saving the cursor makes the next sync see them again and leaves the store as it was.
public func expectChangeFeedSync(
    _ harness: ChangeFeedHarness, in directory: URL, sourceLocation: SourceLocation = #_sourceLocation
) async throws {
    let base = "feed-\(UUID().uuidString.prefix(8))"
    let a = try StoreCoordinator(store: try Store(creatingAt: directory.appendingPathComponent("a-\(base)")))
    let b = try StoreCoordinator(store: try Store(creatingAt: directory.appendingPathComponent("b-\(base)")))
    func exchange(_ coordinator: StoreCoordinator) -> CloudFileSystemExchange {
        let plain = harness.makeFileSystem()
        let fileSystem =
            harness.passphrase.map { RemoteEncryption.encrypting(plain, folder: base, passphrase: $0) } ?? plain
        if harness.passphrase != nil {
            #expect(
                fileSystem is any CloudChangeFeed, "the encryption layer keeps the change feed",
                sourceLocation: sourceLocation)
        }
        return CloudFileSystemExchange(
            store: coordinator.store, fileSystem: fileSystem, basePath: base,
            cursorFile: RemoteCursorFile(store: coordinator.store, identity: "remote " + base))
    }
    func sync(_ coordinator: StoreCoordinator) async throws -> (report: ExchangeReport, requests: Int) {
        let exchange = exchange(coordinator)
        let before = harness.requests()
        let report = try await coordinator.exchange(with: exchange)
        #expect(
            report.retrieve.failures.isEmpty && report.send.failures.isEmpty,
            "\(report.retrieve.failures + report.send.failures)",
            sourceLocation: sourceLocation)
        return (report, harness.requests() - before)
    }

    for i in 0..<3 { try await a.save(inserting: [Value(id: Value.ID("a\(i)"), data: Data("a\(i)".utf8))]) }
    let first = try await sync(a)
    #expect(first.report.listing == .fullListing, "the first sync lists the remote", sourceLocation: sourceLocation)
    #expect(first.report.send.sent.count == 3, sourceLocation: sourceLocation)
    #expect(try await sync(b).report.retrieve.retrieved.count == 3, sourceLocation: sourceLocation)

    // Nothing new: one request, the feed.
    let idle = try await sync(b)
    #expect(idle.report.listing == .changeFeed, sourceLocation: sourceLocation)
    #expect(
        idle.requests == 1 + harness.requestsToOpen, "a sync with nothing new made \(idle.requests) requests",
        sourceLocation: sourceLocation)

    // One new version: the feed and the version's files. (a's second sync first: its first position was taken
    // before the remote's folders existed, so this one looks them up once; from then on the position carries them.)
    _ = try await sync(a)
    try await a.save(inserting: [Value(id: "one-more", data: Data("new".utf8))])
    let sent = try await sync(a)
    #expect(sent.report.listing == .changeFeed && sent.report.send.sent.count == 1, sourceLocation: sourceLocation)
    #expect(
        sent.requests <= harness.requestsToSendOneVersion + harness.requestsToOpen,
        "sending one version made \(sent.requests) requests (at most \(harness.requestsToSendOneVersion))",
        sourceLocation: sourceLocation)
    let received = try await sync(b)
    #expect(
        received.report.listing == .changeFeed && received.report.retrieve.retrieved.count == 1,
        sourceLocation: sourceLocation)
    #expect(
        received.requests <= harness.requestsForOneNewVersion + harness.requestsToOpen,
        "receiving one version made \(received.requests) requests (at most \(harness.requestsForOneNewVersion))",
        sourceLocation: sourceLocation)
    #expect(try await b.value(id: "one-more")?.data == Data("new".utf8), sourceLocation: sourceLocation)

    // A cursor the service declares expired: a full listing, nothing missed.
    harness.expireCursors()
    try await a.save(inserting: [Value(id: "after-expiry", data: Data("x".utf8))])
    let expiredSend = try await sync(a)
    #expect(expiredSend.report.send.sent.count == 1, sourceLocation: sourceLocation)
    let expiredReceive = try await sync(b)
    guard case .fullListingAfterExpiredCursor = expiredReceive.report.listing else {
        Issue.record(
            "an expired cursor gave \(expiredReceive.report.listing), not a full listing",
            sourceLocation: sourceLocation)
        return
    }
    #expect(expiredReceive.report.retrieve.retrieved.count == 1, sourceLocation: sourceLocation)
    #expect(
        try await sync(b).report.listing == .changeFeed, "the new cursor is used from then on",
        sourceLocation: sourceLocation)

    // A version written while a sync runs (after the feed was read) is picked up by the next sync.
    let during = exchange(b)
    let listing = try await during.remoteListing()
    try await a.save(inserting: [Value(id: "during", data: Data("d".utf8))])
    _ = try await sync(a)
    let retrieved = try await during.retrieve(remoteVersionIds: listing.versionIds)
    try await during.syncCompleted(listing, retrieved: retrieved, sent: SendReport())
    #expect(try await b.value(id: "during") == nil, sourceLocation: sourceLocation)
    #expect(try await sync(b).report.retrieve.retrieved.count == 1, sourceLocation: sourceLocation)
    #expect(try await b.value(id: "during")?.data == Data("d".utf8), sourceLocation: sourceLocation)

    // A crash between storing versions and saving the cursor: the next sync sees them again, the store is unchanged.
    try await a.save(inserting: [Value(id: "crash", data: Data("c".utf8))])
    _ = try await sync(a)
    let crashing = exchange(b)
    let savedBeforeCrash = try #require(
        crashing.cursorFile?.load(), "b keeps a feed position", sourceLocation: sourceLocation)
    let crashListing = try await crashing.remoteListing()
    let crashed = try await crashing.retrieve(remoteVersionIds: crashListing.versionIds)
    #expect(crashed.retrieved.count == 1, sourceLocation: sourceLocation)
    let crashVersion = try #require(crashed.retrieved.first, sourceLocation: sourceLocation)
    // (no syncCompleted: the process died here)
    #expect(
        crashing.cursorFile?.load() == savedBeforeCrash, "a sync that did not complete saved no position",
        sourceLocation: sourceLocation)
    #expect(
        !savedBeforeCrash.versionIds.contains(crashVersion), "the saved position does not know the new version",
        sourceLocation: sourceLocation)
    let versionsBefore = Set(b.store.history.versions.keys)
    let repeatAfterCrash = try await exchange(b).remoteListing()
    // The new version is in the listing only because the feed, asked from the old position, reported it again.
    #expect(
        repeatAfterCrash.versionIds.contains(crashVersion), "the old position's feed reports the stored version again",
        sourceLocation: sourceLocation)
    let again = try await sync(b)
    #expect(again.report.listing == .changeFeed, sourceLocation: sourceLocation)
    #expect(again.report.retrieve.retrieved.isEmpty && again.report.send.sent.isEmpty, sourceLocation: sourceLocation)
    #expect(
        Set(b.store.history.versions.keys) == versionsBefore, "the repeat changed the store",
        sourceLocation: sourceLocation)
    #expect(Set(a.store.history.versions.keys) == versionsBefore, sourceLocation: sourceLocation)
}
