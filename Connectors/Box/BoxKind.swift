import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

extension ConnectorKind {
    /// `box:/path`: a folder in the user's Box.
    public static let box = ConnectorKind(
        name: "box", serviceName: "Box", address: .servicePath,
        secret: ConnectorSecret("client-secret", "the OAuth client's secret (Box requires one)", required: true),
        oauth: ConnectorOAuth(hasDeviceFlow: false) { client, account in
            BoxConfiguration.oauth(
                clientId: client.id, clientSecret: client.secret ?? "", endpoint: account.url("endpoint"))
        }
    ) { access in
        let http = HTTPClient(configuration: access.http)
        let box = access.account.url("endpoint").map(BoxConfiguration.init(endpoint:)) ?? BoxConfiguration()
        return BoxFileSystem(configuration: box, http: http, authorizer: try access.tokenSource(http: http))
    }
}
