import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

extension ConnectorKind {
    /// `pcloud:/path`. The API host is the account's region, which the sign-in kept in the token file; before a
    /// sign-in there is none, and the first request says to run `llvs auth`.
    public static let pCloud = ConnectorKind(
        name: "pcloud", serviceName: "pCloud", address: .servicePath,
        secret: ConnectorSecret("client-secret", "the OAuth client's secret (pCloud requires one)", required: true),
        oauth: ConnectorOAuth(hasDeviceFlow: false, refreshesTokens: false) { client, account in
            PCloudConfiguration.oauth(
                clientId: client.id, clientSecret: client.secret ?? "", endpoint: account.url("endpoint"))
        }
    ) { access in
        let http = HTTPClient(configuration: access.http)
        let endpoint = access.account.url("endpoint")
        let configuration: PCloudConfiguration
        do {
            configuration =
                try access.keptToken().map { try PCloudConfiguration(token: $0, endpoint: endpoint) }
                ?? endpoint.map(PCloudConfiguration.init(endpoint:)) ?? PCloudConfiguration()
        } catch let error as ConnectorKindError {
            throw error
        } catch {
            throw ConnectorKindError.failed(
                "The token of \(access.signIn.authName) names an API host llvs will not use (\(error)); run `llvs auth \(access.signIn.authName)` again."
            )
        }
        return PCloudFileSystem(
            configuration: configuration, http: http, authorizer: try access.tokenSource(http: http))
    }
}
