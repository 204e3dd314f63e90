import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

extension ConnectorKind {
    /// `webdav://host/path` (http) or `webdavs://host/path` (https). The account, when there is one, is the user and
    /// password; without one the server is used anonymously (or with `LLVS_WEBDAV_BEARER_TOKEN`).
    public static let webDAV = ConnectorKind(
        name: "webdav", schemes: ["webdav", "webdavs"], serviceName: "WebDAV", address: .server,
        options: [
            ConnectorOption("user", "USER", "the user name to sign in with", level: .account),
            ConnectorOption(
                "auth", "METHOD", "how the user signs in", level: .account, type: .choice(["basic", "digest"]),
                defaultValue: "basic"),
        ],
        secret: ConnectorSecret("password", "the user's password", required: false),
        extraEnvironment: [("LLVS_WEBDAV_BEARER_TOKEN", "a bearer token to send instead of a user and password")]
    ) { access in
        var components = URLComponents(url: access.url, resolvingAgainstBaseURL: false)!
        components.scheme = access.url.scheme?.lowercased() == "webdavs" ? "https" : "http"
        if !components.path.hasSuffix("/") { components.path += "/" }
        let authentication: WebDAVConfiguration.Authentication
        if let token = access.environment["LLVS_WEBDAV_BEARER_TOKEN"], !token.isEmpty {
            authentication = .bearer(token: token)
        } else if let user = access.account["user"] {
            let password = access.secret ?? ""
            authentication =
                access.account["auth"] == "digest"
                ? .digest(user: user, password: password) : .basic(user: user, password: password)
        } else {
            authentication = .none
        }
        return WebDAVFileSystem(
            configuration: WebDAVConfiguration(url: components.url!, authentication: authentication),
            http: HTTPClient(configuration: access.http))
    }
}
