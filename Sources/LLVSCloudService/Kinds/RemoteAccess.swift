import Foundation
import LLVS
import LLVSHTTP

/// An account made ready to sign in with: its options (the environment's `LLVS_<KIND>_<OPTION>` standing in for
/// what is kept), its secret (`LLVS_<KIND>_<SECRET>` or its private file) and its token file.
public struct AccountAccess: Sendable {
    /// The kind the account is of.
    public let kind: ConnectorKind
    /// The account's name; nil for a remote that signs in with none (WebDAV without a user).
    public let name: String?
    /// The account's options, the environment's taking precedence.
    public let options: SettingValues
    /// The account's secret, from the environment or its private file.
    public let secret: String?
    /// The account's token file (OAuth kinds).
    public let tokenFile: TokenFile?
    /// How a refresh is finished when the process is killed during it (`llvs` runs itself as a helper).
    public let detachedRefresh: DetachedRefresh?

    public init(
        kind: ConnectorKind, name: String?, options: SettingValues, secret: String?, tokenFile: TokenFile?,
        detachedRefresh: DetachedRefresh? = nil
    ) {
        self.kind = kind
        self.name = name
        self.options = options
        self.secret = secret
        self.tokenFile = tokenFile
        self.detachedRefresh = detachedRefresh
    }

    /// The name `llvs auth` takes, for messages.
    public var authName: String { name ?? "ACCOUNT" }

    /// The account's OAuth client: its ID (`--client-id` or `LLVS_<KIND>_CLIENT_ID`) and secret.
    public func oauthClient() throws -> OAuthClient {
        let prefix = ConnectorKind.environmentPrefix(kind.name)
        guard let id = options["client-id"] else {
            throw ConnectorKindError.usage(
                "the account \(authName) has no OAuth client; set \(prefix)CLIENT_ID, or add the remote on a new account with --client-id"
            )
        }
        if let spec = kind.secret, spec.required, secret == nil {
            throw ConnectorKindError.usage(
                "the account \(authName) has no OAuth client secret, which \(kind.serviceName) requires; set \(spec.environmentName(kind: kind.name)), or add the remote on a new account with --\(spec.optionName)"
            )
        }
        return OAuthClient(id: id, secret: secret)
    }

    /// The OAuth settings the account signs in and refreshes with.
    /// - Throws: `ConnectorKindError.usage` for a kind without OAuth, or an account without a client.
    public func oauthConfiguration() throws -> OAuthConfiguration {
        guard let oauth = kind.oauth else {
            throw ConnectorKindError.usage("\(kind.serviceName) accounts do not sign in with OAuth")
        }
        return try oauth.configuration(try oauthClient(), options)
    }

    /// The token source every request goes through: it reads the account's token file, refreshes the token when
    /// near expiry and writes it back before use.
    /// The account's OAuth token source (`AccountAccess.tokenSource`).
    public func tokenSource(http: HTTPClient) throws -> OAuthTokenSource {
        guard let tokenFile else {
            throw ConnectorKindError.usage("\(kind.serviceName) accounts do not sign in with OAuth")
        }
        return OAuthTokenSource(
            file: tokenFile, configuration: try oauthConfiguration(), http: http,
            reauthorizeCommand: "llvs auth \(authName)",
            detached: detachedRefresh)
    }

    /// The token kept for the account, if any; a damaged token file is an error that says to authorize again.
    /// The account's kept token (`AccountAccess.keptToken`).
    public func keptToken() throws -> OAuthToken? {
        do {
            return try tokenFile?.read()
        } catch {
            throw ConnectorKindError.failed(
                "The token file of the account \(authName) cannot be read (\(error)); run `llvs auth \(authName)` again."
            )
        }
    }
}

/// Everything a kind needs to make one remote's file system: the URL, the remote's options and its account.
public struct RemoteAccess: Sendable {
    /// The remote's name (or the URL given in its place).
    public let remoteName: String
    /// The remote's URL.
    public let url: URL
    /// The remote's options (`base-path`, `root-folder-id`, …).
    public let remote: SettingValues
    /// The account the remote signs in with.
    public let signIn: AccountAccess
    /// The environment the command runs in, for variables the kind reads.
    public let environment: [String: String]
    /// How the kind's HTTP client is set up: the environment's settings, and the faults `conformance --faults`
    /// injects.
    public var http = HTTPClientConfiguration()

    public init(
        remoteName: String, url: URL, remote: SettingValues, signIn: AccountAccess, environment: [String: String],
        http: HTTPClientConfiguration = HTTPClientConfiguration()
    ) {
        self.remoteName = remoteName
        self.url = url
        self.remote = remote
        self.signIn = signIn
        self.environment = environment
        self.http = http
    }

    /// The remote's kind.
    public var kind: ConnectorKind { signIn.kind }
    /// The account's options.
    public var account: SettingValues { signIn.options }
    /// The account's secret.
    public var secret: String? { signIn.secret }
    public func tokenSource(http: HTTPClient) throws -> OAuthTokenSource { try signIn.tokenSource(http: http) }
    public func keptToken() throws -> OAuthToken? { try signIn.keptToken() }

    /// The folder on the file system that holds the store.
    public var basePath: String {
        let base = remote["base-path"] ?? ""
        switch kind.address {
        case .localFolder, .server, .bucket: return base
        case .servicePath: return CloudPath.join(url.path, base)
        }
    }
}
