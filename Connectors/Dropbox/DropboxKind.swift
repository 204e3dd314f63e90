import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

extension ConnectorKind {
    /// `dropbox:/path`: a folder in the user's Dropbox (or in the app's folder, for an app registered with that
    /// access type).
    public static let dropbox = ConnectorKind(
        name: "dropbox", serviceName: "Dropbox", address: .servicePath,
        secret: ConnectorSecret(
            "client-secret", "the OAuth app's secret (an app that signs in with PKCE alone has none)", required: false),
        oauth: ConnectorOAuth(hasDeviceFlow: false) { client, account in
            DropboxConfiguration.oauth(
                clientId: client.id, clientSecret: client.secret, endpoint: account.url("endpoint"))
        }
    ) { access in
        let http = HTTPClient(configuration: access.http)
        let dropbox = access.account.url("endpoint").map(DropboxConfiguration.init(endpoint:)) ?? DropboxConfiguration()
        return DropboxFileSystem(configuration: dropbox, http: http, authorizer: try access.tokenSource(http: http))
    }
}
