import Foundation
import LLVS
import LLVSHTTP
import LLVSWebDAV

/// Turns a configured remote into a file system and an exchange.
struct RemoteConnection {
    let name: String
    let configuration: RemoteConfiguration
    let fileSystem: any CloudFileSystem

    /// The URL forms `llvs` understands: `file:///path`, `webdav://host/path` (HTTP) and `webdavs://host/path` (HTTPS).
    static let supportedSchemes = ["file", "webdav", "webdavs"]

    init(name: String, configuration: RemoteConfiguration, registry: RemoteRegistry,
         environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        self.name = name
        self.configuration = configuration
        fileSystem = try Self.fileSystem(for: configuration, name: name, registry: registry, environment: environment)
    }

    static func validate(_ text: String) throws -> URL {
        guard let url = URL(string: text), let scheme = url.scheme?.lowercased() else {
            throw CommandError.usage("\(text) is not a remote URL; use file:///path, webdav://host/path or webdavs://host/path")
        }
        guard supportedSchemes.contains(scheme) else {
            throw CommandError.usage("remotes of kind \(scheme): are not supported by this build; use file://, webdav:// or webdavs://")
        }
        if scheme == "file", url.path.isEmpty { throw CommandError.usage("a file:// remote needs an absolute path, as file:///srv/llvs") }
        if scheme != "file", url.host == nil { throw CommandError.usage("a WebDAV remote needs a host, as webdavs://dav.example.com/llvs") }
        return url
    }

    static func fileSystem(for configuration: RemoteConfiguration, name: String, registry: RemoteRegistry,
                           environment: [String: String]) throws -> any CloudFileSystem {
        let url = try validate(configuration.url)
        switch url.scheme!.lowercased() {
        case "file":
            return LocalFolderFileSystem(root: URL(fileURLWithPath: url.path))
        default:
            var components = URLComponents(url: url, resolvingAgainstBaseURL: false)!
            components.scheme = url.scheme!.lowercased() == "webdavs" ? "https" : "http"
            if !components.path.hasSuffix("/") { components.path += "/" }
            var authentication = WebDAVConfiguration.authentication(from: environment)
            if case .none = authentication, let user = configuration.user {
                let password = environment["LLVS_WEBDAV_PASSWORD"]
                    ?? (try? String(contentsOf: registry.secretFile(name), encoding: .utf8))?.trimmingCharacters(in: .newlines) ?? ""
                authentication = .basic(user: user, password: password)
            }
            return WebDAVFileSystem(configuration: WebDAVConfiguration(url: components.url!, authentication: authentication))
        }
    }

    func exchange(for store: Store) -> CloudFileSystemExchange {
        CloudFileSystemExchange(store: store, fileSystem: fileSystem, basePath: configuration.basePath ?? "",
                                concurrency: configuration.concurrency ?? 8, progress: ProgressLine.shared?.report)
    }
}
