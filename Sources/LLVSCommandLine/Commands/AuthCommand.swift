import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP
import LLVSWebDAV
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// `llvs auth NAME`: gets a first OAuth token for a remote and keeps it in the remote's private token file. With a
/// browser on this machine, the loopback flow; on a headless machine, `--headless` (open the printed address
/// elsewhere, paste back where the browser ended up) or `--device` (enter a code on another device); or a token
/// JSON made elsewhere with `--token-json`. For a WebDAV account on a Nextcloud or ownCloud server, Login Flow v2: open
/// the printed address anywhere, grant access, and the app password the server issues is kept as the account's.
struct AuthCommand: Command {
    static let name = "auth"
    static let summary =
        "Authorize an account (or a remote's account) (Google Drive, OneDrive, pCloud, Box): browser, --headless, --device or --token-json FILE; a Nextcloud WebDAV account by Login Flow v2."
    static let arguments = "ACCOUNT|REMOTE"
    static let headless = Flag(
        "headless", "print the address to open on another machine, then read the address the browser ended up at")
    static let device = Flag("device", "show a code to enter on another device (the device authorization grant)")
    static let tokenJSON = Option(
        "token-json", "FILE", "take a token JSON made elsewhere (this tool's token file, rclone's, or a token answer)",
        .nonEmpty)
    static let timeoutOption = Option(
        "timeout", "SECONDS", "how long to wait for the browser or the device code's approval (default 300)",
        .integer(1...86_400))
    static let serverOption = Option(
        "server", "URL",
        "a WebDAV account's Nextcloud server (https://cloud.example), when NAME is an account rather than a remote on it",
        .nonEmpty)
    static let allowHTTPFlag = Flag(
        "allow-http",
        "sign in to a Nextcloud over plain HTTP (a test server, a trusted network): the app password crosses the network readable"
    )
    static let options: [any DeclaredOption] = [
        headless, device, tokenJSON, timeoutOption, serverOption, allowHTTPFlag,
    ]
    static let positionalCount = 1...1

    enum Flow { case loopback, headless, device, importing(String) }

    let remote: String
    let flow: Flow
    let timeout: Duration
    let server: String?
    let allowHTTP: Bool

    init(_ arguments: ParsedArguments) throws {
        remote = arguments.positionals[0]
        let file = arguments[Self.tokenJSON]
        let chosen = [arguments[Self.headless], arguments[Self.device], file != nil].filter { $0 }.count
        guard chosen <= 1 else { throw CommandError.usage("choose one of --headless, --device and --token-json") }
        if arguments[Self.headless] {
            flow = .headless
        } else if arguments[Self.device] {
            flow = .device
        } else if let file {
            flow = .importing(file)
        } else {
            flow = .loopback
        }
        timeout = .seconds(arguments[Self.timeoutOption] ?? 300)
        server = arguments[Self.serverOption]
        allowHTTP = arguments[Self.allowHTTPFlag]
    }

    func run(in context: CommandContext) async throws {
        let access = try account(context)
        let name = access.authName
        let kind = access.kind
        if kind.name == ConnectorKind.webDAV.name, let accountName = access.name {
            try await signInByLoginFlow(accountName, context: context)
            return
        }
        if server != nil {
            throw CommandError.usage(
                "--server is for a WebDAV account on a Nextcloud server; \(name) is a \(kind.serviceName) account")
        }
        guard let oauth = kind.oauth else {
            throw CommandError.usage(
                "\(name) is a \(kind.serviceName) account, which does not use OAuth\(kind.secret.map { "; its \($0.name) comes from `llvs remote add … --\($0.optionName)` or $\($0.environmentName(kind: kind.name))" } ?? "")"
            )
        }
        if case .device = flow, !oauth.hasDeviceFlow {
            throw CommandError.usage(
                "\(kind.serviceName) has no device authorization; use `llvs auth \(name) --headless` on a machine without a browser"
            )
        }
        if case .device = flow, let refusal = oauth.deviceFlowRefusal(access.options) {
            throw CommandError.usage(refusal.replacingOccurrences(of: "ACCOUNT", with: name))
        }
        let environment = context.environment
        let oauthConfiguration = try access.oauthConfiguration()
        let authorization = OAuthAuthorization(configuration: oauthConfiguration, http: HTTPClient())
        let token: OAuthToken
        do {
            switch flow {
            case .importing(let path):
                guard let data = FileManager.default.contents(atPath: path) else {
                    throw CommandError.failed("Cannot read the token file \(path).")
                }
                token = try OAuthAuthorization.importToken(data)
            case .loopback:
                token = try await authorization.authorizeWithLoopback(timeout: timeout) { url in
                    Self.say(
                        "Opening the authorization page. If no browser appears, open this address:\n\n  \(url.absoluteString)\n"
                    )
                    Self.openBrowser(url, environment: environment)
                }
            case .headless:
                let attempt = authorization.makeAttempt(redirectURI: "http://127.0.0.1:53682/")
                Self.say(
                    """
                    Open this address in a browser on any machine and allow access:

                      \(attempt.url.absoluteString)

                    The browser then ends up at an address starting http://127.0.0.1:53682/ that does not load; that is expected.
                    Paste that whole address here and press Enter:
                    """)
                guard let line = readLine(strippingNewline: true), !line.isEmpty else {
                    throw CommandError.failed("Nothing was pasted; run `llvs auth \(name) --headless` again.")
                }
                token = try await authorization.finish(attempt, answer: line)
            case .device:
                token = try await authorization.authorizeWithDevice(timeout: timeout) { code, address, _ in
                    Self.say("On any device, open \(address) and enter the code \(code). Waiting for approval…")
                }
            }
        } catch let error as OAuthError {
            throw CommandError.failed("Authorization of \(name) failed: \(error.description)")
        }
        try await save(token, name: name, configuration: context.configuration)
        if token.refreshToken == nil, token.expiresAt != nil {
            Self.say(
                "Note: the service issued no refresh token, so this authorization ends when the access token expires.")
        }
        context.writeLine(
            "Authorized account \(name); the token is kept in \(context.configuration.tokenFile(name).path) (readable only by you)."
        )
    }

    /// Login Flow v2 on the Nextcloud server of the remote (or `--server`): the address to open is printed, the
    /// server is polled until access is granted, and the login name and app password become the account's user and
    /// password (the password in the account's private file, 0600).
    private func signInByLoginFlow(_ accountName: String, context: CommandContext) async throws {
        let serverURL: URL
        var filesUser: String?
        if let server {
            guard let url = URL(string: server), ["http", "https"].contains(url.scheme?.lowercased() ?? ""),
                url.host != nil
            else {
                throw CommandError.usage(
                    "--server needs the server's http or https address, as https://cloud.example, not \(server)")
            }
            serverURL = url
        } else if let found = try? context.remote(remote), var components = URLComponents(string: found.entry.url) {
            components.scheme = components.scheme?.lowercased() == "webdavs" ? "https" : "http"
            guard let filesURL = components.url, let layout = NextcloudLayout(filesURL: filesURL) else {
                throw CommandError.usage(
                    "Login Flow v2 is Nextcloud's and ownCloud's; the remote \(remote) (\(found.entry.url)) is not a Nextcloud files URL (…/remote.php/dav/files/USER/…). Give its password with `llvs remote add … --password-stdin` instead"
                )
            }
            serverURL = layout.serverURL
            filesUser = layout.user
        } else {
            throw CommandError.usage(
                "\(accountName) is a WebDAV account: give its Nextcloud server with --server URL, or name a remote on it"
            )
        }
        // The app password comes back in the poll's answer: over plain HTTP anyone on the way reads it.
        if serverURL.scheme?.lowercased() == "http", !allowHTTP {
            throw CommandError.usage(
                "\(serverURL.absoluteString) is plain HTTP, over which the app password would cross the network readable; use the server's https address, or --allow-http for a test server or a trusted network"
            )
        }
        var configuration = HTTPClientConfiguration(environment: context.environment)
        configuration.retryPolicy = RetryPolicy(maximumAttempts: 3)
        let flow = NextcloudLoginFlow(server: serverURL, http: HTTPClient(configuration: configuration))
        let grant: NextcloudLoginFlow.Grant
        do {
            let started = try await flow.start()
            Self.say(
                "Open this address in a browser on any machine, sign in to \(serverURL.host ?? "the server") and grant access:\n\n  \(started.login.absoluteString)\n\nWaiting for access to be granted…"
            )
            Self.openBrowser(started.login, environment: context.environment)
            grant = try await flow.waitForGrant(started, timeout: timeout, user: filesUser)
        } catch let error as NextcloudLoginFlow.Failure {
            throw CommandError.failed("Sign-in of \(accountName) failed: \(error.description)")
        }
        let book = try context.accountBook()
        var accounts = try book.load()
        accounts[accountName, default: Account(kind: ConnectorKind.webDAV.name, options: [:])].options["user"] =
            grant.loginName
        try PrivateFile.write(
            Data(grant.appPassword.utf8), to: context.configuration.secretFile(accountName), secretsFolder: true)
        try book.save(accounts)
        context.writeLine(
            "Signed in account \(accountName) as \(grant.loginName); its app password is kept in \(context.configuration.secretFile(accountName).path) (readable only by you)."
        )
    }

    /// The account to authorize: NAME is an account, or a remote this store sees (then its account).
    private func account(_ context: CommandContext) throws -> AccountAccess {
        if let account = try context.accountBook().load()[remote] {
            guard let kind = context.connectors.kind(named: account.kind) else {
                throw CommandError.failed(
                    "The account \(remote) is of a kind this llvs does not know (\(account.kind)).")
            }
            return try RemoteConnection.signIn(remote, kind: kind, context: context, usedBy: nil)
        }
        guard let found = try? context.remote(remote) else {
            throw CommandError.notFound(
                "There is no account or remote called \(remote); `llvs account list` shows the accounts.")
        }
        let (kind, _) = try context.connectors.parse(found.entry.url)
        guard let accountName = found.entry.account else {
            throw CommandError.usage(
                "the remote \(remote) (\(kind.serviceName)) signs in with no account, so there is nothing to authorize")
        }
        return try RemoteConnection.signIn(accountName, kind: kind, context: context, usedBy: remote)
    }

    /// Under the token file's lock, as refreshes write it: a refresh running in another process (or its helper) never
    /// writes over the new sign-in with the token it replaces.
    private func save(_ token: OAuthToken, name: String, configuration: UserConfiguration) async throws {
        let file = TokenFile(path: configuration.tokenFile(name).path)
        do {
            try TokenFile.makePrivateFolder(configuration.accountsFolder.path)
            try await file.withLock { try file.write(token) }
        } catch let error as OAuthError {
            throw CommandError.failed(error.description)
        }
    }

    /// Instructions go to standard error, so standard output carries only the result.
    static func say(_ text: String) { FileHandle.standardError.write(Data((text + "\n").utf8)) }

    /// Opens a URL with $BROWSER, else xdg-open when there is a display; a failure only means the user opens it.
    static func openBrowser(_ url: URL, environment: [String: String]) {
        var command: [String]
        if let browser = environment["BROWSER"], !browser.isEmpty {
            command = browser.split(separator: " ").map(String.init)
        } else if environment["DISPLAY"] != nil || environment["WAYLAND_DISPLAY"] != nil {
            command = ["xdg-open"]
        } else {
            return
        }
        command.append(url.absoluteString)
        let process = ChildProcess()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = command
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try? process.run()
    }
}
