import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

extension ConnectorKind {
    /// `onedrive:/path`: a folder in the user's own drive, or in the drive `--drive-id` names (a SharePoint library),
    /// which needs an account whose scope reaches every drive.
    public static let oneDrive = ConnectorKind(
        name: "onedrive", serviceName: "OneDrive", address: .servicePath,
        options: [
            ConnectorOption(
                "tenant", "TENANT", "the Microsoft tenant to sign in with: common, consumers, organizations or an ID",
                level: .account, defaultValue: "common"),
            ConnectorOption(
                "scope", "SCOPE",
                "what the sign-in may touch: own (your own drive) or all (every drive you can reach, needed by --drive-id)",
                level: .account, type: .choice(["own", "all"]), defaultValue: "own"),
            ConnectorOption(
                "drive-id", "ID", "a drive by ID, as a SharePoint library (default your own drive)", level: .remote),
        ],
        secret: ConnectorSecret(
            "client-secret", "the OAuth client's secret (a public client has none)", required: false),
        oauth: ConnectorOAuth(hasDeviceFlow: true) { client, account in
            OneDriveConfiguration.oauth(
                clientId: client.id, clientSecret: client.secret, tenant: account["tenant"] ?? "common",
                allDrives: account["scope"] == "all", endpoint: account.url("endpoint"))
        },
        accountDefaults: { remote in remote["drive-id"] == nil ? [:] : ["scope": "all"] }
    ) { access in
        let http = HTTPClient(configuration: access.http)
        var drive = access.account.url("endpoint").map(OneDriveConfiguration.init(endpoint:)) ?? OneDriveConfiguration()
        drive.driveID = access.remote["drive-id"]
        return OneDriveFileSystem(configuration: drive, http: http, authorizer: try access.tokenSource(http: http))
    }
}
