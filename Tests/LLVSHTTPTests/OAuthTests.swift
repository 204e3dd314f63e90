import Foundation
import LLVS
import LLVSSupport
import LLVSHTTP
import LLVSMocks
import Synchronization
import Testing

/// A service mock in miniature: the OAuth endpoints, and one API path that needs a live bearer token.
struct OAuthFixture {
    let oauth: MockOAuthServer
    let server: MockHTTPServer
    let folder: URL
    let tokenFile: TokenFile
    let http = client()

    /// `holdingTokenAnswers`: the token endpoint answers only once the semaphore is signalled (once per answer), so a
    /// test decides when a refresh may end.
    init(
        settings: MockOAuthServer.Settings = MockOAuthServer.Settings(),
        holdingTokenAnswers hold: DispatchSemaphore? = nil
    ) throws {
        let oauth = MockOAuthServer(settings: settings)
        self.oauth = oauth
        server = try MockHTTPServer { request in
            if let hold, request.path == oauth.tokenPath { hold.wait() }
            if let answer = oauth.handle(request) { return answer }
            guard oauth.isAuthorized(request.headers["Authorization"]) else { return oauth.unauthorizedResponse() }
            return .text(200, "hello")
        }
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-oauth-\(UUID().uuidString)")
        tokenFile = TokenFile(path: folder.appendingPathComponent("remote.token.json").path)
    }

    var configuration: OAuthConfiguration { oauth.configuration(baseURL: server.baseURL) }

    func source(now: @escaping @Sendable () -> Date = { Date() }) -> OAuthTokenSource {
        OAuthTokenSource(
            file: tokenFile, configuration: configuration, http: http, reauthorizeCommand: "llvs auth mock", now: now)
    }

    var api: HTTPRequest { HTTPRequest(url: server.baseURL.appendingPathComponent("api/hello")) }
}

@Suite struct OAuthTests {
    @Test func theTokenFileIsPrivateAtomicAndKeepsExtras() throws {
        let fixture = try OAuthFixture()
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        let token = OAuthToken(
            accessToken: "a", refreshToken: "r", expiresAt: Date(timeIntervalSince1970: 1_800_000_000),
            scope: "files", extras: ["hostname": "eapi.pcloud.com"])
        try fixture.tokenFile.write(token)
        let attributes = try FileManager.default.attributesOfItem(atPath: fixture.tokenFile.path)
        #expect((attributes[.posixPermissions] as? Int) == 0o600)
        #expect(try fixture.tokenFile.read() == token)
        let text = try String(contentsOfFile: fixture.tokenFile.path, encoding: .utf8)
        #expect(text.contains("\"expires_at\" : \"2027-01-15T08:00:00Z\""))
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: fixture.folder.path).filter { $0.hasPrefix(".") }
                .isEmpty)
    }

    @Test func fourConcurrentRequestsMeetingAnExpiredTokenCauseOneRefresh() async throws {
        let fixture = try OAuthFixture()
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        try fixture.tokenFile.write(fixture.oauth.issueToken())
        fixture.oauth.expireAccessTokens()  // the service says expired though the file thinks not
        let source = fixture.source()
        try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<4 { group.addTask { try await fixture.http.send(fixture.api, authorizer: source).status } }
            for try await status in group { #expect(status == 200) }
        }
        #expect(fixture.oauth.refreshCount == 1)
        #expect(await source.refreshCount == 1)
    }

    @Test func aTokenNearItsExpiryIsRefreshedAheadOfTime() async throws {
        let fixture = try OAuthFixture()
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        var token = fixture.oauth.issueToken()
        token.expiresAt = Date().addingTimeInterval(30)  // within the 60 s margin
        try fixture.tokenFile.write(token)
        let response = try await fixture.http.send(fixture.api, authorizer: fixture.source())
        #expect(response.status == 200)
        #expect(fixture.oauth.refreshCount == 1)
        #expect(fixture.server.log.filter { $0.target.hasPrefix("/api") }.count == 1)
    }

    @Test func aRotatedRefreshTokenIsOnDiskBeforeTheNewAccessTokenIsUsed() async throws {
        var settings = MockOAuthServer.Settings()
        settings.rotatesRefreshTokens = true
        settings.singleUseRefreshTokens = true
        let fixture = try OAuthFixture(settings: settings)
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        let first = fixture.oauth.issueToken()
        try fixture.tokenFile.write(first)
        fixture.oauth.expireAccessTokens()
        let seen = Mutex<[String?]>([])
        // When the API request with the new token arrives, the file must already hold the new refresh token.
        let probe = try MockHTTPServer { request in
            if let answer = fixture.oauth.handle(request) { return answer }
            seen.withLock { $0.append((try? fixture.tokenFile.read())?.refreshToken) }
            return fixture.oauth.isAuthorized(request.headers["Authorization"])
                ? .text(200, "ok") : fixture.oauth.unauthorizedResponse()
        }
        let configuration = fixture.oauth.configuration(baseURL: probe.baseURL)
        let source = OAuthTokenSource(
            file: fixture.tokenFile, configuration: configuration, http: fixture.http,
            reauthorizeCommand: "llvs auth mock")
        let response = try await fixture.http.send(
            HTTPRequest(url: probe.baseURL.appendingPathComponent("api")), authorizer: source)
        #expect(response.status == 200)
        let onDisk = try #require(try fixture.tokenFile.read())
        #expect(onDisk.refreshToken != first.refreshToken)
        #expect(seen.withLock { $0 }.last == onDisk.refreshToken)
    }

    @Test func invalidGrantNamesTheCommandAndLeavesTheFileAlone() async throws {
        let fixture = try OAuthFixture()
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        try fixture.tokenFile.write(fixture.oauth.issueToken())
        let before = try Data(contentsOf: URL(fileURLWithPath: fixture.tokenFile.path))
        fixture.oauth.expireAccessTokens()
        fixture.oauth.revokeRefreshTokens()
        do {
            _ = try await fixture.http.send(fixture.api, authorizer: fixture.source())
            Issue.record("expected reauthorizationRequired")
        } catch let error as OAuthError {
            guard case .reauthorizationRequired(let command, _) = error else { Issue.record("got \(error)"); return }
            #expect(command == "llvs auth mock")
            #expect(error.description.contains("Run `llvs auth mock`"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: fixture.tokenFile.path)) == before)
    }

    @Test func aSecond401AfterARefreshIsAnAnswerNotALoop() async throws {
        let oauth = MockOAuthServer()
        let server = try MockHTTPServer { request in oauth.handle(request) ?? oauth.unauthorizedResponse() }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-oauth-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = TokenFile(path: folder.appendingPathComponent("t.json").path)
        try file.write(oauth.issueToken())
        let http = client()
        let source = OAuthTokenSource(
            file: file, configuration: oauth.configuration(baseURL: server.baseURL), http: http,
            reauthorizeCommand: "llvs auth x")
        let response = try await http.send(
            HTTPRequest(url: server.baseURL.appendingPathComponent("api")), authorizer: source)
        #expect(response.status == 401)
        #expect(oauth.refreshCount == 1)
        #expect(server.log.filter { $0.target.hasPrefix("/api") }.count == 2)
    }

    @Test func twoProcessesRefreshingOneSingleUseRefreshTokenBothEndWithAWorkingToken() async throws {
        var settings = MockOAuthServer.Settings()
        settings.rotatesRefreshTokens = true
        settings.singleUseRefreshTokens = true
        // The token endpoint holds its answer until both helpers have said they are asking for a token: their attempts
        // overlap by construction, not by a window of time.
        let hold = DispatchSemaphore(value: 0)
        let fixture = try OAuthFixture(settings: settings, holdingTokenAnswers: hold)
        defer { try? FileManager.default.removeItem(at: fixture.folder) }
        var token = fixture.oauth.issueToken()
        token.expiresAt = Date().addingTimeInterval(-10)
        try fixture.tokenFile.write(token)
        let barrier = fixture.folder.appendingPathComponent("go")
        try FileManager.default.createDirectory(at: fixture.folder, withIntermediateDirectories: true)
        let helper = helperBinary()
        let processes = try (0..<2).map { _ -> (ChildProcess, Pipe) in
            let process = ChildProcess()
            process.standardError = FileHandle.nullDevice  // a child left running must not hold ours
            process.executableURL = helper
            process.arguments = [
                "refresh", fixture.tokenFile.path,
                fixture.server.baseURL.appendingPathComponent(fixture.oauth.tokenPath).absoluteString,
                settings.clientId, settings.clientSecret!, barrier.path,
            ]
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            return (process, pipe)
        }
        func line(_ pipe: Pipe) async throws -> String {
            let handle = pipe.fileHandleForReading
            return try await runBlocking { () -> String in
                var text = ""
                while !text.hasSuffix("\n") {
                    let data = handle.readData(ofLength: 1); if data.isEmpty { break };
                    text += String(decoding: data, as: UTF8.self)
                }
                return text
            }
        }
        // Both wait at the barrier before either refreshes.
        for (_, pipe) in processes { #expect(try await line(pipe) == "ready\n") }
        try Data().write(to: barrier)
        for (_, pipe) in processes { #expect(try await line(pipe) == "attempting\n") }
        // Both are now inside `token()`, and no refresh has been answered: let the answers go (one for each, should
        // the lock fail and both send).
        hold.signal()
        hold.signal()
        var tokens: [String] = []
        for (process, pipe) in processes {
            let handle = pipe.fileHandleForReading
            let output = try await runBlocking { handle.readDataToEndOfFile() }
            try await runBlocking { process.waitUntilExit() }
            #expect(process.terminationStatus == 0)
            let fields = String(decoding: output, as: UTF8.self).split(separator: " ").map {
                $0.trimmingCharacters(in: .whitespacesAndNewlines)
            }
            guard fields.count == 3 else { Issue.record("the helper printed \(fields)"); continue }
            tokens.append(fields[0])
        }
        #expect(tokens.count == 2)
        #expect(fixture.oauth.invalidGrantCount == 0)
        #expect(fixture.oauth.refreshCount == 1)
        for token in tokens { #expect(fixture.oauth.isAuthorized("Bearer \(token)"), "\(token)") }
    }

    @Test(arguments: [OAuthConfiguration.ClientAuthentication.body, .basic])
    func theAuthorizationCodeFlowEndToEnd(clientAuthentication: OAuthConfiguration.ClientAuthentication) async throws {
        let fixture = try OAuthFixture()
        let http = fixture.http
        let flow = OAuthAuthorization(
            configuration: fixture.oauth.configuration(
                baseURL: fixture.server.baseURL, clientAuthentication: clientAuthentication), http: http)
        // The "browser": opens the authorize URL and follows its redirect to the loopback listener.
        let token = try await flow.authorizeWithLoopback { url in
            let response = try await http.send(HTTPRequest(url: url))
            #expect(response.status == 200 && response.text.contains("authorized"))
        }
        #expect(fixture.oauth.isAuthorized("Bearer \(token.accessToken)"))
        #expect(token.refreshToken != nil)
    }

    /// A scripted browser that first opens a spare connection and sends nothing, asks for a favicon, posts, answers
    /// with another flow's state, sends a bare `?code` and an unchecked denial: each is refused with 400 while the
    /// sign-in goes on, and the real redirect then completes it.
    @Test(.timeLimit(.minutes(2))) func aStrayConnectionOrAHostileRequestCannotDerailTheLoopbackSignIn() async throws {
        let fixture = try OAuthFixture()
        let http = fixture.http
        let flow = OAuthAuthorization(
            configuration: fixture.oauth.configuration(baseURL: fixture.server.baseURL), http: http)
        let idle = Mutex<RawSocket?>(nil)
        let token = try await flow.authorizeWithLoopback(timeout: .seconds(60)) { url in
            let query = FormEncoding.decode(url.query ?? "")
            let port = try #require(URL(string: query["redirect_uri"] ?? "")?.port)
            idle.withLock { $0 = try? RawSocket(port: UInt16(port)) }  // connects, never sends a byte
            for request in [
                "GET /favicon.ico HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                "POST /?code=x&state=\(query["state"] ?? "") HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello",
                "GET /?code=stolen&state=another-flow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                "GET /?code HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                "GET /?error=access_denied&error_description=%1B%5D0%3Bowned%07 HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
                "GET /elsewhere?code=x&state=\(query["state"] ?? "") HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
            ] {
                let socket = try RawSocket(port: UInt16(port))
                try socket.send(request)
                let answer = try socket.receive(until: "</html>")
                #expect(answer.hasPrefix("HTTP/1.1 400"), "\(request.prefix(40)): \(answer.prefix(60))")
            }
            let response = try await http.send(HTTPRequest(url: url))
            #expect(response.status == 200 && response.text.contains("authorized"))
        }
        #expect(fixture.oauth.isAuthorized("Bearer \(token.accessToken)"))
        withExtendedLifetime(idle) {}
    }

    /// A denial that carries this attempt's state ends the sign-in, and says so in the browser and the terminal,
    /// without the control characters the service put in its description.
    @Test(.timeLimit(.minutes(2))) func aDenialEndsTheSignInWithAFailurePage() async throws {
        let fixture = try OAuthFixture()
        let flow = OAuthAuthorization(
            configuration: fixture.oauth.configuration(baseURL: fixture.server.baseURL), http: fixture.http)
        do {
            _ = try await flow.authorizeWithLoopback(timeout: .seconds(60)) { url in
                let query = FormEncoding.decode(url.query ?? "")
                let port = try #require(URL(string: query["redirect_uri"] ?? "")?.port)
                let socket = try RawSocket(port: UInt16(port))
                try socket.send(
                    "GET /?error=access_denied&error_description=no%1B%5B2J&state=\(query["state"] ?? "") HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
                )
                let answer = try socket.receive(until: "</html>")
                #expect(answer.contains("not authorized") && !answer.contains("LLVS is authorized"), "\(answer)")
            }
            Issue.record("a denial gave a token")
        } catch OAuthError.authorizationDenied(let reason) {
            #expect(reason == "no [2J", "\(reason.debugDescription)")
        }
    }

    /// Where a service does not check PKCE (Box, pCloud), a pasted bare code is refused: only the whole address,
    /// whose state is checked, is taken.
    @Test func aBareCodeIsRefusedWhereTheServiceDoesNotCheckPKCE() async throws {
        let fixture = try OAuthFixture()
        var configuration = fixture.configuration
        configuration.enforcesPKCE = false
        let flow = OAuthAuthorization(configuration: configuration, http: fixture.http)
        let attempt = flow.makeAttempt(redirectURI: "http://127.0.0.1:53682/")
        await #expect(throws: OAuthError.wholeAddressNeeded) {
            try await flow.finish(attempt, answer: "some-code-from-elsewhere")
        }
        await #expect(throws: OAuthError.stateMismatch) { try await flow.finish(attempt, answer: "/?code") }
        #expect(fixture.oauth.refreshCount == 0)
    }

    /// A token file may live in any folder the application chooses, a shared one too: writing it and taking its lock
    /// change nothing of the folder's mode (only the command line's own accounts folder is kept at 0700).
    @Test func aTokenFileLeavesItsFoldersModeAlone() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-shared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        chmod(folder.path, 0o1777)
        let file = TokenFile(path: folder.appendingPathComponent("token.json").path)
        try await file.withLock { try file.write(OAuthToken(accessToken: "a", tokenType: "Bearer")) }
        var info = stat()
        #expect(
            stat(folder.path, &info) == 0 && info.st_mode & 0o7777 == 0o1777,
            "the folder is now \(String(info.st_mode & 0o7777, radix: 8))")
    }

    @Test func theHeadlessFlowTakesAPastedRedirectOrCode() async throws {
        let fixture = try OAuthFixture()
        let flow = OAuthAuthorization(configuration: fixture.configuration, http: fixture.http)
        let attempt = flow.makeAttempt(redirectURI: "http://127.0.0.1:53682/")
        var visit = HTTPRequest(url: attempt.url)
        visit.followsRedirects = false
        let location = try #require(try await fixture.http.send(visit).headers["Location"])
        let token = try await flow.finish(attempt, answer: location)
        #expect(fixture.oauth.isAuthorized("Bearer \(token.accessToken)"))

        let second = flow.makeAttempt(redirectURI: "http://127.0.0.1:53682/")
        var again = HTTPRequest(url: second.url)
        again.followsRedirects = false
        let redirect = try #require(try await fixture.http.send(again).headers["Location"])
        let code = try #require(FormEncoding.decode(String(redirect.split(separator: "?")[1]))["code"])
        #expect(try await flow.finish(second, answer: "  \(code)\n").accessToken.hasPrefix("access-"))
        // The same code twice is refused: it is single use, and never retried.
        await #expect(throws: OAuthError.self) { try await flow.finish(second, answer: code) }
        await #expect(throws: OAuthError.stateMismatch) {
            try await flow.finish(flow.makeAttempt(redirectURI: "http://127.0.0.1:1/"), answer: redirect)
        }
    }

    /// The flow waits exactly the interval the service asks for between polls (on a clock the test moves, so nothing
    /// sleeps), and 5 s more after a `slow_down` (RFC 8628); the user approves after the third poll.
    @Test func theDeviceFlowPollsAtTheIntervalAskedAndSlowsDownWhenTold() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var settings = MockOAuthServer.Settings()
        settings.deviceInterval = 6
        let oauth = MockOAuthServer(settings: settings, now: { clock.withLock { $0 } })
        let server = try MockHTTPServer { request in oauth.handle(request) ?? .empty(404) }
        defer { server.stop() }
        let flow = OAuthAuthorization(configuration: oauth.configuration(baseURL: server.baseURL), http: client())
        let waits = Mutex<[Duration]>([])
        let userCode = Mutex("")
        let token = try await flow.authorizeWithDevice(
            sleep: { wait in
                let count = waits.withLock {
                    $0.append(wait); return $0.count
                }
                // The second wait is cut short, as if the client were impatient: the service answers that poll slow_down.
                let moved = count == 2 ? wait / 3 : wait
                clock.withLock { $0 = $0.addingTimeInterval(Double(moved.components.seconds)) }
                if count == 3 { oauth.approveDevice(userCode: userCode.withLock { $0 }) }
            },
            show: { code, verification, _ in
                #expect(verification.hasPrefix("http"))
                userCode.withLock { $0 = code }
            })
        #expect(oauth.isAuthorized("Bearer \(token.accessToken)"))
        #expect(waits.withLock { $0 } == [.seconds(6), .seconds(6), .seconds(11)])
    }

    /// A hostile device endpoint: `interval: 0` is polled every 5 s (RFC 8628's default), not as fast as possible; an
    /// interval past the code's life never sleeps past it; a long life is capped, and `timeout` ends the wait sooner.
    @Test(arguments: [
        (0, 12, nil as Int?, [5, 5, 2]), (3600, 5, nil, [5]), (5, 86_400, 11, [5, 5, 1]),
        (5, 86_400, nil, Array(repeating: 5, count: 360)),
    ])
    func theDeviceFlowPollsWithinBoundsWhateverTheServiceSays(
        interval: Int, expiresIn: Int, timeout: Int?, expected: [Int]
    ) async throws {
        let server = try MockHTTPServer { request in
            if request.path.hasSuffix("/device") {
                return .json(
                    200,
                    [
                        "device_code": "d", "user_code": "U\u{1b}]0;owned\u{07}",
                        "verification_uri": "http://127.0.0.1/device",
                        "interval": interval, "expires_in": expiresIn,
                    ])
            }
            return .json(400, ["error": "authorization_pending"])
        }
        defer { server.stop() }
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var configuration = OAuthConfiguration(
            authorizationURL: server.baseURL.appendingPathComponent("authorize"),
            tokenURL: server.baseURL.appendingPathComponent("token"), clientId: "c")
        configuration.deviceAuthorizationURL = server.baseURL.appendingPathComponent("device")
        let flow = OAuthAuthorization(configuration: configuration, http: client(), now: { clock.withLock { $0 } })
        let waits = Mutex<[Int]>([])
        let shown = Mutex("")
        await #expect(throws: OAuthError.deviceCodeExpired) {
            _ = try await flow.authorizeWithDevice(
                timeout: timeout.map { .seconds($0) },
                sleep: { wait in
                    let seconds = Double(wait.components.seconds) + Double(wait.components.attoseconds) / 1e18
                    waits.withLock { $0.append(Int(seconds.rounded())) }
                    clock.withLock { $0 = $0.addingTimeInterval(seconds) }
                }, show: { code, _, _ in shown.withLock { $0 = code } })
        }
        #expect(waits.withLock { $0 } == expected)
        #expect(
            !shown.withLock { $0 }.unicodeScalars.contains { $0.value < 0x20 },
            "a control character reached the terminal")
    }

    /// Box's codes live 30 s: one exchanged in time works, one exchanged after 31 s is invalid_grant (on a clock the
    /// test moves).
    @Test func anAuthorizationCodeExpiresWhereTheServiceSaysSo() async throws {
        let clock = Mutex(Date(timeIntervalSince1970: 1_800_000_000))
        var settings = MockOAuthServer.Settings.box
        settings.pathPrefix = "/oauth"
        settings.authorizePath = nil
        settings.tokenPath = nil
        let oauth = MockOAuthServer(settings: settings, now: { clock.withLock { $0 } })
        let server = try MockHTTPServer { request in oauth.handle(request) ?? .empty(404) }
        defer { server.stop() }
        let http = client()
        let flow = OAuthAuthorization(configuration: oauth.configuration(baseURL: server.baseURL), http: http)
        func code(waiting seconds: TimeInterval) async throws -> OAuthToken {
            let attempt = flow.makeAttempt(redirectURI: "http://127.0.0.1:53682/")
            var visit = HTTPRequest(url: attempt.url)
            visit.followsRedirects = false
            let location = try #require(try await http.send(visit).headers["Location"])
            clock.withLock { $0 = $0.addingTimeInterval(seconds) }
            return try await flow.finish(attempt, answer: location)
        }
        #expect(try await code(waiting: 29).accessToken.hasPrefix("access-"))
        await #expect(throws: OAuthError.self) { try await code(waiting: 31) }
    }

    /// A device flow finished from outside: the answer names the mock's own page and says what to do; entering the
    /// code there approves it. With `approvesDevicesAtOnce` the first poll already gets the token.
    @Test(arguments: [false, true])
    func aDeviceFlowIsApprovedOnTheVerificationPage(atOnce: Bool) async throws {
        var settings = MockOAuthServer.Settings()
        settings.approvesDevicesAtOnce = atOnce
        let fixture = try OAuthFixture(settings: settings)
        defer { fixture.server.stop() }
        let flow = OAuthAuthorization(configuration: fixture.configuration, http: fixture.http)
        let polls = Mutex(0)
        let token = try await flow.authorizeWithDevice(
            sleep: { _ in polls.withLock { $0 += 1 } },
            show: { code, verification, _ in
                #expect(
                    verification.hasPrefix(fixture.server.baseURL.absoluteString),
                    "the verification page is the mock's: \(verification)")
                // Approved at once, or by a person entering the code on the page.
                if !atOnce {
                    let page = URL(string: verification)
                    #expect(page != nil)
                    if let page {
                        let form = try? await fixture.http.send(HTTPRequest(url: page))
                        #expect(form?.status == 200 && form?.text.contains("<form") == true)
                        var approval = HTTPRequest(method: "POST", url: page)
                        approval.headers["Content-Type"] = "application/x-www-form-urlencoded"
                        approval.body = .data(Data("user_code=\(code)".utf8))
                        let approved = try? await fixture.http.send(approval)
                        #expect(approved?.status == 200)
                    }
                }
            })
        #expect(fixture.oauth.isAuthorized("Bearer \(token.accessToken)"))
        #expect(polls.withLock { $0 } == 1, "approved before the first poll")
    }

    /// Microsoft refuses a secret from a public client (AADSTS700025); a service that does not check it ignores it.
    @Test func aSecretFromAPublicClientIsRefusedWhereTheServiceRefusesIt() async throws {
        var settings = MockOAuthServer.Settings.microsoft
        settings.pathPrefix = "/oauth"
        settings.authorizePath = nil
        settings.tokenPath = nil
        settings.devicePath = nil
        let fixture = try OAuthFixture(settings: settings)
        defer { fixture.server.stop() }
        let refresh = try #require(fixture.oauth.issueToken().refreshToken)
        func refreshing(secret: String?) async throws -> HTTPResponse {
            var request = HTTPRequest(method: "POST", url: fixture.server.baseURL.appendingPathComponent("oauth/token"))
            request.headers["Content-Type"] = "application/x-www-form-urlencoded"
            var fields = [
                ("grant_type", "refresh_token"), ("refresh_token", refresh), ("client_id", settings.clientId),
            ]
            if let secret { fields.append(("client_secret", secret)) }
            request.body = .data(FormEncoding.encode(fields))
            request.maximumAttempts = 1
            return try await fixture.http.send(request)
        }
        let refused = try await refreshing(secret: "a secret")
        #expect(refused.status == 401 && refused.text.contains("AADSTS700025"), "\(refused.status) \(refused.text)")
        #expect(try await refreshing(secret: nil).status == 200)
    }

    @Test func importingATokenJSON() throws {
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let raw = try OAuthAuthorization.importToken(
            Data(#"{"access_token":"a","refresh_token":"r","expires_in":3600,"token_type":"Bearer"}"#.utf8), now: now)
        #expect(raw.expiresAt == now.addingTimeInterval(3600))
        let rclone = try OAuthAuthorization.importToken(
            Data(
                #"{"access_token":"a","token_type":"Bearer","refresh_token":"r","expiry":"2026-12-01T10:00:00.123456789+01:00"}"#
                    .utf8))
        #expect(rclone.refreshToken == "r" && rclone.expiresAt != nil)
        #expect(throws: OAuthError.self) { try OAuthAuthorization.importToken(Data(#"{"nothing":1}"#.utf8)) }
    }
}

func helperBinary() -> URL { BuiltProgram.url("llvs-test-helper") }
