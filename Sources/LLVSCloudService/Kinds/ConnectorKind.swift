import Foundation
import LLVS
import LLVSHTTP

/// One kind of remote `llvs` can use: its URL scheme, its options, its OAuth settings and the environment variables
/// it reads, and how to make its file system. Adding a service to `llvs` is one of these in a registry
/// (`ConnectorRegistry`); the commands read everything they show and check from it.
///
/// ```swift
/// extension ConnectorKind {
///     public static let example = ConnectorKind(name: "example", serviceName: "Example", address: .servicePath) { access in
///         ExampleFileSystem(root: access.url.path, http: HTTPClient(configuration: access.http))
///     }
/// }
/// ```
public struct ConnectorKind: Sendable {
    /// How a remote URL of this kind names the place its files are kept.
    public enum Address: Sendable {
        /// `file:///path`: a folder on this machine; `--base-path` is a folder inside it.
        case localFolder
        /// `webdav://host/path`: a server and a folder on it; `--base-path` is a folder inside it.
        case server
        /// `gdrive:/path`: a folder in the service's one tree (no host); `--base-path` is joined to it.
        case servicePath
        /// `s3://bucket/prefix`: a bucket and a folder in it; `--base-path` is a folder inside that.
        case bucket
    }

    /// The kind's name: its first URL scheme, the name of its default account and the prefix of its environment
    /// variables (`LLVS_GDRIVE_…`).
    public var name: String
    /// Every URL scheme that names this kind (`webdav` and `webdavs`).
    public var schemes: [String]
    /// The service's name as users know it, for help and errors ("Google Drive").
    public var serviceName: String
    /// The URL form shown in help and errors, as `gdrive:/path`.
    public var urlForm: String
    /// How its URLs name a place.
    public var address: Address
    /// The kind's own options (an OAuth kind also gets `--client-id` and `--endpoint`, see `allOptions`).
    public var options: [ConnectorOption]
    /// The secret an account keeps (a password, an OAuth client secret), if any.
    public var secret: ConnectorSecret?
    /// How an account signs in with OAuth; nil for a kind that does not.
    public var oauth: ConnectorOAuth?
    /// Environment variables the kind reads besides those of its options and secret, with what each does.
    public var extraEnvironment: [(name: String, help: String)]
    /// Account options a new account takes from the remote's options (OneDrive: a `--drive-id` needs the scope
    /// that reaches every drive).
    public var accountDefaults: @Sendable (_ remote: SettingValues) -> [String: String]
    /// Whether the kind's file system talks HTTP through the shared client, so `conformance --faults` injects its
    /// faults into its requests; otherwise (a local folder, SFTP) they are injected into its file operations.
    public var usesHTTP: Bool
    /// Makes the file system for one remote.
    public var makeFileSystem: @Sendable (_ access: RemoteAccess) throws -> any CloudFileSystem

    /// - Parameters:
    ///   - name: the first URL scheme and the default account's name.
    ///   - schemes: every scheme that names the kind (default: `[name]`).
    ///   - serviceName: the service's name for help and errors.
    ///   - address: how a URL names a place.
    ///   - options: the kind's own options, for accounts and remotes.
    ///   - secret: what an account keeps secret.
    ///   - oauth: how an account signs in, for an OAuth service.
    ///   - extraEnvironment: environment variables read besides the options'.
    ///   - accountDefaults: account options a new account takes from a remote's.
    ///   - usesHTTP: whether its requests go through the shared HTTP client (default: all but a local folder's).
    ///   - makeFileSystem: the file system for one remote, from its URL, options and account.
    public init(
        name: String, schemes: [String]? = nil, serviceName: String, address: Address, options: [ConnectorOption] = [],
        secret: ConnectorSecret? = nil, oauth: ConnectorOAuth? = nil,
        extraEnvironment: [(name: String, help: String)] = [],
        accountDefaults: @escaping @Sendable (SettingValues) -> [String: String] = { _ in [:] },
        usesHTTP: Bool? = nil,
        makeFileSystem: @escaping @Sendable (RemoteAccess) throws -> any CloudFileSystem
    ) {
        self.name = name
        self.schemes = schemes ?? [name]
        self.serviceName = serviceName
        self.address = address
        switch address {
        case .localFolder: urlForm = "\(name):///path"
        case .server: urlForm = self.schemes.map { "\($0)://host/path" }.joined(separator: ", ")
        case .servicePath: urlForm = "\(name):/path"
        case .bucket: urlForm = "\(name)://bucket/prefix"
        }
        self.options = options
        self.secret = secret
        self.oauth = oauth
        self.extraEnvironment = extraEnvironment
        self.accountDefaults = accountDefaults
        self.usesHTTP = usesHTTP ?? (address != .localFolder)
        self.makeFileSystem = makeFileSystem
    }

    /// The prefix of a kind's environment variables: `LLVS_GDRIVE_` for `gdrive`.
    public static func environmentPrefix(_ kind: String) -> String {
        "LLVS_" + kind.uppercased().replacingOccurrences(of: "-", with: "_") + "_"
    }

    /// Every option of the kind, the OAuth client's first.
    public var allOptions: [ConnectorOption] {
        guard oauth != nil else { return options }
        return [
            ConnectorOption(
                "client-id", "ID", "the OAuth client ID you registered with \(serviceName)", level: .account),
            ConnectorOption(
                "endpoint", "URL",
                "send every request of the service to this base URL instead, e.g. a mock from `llvs-mock \(name)`",
                level: .account, type: .httpURL),
        ] + options
    }

    /// The options an account keeps.
    public var accountOptions: [ConnectorOption] { allOptions.filter { $0.level == .account } }
    /// The options a remote keeps.
    public var remoteOptions: [ConnectorOption] { allOptions.filter { $0.level == .remote } }

    /// Whether a remote of this kind needs an account (a sign-in), may have one (WebDAV with a user), or never has one.
    public enum AccountUse: Sendable { case never, optional, required }
    /// Whether remotes of this kind sign in with an account.
    public var accountUse: AccountUse {
        if oauth != nil { return .required }
        return accountOptions.isEmpty && secret == nil ? .never : .optional
    }

    /// Every environment variable the kind reads, for help.
    public var environment: [(name: String, help: String)] {
        accountOptions.map { ($0.environmentName(kind: name), "as --\($0.name)") }
            + (secret.map { [($0.environmentName(kind: name), $0.help)] } ?? [])
            + extraEnvironment
    }

    /// Checks a URL of this kind, with an error that shows the form it must have.
    public func checkURL(_ url: URL, text: String) throws {
        switch address {
        case .localFolder where url.path.isEmpty || url.host.map({ !$0.isEmpty }) == true:
            throw ConnectorKindError.usage(
                "a \(serviceName) remote needs an absolute path, as \(name):///srv/llvs, not \(text)")
        case .server where (url.host ?? "").isEmpty:
            throw ConnectorKindError.usage(
                "a \(serviceName) remote needs a host, as \(schemes.last ?? name)://dav.example.com/llvs, not \(text)")
        case .bucket where (url.host ?? "").isEmpty:
            throw ConnectorKindError.usage(
                "a \(serviceName) remote names a bucket, as \(name)://my-bucket/llvs, not \(text)")
        case .servicePath where url.host != nil:
            throw ConnectorKindError.usage("a \(serviceName) remote is \(name):/path (one slash), not \(text)")
        default:
            break
        }
        do {
            _ = try CloudPath.components(url.path)
        } catch {
            throw ConnectorKindError.usage("the path of \(text) cannot be used: \(error)")
        }
    }
}

/// How an OAuth kind signs in.
public struct ConnectorOAuth: Sendable {
    /// Whether the service offers the device authorization grant (`llvs auth --device`).
    public var hasDeviceFlow: Bool
    /// Whether its access tokens expire and are refreshed (pCloud's live until revoked, with no refresh token).
    public var refreshesTokens: Bool
    /// The OAuth client configuration for an account: its client, and the account's options (endpoint, tenant, scope).
    public var configuration: @Sendable (_ client: OAuthClient, _ account: SettingValues) throws -> OAuthConfiguration
    /// Why the device flow cannot be used with an account's options (Google refuses it for the full Drive scope).
    public var deviceFlowRefusal: @Sendable (_ account: SettingValues) -> String?

    public init(
        hasDeviceFlow: Bool, refreshesTokens: Bool = true,
        configuration: @escaping @Sendable (OAuthClient, SettingValues) throws -> OAuthConfiguration,
        deviceFlowRefusal: @escaping @Sendable (SettingValues) -> String? = { _ in nil }
    ) {
        self.hasDeviceFlow = hasDeviceFlow
        self.refreshesTokens = refreshesTokens
        self.configuration = configuration
        self.deviceFlowRefusal = deviceFlowRefusal
    }
}

/// The OAuth client an account signs in with.
public struct OAuthClient: Sendable, Equatable {
    /// The client ID registered with the service.
    public var id: String
    /// The client secret, for a confidential client.
    public var secret: String?

    public init(id: String, secret: String?) {
        self.id = id
        self.secret = secret
    }
}

/// Option values by option name (`"root-folder-id"`), as a kind reads them.
public struct SettingValues: Sendable, Equatable {
    /// The values, by option name.
    public var values: [String: String]
    public init(_ values: [String: String] = [:]) { self.values = values }
    /// The value of an option, or nil when not set.
    public subscript(_ name: String) -> String? { values[name] }
    /// The value of an option as a URL, or nil when not set or not a URL.
    public func url(_ name: String) -> URL? { values[name].flatMap(URL.init(string:)) }
}
