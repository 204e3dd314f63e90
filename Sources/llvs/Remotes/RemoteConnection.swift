import Foundation
import LLVS
import LLVSBox
import LLVSGoogleDrive
import LLVSHTTP
import LLVSOneDrive
import LLVSPCloud
import LLVSWebDAV

/// The kinds of remote `llvs` knows, by URL scheme.
enum RemoteKind: String, CaseIterable {
    case file, webdav, webdavs, gdrive, onedrive, pcloud, box

    var usesOAuth: Bool { [.gdrive, .onedrive, .pcloud, .box].contains(self) }
    /// Whether the service's OAuth client must have a secret (pCloud's and Box's token endpoints require one).
    var requiresClientSecret: Bool { self == .pcloud || self == .box }
    /// Whether the service offers the device authorization grant.
    var hasDeviceFlow: Bool { self == .gdrive || self == .onedrive }

    /// The prefix of the environment variables an OAuth kind reads (`LLVS_GDRIVE_CLIENT_ID`, …).
    var environmentPrefix: String { "LLVS_" + rawValue.uppercased() + "_" }
    var serviceName: String {
        switch self {
        case .gdrive: "Google Drive"
        case .onedrive: "OneDrive"
        case .pcloud: "pCloud"
        case .box: "Box"
        default: rawValue
        }
    }
}

/// Turns a configured remote into a file system and an exchange.
struct RemoteConnection {
    let name: String
    let configuration: RemoteConfiguration
    let kind: RemoteKind
    let fileSystem: any CloudFileSystem
    /// The folder on the file system that holds the store: the URL's path (for Drive) joined with `--base-path`.
    let basePath: String

    static let urlForms = "file:///path, webdav://host/path, webdavs://host/path, gdrive:/path, onedrive:/path, pcloud:/path or box:/path"

    init(name: String, configuration: RemoteConfiguration, registry: RemoteRegistry,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.name = name
        self.configuration = configuration
        let (kind, url) = try Self.validate(configuration.url)
        self.kind = kind
        switch kind {
        case .file:
            fileSystem = LocalFolderFileSystem(root: URL(fileURLWithPath: url.path))
            basePath = configuration.basePath ?? ""
        case .webdav, .webdavs:
            fileSystem = Self.webDAV(url, kind: kind, configuration: configuration, name: name, registry: registry, environment: environment)
            basePath = configuration.basePath ?? ""
        case .gdrive:
            fileSystem = try Self.googleDrive(configuration, name: name, registry: registry, environment: environment)
            basePath = CloudPath.join(url.path, configuration.basePath ?? "")
        case .onedrive:
            fileSystem = try Self.oneDrive(configuration, name: name, registry: registry, environment: environment)
            basePath = CloudPath.join(url.path, configuration.basePath ?? "")
        case .pcloud:
            fileSystem = try Self.pCloud(configuration, name: name, registry: registry, environment: environment)
            basePath = CloudPath.join(url.path, configuration.basePath ?? "")
        case .box:
            let http = HTTPClient()
            let box = configuration.endpoint.flatMap(URL.init(string:)).map(BoxConfiguration.init(endpoint:)) ?? BoxConfiguration()
            fileSystem = BoxFileSystem(configuration: box, http: http,
                                       authorizer: try Self.tokenSource(configuration, name: name, registry: registry, http: http, environment: environment))
            basePath = CloudPath.join(url.path, configuration.basePath ?? "")
        }
    }

    /// Fails unless the remote holds an LLVS store (a `versions/` folder), so a mistyped URL or base path is an
    /// error for `clone` and `pull` instead of "0 versions" (`push` and `sync` make the folder).
    func requireStore() async throws {
        let versions = CloudPath.join(basePath, "versions")
        guard try await fileSystem.exists(versions) else {
            throw CommandError.notFound("The remote \(name) (\(configuration.url)\(basePath.isEmpty ? "" : ", base path \(basePath)")) holds no LLVS store: there is no \(versions) folder. Check the URL and base path.")
        }
    }

    /// Checks a remote URL and tells its kind.
    @discardableResult
    static func validate(_ text: String) throws -> (RemoteKind, URL) {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw CommandError.usage("\(text) is not a remote URL; use \(urlForms)")
        }
        guard let kind = RemoteKind(rawValue: scheme) else {
            throw CommandError.usage("remotes of kind \(scheme): are not supported; use \(urlForms)")
        }
        switch kind {
        case .file where url.path.isEmpty: throw CommandError.usage("a file:// remote needs an absolute path, as file:///srv/llvs")
        case .webdav where url.host == nil, .webdavs where url.host == nil: throw CommandError.usage("a WebDAV remote needs a host, as webdavs://dav.example.com/llvs")
        case .gdrive where url.host != nil: throw CommandError.usage("a Google Drive remote is gdrive:/path (one slash), not \(text)")
        case .onedrive where url.host != nil: throw CommandError.usage("a OneDrive remote is onedrive:/path (one slash), not \(text)")
        case .pcloud where url.host != nil: throw CommandError.usage("a pCloud remote is pcloud:/path (one slash), not \(text)")
        case .box where url.host != nil: throw CommandError.usage("a Box remote is box:/path (one slash), not \(text)")
        default: break
        }
        _ = try CloudPath.components(url.path)
        return (kind, url)
    }

    private static func webDAV(_ url: URL, kind: RemoteKind, configuration: RemoteConfiguration, name: String, registry: RemoteRegistry,
                               environment: [String: String]) -> WebDAVFileSystem {
        var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
        components.scheme = kind == .webdavs ? "https" : "http"
        if !components.path.hasSuffix("/") { components.path += "/" }
        var authentication = WebDAVConfiguration.authentication(from: environment)
        if case .none = authentication, let user = configuration.user {
            let password = environment["LLVS_WEBDAV_PASSWORD"] ?? registry.secret(name) ?? ""
            authentication = .basic(user: user, password: password)
        }
        return WebDAVFileSystem(configuration: WebDAVConfiguration(url: components.url!, authentication: authentication))
    }

    /// The OAuth client of an OAuth remote: its ID from the configuration or `LLVS_<KIND>_CLIENT_ID`, its secret from
    /// `LLVS_<KIND>_CLIENT_SECRET` or the remote's private secret file (OneDrive's public clients have none).
    static func oauthConfiguration(_ configuration: RemoteConfiguration, name: String, registry: RemoteRegistry,
                                   environment: [String: String]) throws -> OAuthConfiguration {
        let (kind, _) = try validate(configuration.url)
        let prefix = kind.environmentPrefix
        guard let clientId = environment[prefix + "CLIENT_ID"].flatMap({ $0.isEmpty ? nil : $0 }) ?? configuration.clientId else {
            throw CommandError.usage("remote \(name) has no OAuth client; add it again with --client-id, or set \(prefix)CLIENT_ID")
        }
        let secret = environment[prefix + "CLIENT_SECRET"].flatMap { $0.isEmpty ? nil : $0 } ?? registry.secret(name)
        let endpoint = configuration.endpoint.flatMap(URL.init(string:))
        if kind.requiresClientSecret, secret == nil {
            throw CommandError.usage("remote \(name) has no OAuth client secret, which \(kind.serviceName) requires; add it again with --client-secret-stdin, or set \(prefix)CLIENT_SECRET")
        }
        switch kind {
        case .pcloud:
            return PCloudConfiguration.oauth(clientId: clientId, clientSecret: secret ?? "", endpoint: endpoint)
        case .box:
            return BoxConfiguration.oauth(clientId: clientId, clientSecret: secret ?? "", endpoint: endpoint)
        case .onedrive:
            return OneDriveConfiguration.oauth(clientId: clientId, clientSecret: secret, tenant: configuration.tenant ?? "common",
                                               allDrives: configuration.driveId != nil, endpoint: endpoint)
        default:
            return GoogleDriveConfiguration.oauth(clientId: clientId, clientSecret: secret, scope: driveScope(configuration), endpoint: endpoint)
        }
    }

    /// A Drive remote's scope: `drive.file` unless it was added with `--scope drive`.
    static func driveScope(_ configuration: RemoteConfiguration) -> GoogleDriveConfiguration.Scope {
        configuration.scope.flatMap(GoogleDriveConfiguration.Scope.init(rawValue:)) ?? .file
    }

    static func tokenSource(_ configuration: RemoteConfiguration, name: String, registry: RemoteRegistry, http: HTTPClient,
                            environment: [String: String]) throws -> OAuthTokenSource {
        OAuthTokenSource(file: TokenFile(path: registry.tokenFile(name).path),
                         configuration: try oauthConfiguration(configuration, name: name, registry: registry, environment: environment),
                         http: http, reauthorizeCommand: "llvs auth \(name)")
    }

    private static func googleDrive(_ configuration: RemoteConfiguration, name: String, registry: RemoteRegistry,
                                    environment: [String: String]) throws -> GoogleDriveFileSystem {
        let http = HTTPClient()
        var drive = configuration.endpoint.flatMap(URL.init(string:)).map(GoogleDriveConfiguration.init(endpoint:)) ?? GoogleDriveConfiguration()
        if let removal = configuration.removal.flatMap(GoogleDriveConfiguration.Removal.init(rawValue:)) { drive.removal = removal }
        if let root = configuration.rootFolderId { drive.rootFolderID = root }
        return GoogleDriveFileSystem(configuration: drive, http: http,
                                     authorizer: try tokenSource(configuration, name: name, registry: registry, http: http, environment: environment))
    }

    private static func oneDrive(_ configuration: RemoteConfiguration, name: String, registry: RemoteRegistry,
                                 environment: [String: String]) throws -> OneDriveFileSystem {
        let http = HTTPClient()
        var drive = configuration.endpoint.flatMap(URL.init(string:)).map(OneDriveConfiguration.init(endpoint:)) ?? OneDriveConfiguration()
        drive.driveID = configuration.driveId
        return OneDriveFileSystem(configuration: drive, http: http,
                                  authorizer: try tokenSource(configuration, name: name, registry: registry, http: http, environment: environment))
    }

    /// The API host is the account's region, which the sign-in kept in the token file; before a sign-in there is
    /// none, and the first request says to run `llvs auth NAME`.
    private static func pCloud(_ configuration: RemoteConfiguration, name: String, registry: RemoteRegistry,
                               environment: [String: String]) throws -> PCloudFileSystem {
        let http = HTTPClient()
        let endpoint = configuration.endpoint.flatMap(URL.init(string:))
        let file = TokenFile(path: registry.tokenFile(name).path)
        let token: OAuthToken?
        do {
            token = try file.read()
        } catch {
            throw CommandError.failed("The token file of \(name) cannot be read (\(error)); run `llvs auth \(name)` again.")
        }
        let pcloud: PCloudConfiguration
        do {
            pcloud = try token.map { try PCloudConfiguration(token: $0, endpoint: endpoint) } ?? endpoint.map(PCloudConfiguration.init(endpoint:)) ?? PCloudConfiguration()
        } catch {
            throw CommandError.failed("The token of \(name) names an API host llvs will not use (\(error)); run `llvs auth \(name)` again.")
        }
        return PCloudFileSystem(configuration: pcloud, http: http,
                                authorizer: try tokenSource(configuration, name: name, registry: registry, http: http, environment: environment))
    }

    /// Says which remote a store's change feed position belongs to: the service, its host and the folder, so a
    /// remote re-pointed elsewhere under the same name starts again with a full listing.
    var identity: String {
        [configuration.url, configuration.endpoint ?? "", configuration.driveId ?? "", configuration.rootFolderId ?? "", basePath]
            .joined(separator: "\n")
    }

    func exchange(for store: Store) -> CloudFileSystemExchange {
        CloudFileSystemExchange(store: store, fileSystem: fileSystem, basePath: basePath, concurrency: configuration.concurrency ?? 8,
                                cursorFile: RemoteCursorFile(store: store, identity: identity), progress: ProgressLine.shared?.report)
    }
}
