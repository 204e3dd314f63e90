import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP
import LLVSMocks
import LLVSTestSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs` processes against an in-process Box mock, where Box's single-use refresh tokens matter most: two
/// processes refreshing at once, and processes killed around a refresh.
@Suite(.serialized) struct BoxProcessTests {
    static let binary: URL? = {
        let packageRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        for folder in [URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent(), Bundle.main.bundleURL.deletingLastPathComponent(),
                       packageRoot.appendingPathComponent(".build/debug")] {
            let url = folder.appendingPathComponent("llvs")
            if FileManager.default.isExecutableFile(atPath: url.path) { return url }
        }
        return nil
    }()

    /// A folder of its own, a Box mock, and `box`, an authorized remote on it.
    final class Setup: Sendable {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-box-process-\(UUID().uuidString)")
        let mock: MockBoxServer
        var tokenFile: TokenFile { TokenFile(path: folder.appendingPathComponent("config/llvs/accounts/box.token.json").path) }

        init() async throws {
            mock = try MockBoxServer()
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let added = try await llvs("remote", "add", "--all-stores", "box", "box:/LLVS/shared", "--endpoint", mock.endpoint.absoluteString,
                                       "--client-id", mock.oauth.settings.clientId)
            #expect(added.status == 0, "\(added.errors)")
            let issued = folder.appendingPathComponent("issued.json")
            try TokenFile(path: issued.path).write(mock.issueToken())
            let auth = try await llvs("auth", "box", "--token-json", issued.path)
            #expect(auth.status == 0, "\(auth.errors)")
        }

        deinit {
            mock.stop()
            try? FileManager.default.removeItem(at: folder)
        }

        var environment: [String] {
            ["XDG_CONFIG_HOME=\(folder.appendingPathComponent("config").path)", "LLVS_BOX_CLIENT_SECRET=\(mock.oauth.settings.clientSecret ?? "")"]
        }

        func llvs(_ arguments: String...) async throws -> ProcessOutcome {
            try await runProgram(URL(fileURLWithPath: "/usr/bin/env"), environment + [BoxProcessTests.binary!.path] + arguments)
        }

        func store(_ name: String) -> String { folder.appendingPathComponent(name).path }
    }

    /// Two `llvs sync` processes on one Box remote meet a token Box no longer accepts: exactly one refresh reaches
    /// the mock (the second process waits on the token file's lock, reads the new token and uses it), both
    /// finish, and the file holds the live refresh token.
    @Test(.enabled(if: binary != nil, "the llvs binary is not built"))
    func twoLLVSProcessesSyncingWhileTheTokenExpiresRefreshOnce() async throws {
        let setup = try await Setup()
        let value = setup.folder.appendingPathComponent("value.txt")
        try Data("a value".utf8).write(to: value)
        for name in ["a", "b"] {
            #expect(try await setup.llvs("init", "--store", setup.store(name)).status == 0)
            #expect(try await setup.llvs("put", "from-\(name)", value.path, "--store", setup.store(name)).status == 0)
        }
        #expect(try await setup.llvs("sync", "box", "--store", setup.store("a")).status == 0)
        setup.mock.expireAccessTokens()
        async let first = setup.llvs("sync", "box", "--store", setup.store("a"))
        async let second = setup.llvs("sync", "box", "--store", setup.store("b"))
        let (a, b) = try await (first, second)
        #expect(a.status == 0, "\(a.errors)")
        #expect(b.status == 0, "\(b.errors)")
        #expect(setup.mock.oauth.refreshCount == 1, "one refresh for both processes")
        #expect(setup.mock.oauth.invalidGrantCount == 0, "no process used a spent refresh token")
        let onDisk = try #require(try setup.tokenFile.read())
        #expect(setup.mock.oauth.isLiveRefreshToken(onDisk.refreshToken ?? ""))
        #expect(try await setup.llvs("sync", "box", "--store", setup.store("a")).status == 0)
        #expect(try await setup.llvs("get", "from-b", "--store", setup.store("a")).status == 0)
    }

    /// 50 runs of `llvs sync`, each meeting a token Box no longer accepts and killed with SIGKILL at a random moment
    /// around its refresh. The token file is never torn; a run leaves an unusable file only when it was killed after
    /// Box spent the old refresh token and before the new one reached disk, a window in which the code does nothing
    /// but parse the answer and write the file (measured in `theRefreshWindowHoldsOnlyTheWrite`).
    @Test(.enabled(if: binary != nil, "the llvs binary is not built"))
    func killingLLVSAroundARefreshLeavesAUsableTokenFile() async throws {
        let setup = try await Setup()
        #expect(try await setup.llvs("init", "--store", setup.store("s")).status == 0)
        #expect(try await setup.llvs("sync", "box", "--store", setup.store("s")).status == 0)
        var generator = SeededGenerator(seed: 2026)
        var usable = 0, lockedOut = 0, killed = 0
        for _ in 0..<50 {
            let before = try #require(try setup.tokenFile.read(), "the token file must always parse")
            let refreshesBefore = setup.mock.oauth.refreshCount
            setup.mock.expireAccessTokens()
            let delay = Double(generator.next() % 200) / 1000
            let status = try await runKilled(setup, ["sync", "box", "--store", setup.store("s")], after: delay)
            // A request the process sent just before it died is still served by the mock: let it land before looking.
            try await Task.sleep(for: .milliseconds(100))
            let after = try #require(try setup.tokenFile.read(), "the token file must always parse")
            if setup.mock.oauth.isLiveRefreshToken(after.refreshToken ?? "") {
                usable += 1
            } else {
                lockedOut += 1
                // Only the one window can do this: Box spent the refresh token the file still holds.
                #expect(after.refreshToken == before.refreshToken && setup.mock.oauth.refreshCount > refreshesBefore,
                        "the file was left unusable outside the refresh window")
                try setup.tokenFile.write(setup.mock.issueToken()) // what `llvs auth box` again does
            }
            if status != 0 { killed += 1 }
        }
        print("Box refresh under SIGKILL: \(usable) of 50 runs left a usable token file (\(killed) were killed before they finished), " +
              "\(lockedOut) were killed inside the window between Box's answer and the new file")
        #expect(usable + lockedOut == 50)
        // How many kills land in the window depends on the disk's fsync time under load (2 of 50 with the whole
        // suite running here, 0 or 1 alone); that each of them is that window, and nothing else, is asserted above.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: setup.folder.appendingPathComponent("config/llvs").path)
            .filter { $0.hasPrefix(".box.token.json.") }
        #expect(leftovers.count <= 1, "temporary token files pile up: \(leftovers)")
    }

    /// The window between Box's answer to a refresh and the new token on disk, over 100 refreshes in this process.
    /// What the window holds is asserted by what can be seen, not by a time limit (the fsync inside it took over a
    /// second once on a loaded CI machine): each refresh is one request to the token endpoint, and when `refresh`
    /// returns, the file already holds the token it returns. The window's length is printed as a figure.
    @Test func aRefreshIsOneRequestAndItsTokenIsOnDiskWhenItReturns() async throws {
        let fixture = try BoxFixture()
        var kept: [Duration] = []
        for _ in 0..<100 {
            let rejected = try #require(try fixture.tokenFile.read()).accessToken
            let before = fixture.mock.log.count
            let token = try await fixture.tokenSource.refresh(replacing: rejected)
            let sent = fixture.mock.log.dropFirst(before)
            #expect(sent.count == 1 && sent.first?.target == "/oauth2/token", "a refresh is one request to the token endpoint and nothing else")
            let onDisk = try #require(try fixture.tokenFile.read())
            #expect(onDisk.accessToken == token.accessToken && onDisk.refreshToken == token.refreshToken,
                    "the rotated refresh token is on disk before the new access token is handed out")
            #expect(fixture.mock.oauth.isLiveRefreshToken(onDisk.refreshToken ?? ""))
            kept.append(try #require(await fixture.tokenSource.lastRefreshKeptIn))
        }
        #expect(fixture.mock.oauth.refreshCount == 100 && fixture.mock.oauth.invalidGrantCount == 0)
        kept.sort()
        let milliseconds = { (duration: Duration) in Double(duration.components.attoseconds) / 1e15 + Double(duration.components.seconds) * 1000 }
        print("Box refresh window (answer received → new token file renamed into place), 100 refreshes: median " +
              String(format: "%.3f ms, 90th %.3f ms, max %.3f ms", milliseconds(kept[50]), milliseconds(kept[90]), milliseconds(kept[99])))
    }

    /// Starts `llvs` and kills it with SIGKILL after `delay` seconds (or lets it finish first); its exit status, or -9.
    private func runKilled(_ setup: Setup, _ arguments: [String], after delay: Double) async throws -> Int32 {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = setup.environment + [Self.binary!.path] + arguments
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        return await withCheckedContinuation { continuation in
            let thread = Thread {
                Thread.sleep(forTimeInterval: delay)
                if process.isRunning { kill(process.processIdentifier, SIGKILL) }
                process.waitUntilExit()
                continuation.resume(returning: process.terminationReason == .uncaughtSignal ? -9 : process.terminationStatus)
            }
            thread.start()
        }
    }
}
