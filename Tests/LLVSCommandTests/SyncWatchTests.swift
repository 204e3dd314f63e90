import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs sync` through a change feed and `llvs sync --watch`, run as a user would against `llvs-mock pcloud-eu`.
@Suite final class SyncWatchTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    @discardableResult
    func llvs(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input)
    }

    func store(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    func addPCloudRemote() async throws -> MockProcess {
        let token = tests.directory.appendingPathComponent("issued-token.json").path
        let mock = try MockProcess(["pcloud-eu", "--token-out", token], lineCount: 2)
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "p", "pcloud:/Apps/LLVS", "--endpoint", mock.url, "--client-id",
                mock.fields["client_id"] ?? "",
                "--client-secret-stdin", input: Data((mock.fields["client_secret"] ?? "").utf8)
            ).status == 0)
        #expect(try await llvs("auth", "p", "--token-json", token).status == 0)
        return mock
    }

    /// The lines a process writes to a pipe, as they come (read on a thread of their own); the stream ends when the
    /// process closes its end, which it does by ending.
    static func lines(of pipe: Pipe) -> AsyncStream<String> {
        let (stream, continuation) = AsyncStream<String>.makeStream()
        let handle = pipe.fileHandleForReading
        Thread {
            var pending = Data()
            // availableData returns what has come (waiting for some), empty at the end; read(upToCount:) would wait
            // for a whole count.
            while case let chunk = handle.availableData, !chunk.isEmpty {
                pending.append(chunk)
                while let newline = pending.firstIndex(of: UInt8(ascii: "\n")) {
                    continuation.yield(String(decoding: pending[pending.startIndex..<newline], as: UTF8.self))
                    pending.removeSubrange(pending.startIndex...newline)
                }
            }
            if !pending.isEmpty { continuation.yield(String(decoding: pending, as: UTF8.self)) }
            continuation.finish()
        }.start()
        return stream
    }

    /// Reads lines until one is `expected`; the lines read, for a failure's message. False when the stream ended first.
    func wait(for expected: String, in lines: inout AsyncStream<String>.Iterator, seen: inout [String]) async -> Bool {
        while let line = await lines.next() {
            seen.append(line)
            if line == expected { return true }
        }
        return false
    }

    // The limit guards against a watcher that never stops; it is wide because the whole suite runs at once on two
    // cores (this test takes about 3 s alone, and once went past 2 minutes in CI, every step merely slow).
    @Test(.timeLimit(.minutes(6))) func watchSyncsWhatArrivesOnEitherSideAndStopsCleanlyOnCtrlC() async throws {
        let mock = try await addPCloudRemote()
        _ = mock
        try await llvs("init", "--store", store("a"))
        try await llvs("init", "--store", store("b"))
        _ = try await llvs("put", "k1", "-", "--store", store("a"), input: Data("one".utf8))
        #expect(try await llvs("sync", "p", "--store", store("a")).status == 0)

        let watcher = ChildProcess()
        watcher.executableURL = CommandLineTests.binary
        watcher.arguments = ["sync", "p", "--watch", "--max-pause", "2", "--store", store("b")]
        watcher.environment = CommandLineTests.cleanEnvironment.merging([
            "XDG_CONFIG_HOME": tests.directory.appendingPathComponent("config").path,
            "LLVS_HTTP_TRACE": "1",
        ]) { _, new in new }
        let output = Pipe()
        watcher.standardOutput = output
        watcher.standardError = output
        try watcher.run()
        try output.fileHandleForWriting.close()
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
        // Each step waits for the watcher's own report of it, never for a time.
        var lines = Self.lines(of: output).makeAsyncIterator()
        var seen: [String] = []

        // The first sync brings k1; a version another device sends later arrives by the feed.
        #expect(await wait(for: "Retrieved 1 version.", in: &lines, seen: &seen), "\(seen)")
        #expect(try await llvs("get", "k1", "--store", store("b")).text == "one")
        _ = try await llvs("put", "k2", "-", "--store", store("a"), input: Data("two".utf8))
        #expect(try await llvs("sync", "p", "--store", store("a")).status == 0)
        #expect(await wait(for: "Retrieved 1 version.", in: &lines, seen: &seen), "\(seen)")
        #expect(try await llvs("get", "k2", "--store", store("b")).text == "two")
        // A version saved into the watched store by another process is sent.
        _ = try await llvs("put", "k3", "-", "--store", store("b"), input: Data("three".utf8))
        #expect(await wait(for: "Sent 1 version.", in: &lines, seen: &seen), "\(seen)")
        #expect(try await llvs("sync", "p", "--store", store("a")).status == 0)
        #expect(try await llvs("get", "k3", "--store", store("a")).text == "three")

        kill(watcher.processIdentifier, SIGINT)
        while let line = await lines.next() { seen.append(line) }
        watcher.waitUntilExit()
        #expect(watcher.terminationStatus == 0, "\(seen)")
        #expect(seen.contains { $0.hasPrefix("Watching p for changes") } && seen.last == "Stopped watching.", "\(seen)")
        // Between events it waited on pCloud's long poll (`diff` with `block=1`), rather than syncing at every pause.
        #expect(
            seen.contains { $0.hasPrefix("→ ") && $0.contains("/diff?") && $0.contains("block=1") },
            "no long poll: \(seen.filter { $0.hasPrefix("→ ") })")
    }

    /// A remote without a change feed is looked at by syncing, and those looks back off as a feed's do: an idle watch
    /// makes a handful of requests, and prints nothing after its first sync. The window is a measurement, not an
    /// order of events: a busy machine only makes fewer looks in it, so the bound holds however slow the run is.
    @Test(.timeLimit(.minutes(3)), arguments: ["webdav", "file"])
    func anIdleWatchOfARemoteWithoutAFeedBacksOff(kind: String) async throws {
        let mock = try await tests.addRemote(kind, folder: "watched")
        defer { withExtendedLifetime(mock) {} }
        try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("v".utf8))
        #expect(try await llvs("sync", "home", "--store", store("a")).status == 0)

        let watcher = ChildProcess()
        watcher.executableURL = CommandLineTests.binary
        watcher.arguments = ["sync", "home", "--watch", "--store", store("a")]
        watcher.environment = CommandLineTests.cleanEnvironment.merging([
            "XDG_CONFIG_HOME": tests.directory.appendingPathComponent("config").path,
            "LLVS_HTTP_TRACE": "1",
        ]) { _, new in new }
        let output = Pipe(), trace = Pipe()
        watcher.standardOutput = output
        watcher.standardError = trace
        try watcher.run()
        try output.fileHandleForWriting.close()
        try trace.fileHandleForWriting.close()
        defer { if watcher.isRunning { kill(watcher.processIdentifier, SIGKILL) } }
        var lines = Self.lines(of: output).makeAsyncIterator()
        let traceLines = Self.lines(of: trace)
        let requests = Task {
            var count = 0; for await line in traceLines where line.contains("→ ") { count += 1 }; return count
        }
        var seen: [String] = []
        #expect(await wait(for: "Watching home for changes; Ctrl-C stops.", in: &lines, seen: &seen), "\(seen)")
        // A window to count in, not an order of events: a request rate has no event to wait for, and the bound below
        // is an upper one, which a slow machine (fewer looks in the window) can only meet more easily.
        try await Task.sleep(for: .seconds(10))
        kill(watcher.processIdentifier, SIGINT)
        while let line = await lines.next() { seen.append(line) }
        watcher.waitUntilExit()
        let count = await requests.value
        #expect(watcher.terminationStatus == 0, "\(seen)")
        // Looks at 1, 3 and 7 s (pauses of 1, 2 and 4 s), one listing each; the first sync's requests come before.
        #expect(
            seen.filter { $0.hasPrefix("Retrieved") || $0.hasPrefix("Sent") }.count == 2,
            "only the first sync reports: \(seen)")
        if kind == "webdav" { #expect(count <= 12, "\(count) requests in 10 s of an idle watch") }
    }

    @Test func aDamagedPositionFileCostsOneFullListingAndStatusReadsTheFeed() async throws {
        let mock = try await addPCloudRemote()
        _ = mock
        try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("v".utf8))
        #expect(try await llvs("sync", "p", "--store", store("a")).status == 0)
        let cursors = try FileManager.default.contentsOfDirectory(atPath: store("a") + "/remote-cursors")
        #expect(cursors.count == 1, "the store keeps one position for the remote")
        // A damaged position file costs one full listing, never a failure.
        try Data("not json".utf8).write(to: URL(fileURLWithPath: store("a") + "/remote-cursors/" + cursors[0]))
        let again = try await llvs("sync", "p", "--store", store("a"))
        #expect(again.status == 0 && again.text.contains("Sent 0 versions"), "\(again.error)")
        let status = try await llvs("status", "p", "--store", store("a"))
        #expect(status.text.contains("0 to retrieve, 0 to send"), "\(status.text)")
        let usage = try await llvs("sync", "p", "--max-pause", "5", "--store", store("a"))
        #expect(usage.status == 2 && usage.error.contains("--max-pause goes with --watch"), "\(usage.error)")
    }
}

/// With several remotes, a store syncs with the one it last synced with when none is named, and `status` says which.
@Suite final class RememberedRemoteTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    func llvs(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input)
    }

    func store(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    @Test func syncWithoutANameUsesTheRemoteTheStoreLastSyncedWith() async throws {
        for name in ["one", "two"] {
            #expect(
                try await llvs(
                    "remote", "add", "--all-stores", name,
                    "file://" + tests.directory.appendingPathComponent("remote-\(name)").path
                ).status == 0)
        }
        _ = try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("v".utf8))
        let unnamed = try await llvs("sync", "--store", store("a"))
        #expect(unnamed.status == 2 && unnamed.error.contains("name the remote: one, two"), "\(unnamed.error)")
        #expect(try await llvs("sync", "two", "--store", store("a")).text.contains("Sent 1 version"))
        _ = try await llvs("put", "k2", "-", "--store", store("a"), input: Data("w".utf8))
        let remembered = try await llvs("sync", "--store", store("a"))
        #expect(remembered.status == 0 && remembered.text.contains("Sent 1 version"), "\(remembered.error)")
        #expect(
            FileManager.default.fileExists(atPath: tests.directory.appendingPathComponent("remote-two/versions").path))
        #expect(
            !FileManager.default.fileExists(atPath: tests.directory.appendingPathComponent("remote-one/versions").path),
            "remote one was never used")
        let status = try await llvs("status", "--store", store("a"))
        #expect(
            status.text.contains("Remote two: 2 versions; 0 to retrieve, 0 to send.")
                && status.text.contains("Last synced with two"), "\(status.text)")
        // A clone remembers the remote it came from.
        #expect(try await llvs("clone", "one", store("b")).status != 0, "remote one holds no store")
        #expect(try await llvs("clone", "two", store("c")).status == 0)
        #expect(try await llvs("status", "--store", store("c")).text.contains("Last synced with two"))
    }

    @Test func remoteShowAndRenameKeepWhatBelongsToTheRemote() async throws {
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "drive", "gdrive:/llvs", "--endpoint", "http://127.0.0.1:9",
                "--client-id", "cid",
                "--client-secret-stdin", input: Data("s3cret".utf8)
            ).status == 0)
        let shown = try await llvs("remote", "show", "drive")
        #expect(
            shown.text.contains("drive: gdrive:/llvs (Google Drive; kept for all stores)")
                && shown.text.contains("account: gdrive")
                && shown.text.contains("client-id: cid")
                && shown.text.contains("not authorized yet: run `llvs auth gdrive`")
                && !shown.text.contains("s3cret"), "\(shown.text)")
        let json = try await llvs("remote", "show", "drive", "--json")
        #expect(
            json.text.contains("\"secretKept\" : true") && json.text.contains("\"authorized\" : false"), "\(json.text)")

        _ = try await llvs("init", "--store", store("a"))
        #expect(
            try await llvs(
                "remote", "add", "other", "file://" + tests.directory.appendingPathComponent("r").path, "--store",
                store("a")
            ).status == 0)
        #expect(try await llvs("sync", "other", "--store", store("a")).status == 0)
        let wrongLevel = try await llvs("remote", "rename", "drive", "cloud", "--store", store("a"))
        #expect(wrongLevel.status == 3 && wrongLevel.error.contains("add --all-stores"), "\(wrongLevel.error)")
        let renamed = try await llvs("remote", "rename", "--all-stores", "drive", "cloud")
        #expect(renamed.status == 0 && renamed.text.contains("Renamed remote drive to cloud"), "\(renamed.error)")
        let accounts = tests.directory.appendingPathComponent("config/llvs/accounts")
        #expect(
            FileManager.default.fileExists(atPath: accounts.appendingPathComponent("gdrive.secret").path),
            "the secret is the account's, not the remote's")
        #expect(try await llvs("remote", "show", "cloud").text.contains("account: gdrive"))
        #expect(try await llvs("remote", "rename", "other", "moved", "--store", store("a")).status == 0)
        #expect(
            try await llvs("status", "--store", store("a")).text.contains("Last synced with moved"),
            "the store's remembered remote follows the rename")
        #expect(try await llvs("remote", "rename", "--all-stores", "nothing", "x").status == 3)
        #expect(try await llvs("remote", "add", "--all-stores", "spare", "file:///tmp/llvs-spare").status == 0)
        #expect(try await llvs("remote", "rename", "--all-stores", "cloud", "spare").status == 1)
        #expect(try await llvs("remote", "rename", "--all-stores", "cloud", "bad name").status == 2)
    }
}
