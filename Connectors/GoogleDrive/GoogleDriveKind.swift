import Foundation
import LLVS
import LLVSCloudService
import LLVSHTTP

extension ConnectorKind {
    /// `gdrive:/path`: a folder in My Drive (or under `--root-folder-id`).
    public static let googleDrive = ConnectorKind(
        name: "gdrive", serviceName: "Google Drive", address: .servicePath,
        options: [
            ConnectorOption(
                "scope", "SCOPE",
                "what the sign-in may touch: drive.file (only what llvs created) or drive (the whole Drive, for a folder made elsewhere; Google refuses it to auth --device)",
                level: .account, type: .choice(["drive.file", "drive"]), defaultValue: "drive.file"),
            ConnectorOption(
                "removal", "HOW", "what removing a remote file does", level: .remote,
                type: .choice(["trash", "delete"]), defaultValue: "trash"),
            ConnectorOption(
                "root-folder-id", "ID", "the Drive folder that is the remote's root (default My Drive)", level: .remote),
        ],
        secret: ConnectorSecret(
            "client-secret", "the OAuth client's secret (a desktop client has one)", required: false),
        oauth: ConnectorOAuth(
            hasDeviceFlow: true,
            configuration: { client, account in
                GoogleDriveConfiguration.oauth(
                    clientId: client.id, clientSecret: client.secret, scope: driveScope(account),
                    endpoint: account.url("endpoint"))
            },
            deviceFlowRefusal: { account in
                driveScope(account).allowsDeviceFlow
                    ? nil
                    : "Google's device flow refuses the full Drive scope this account was added with (--scope drive); use `llvs auth ACCOUNT --headless` (or the browser), or add the remote on an account with --scope drive.file"
            })
    ) { access in
        let http = HTTPClient(configuration: access.http)
        var drive =
            access.account.url("endpoint").map(GoogleDriveConfiguration.init(endpoint:)) ?? GoogleDriveConfiguration()
        if let removal = access.remote["removal"].flatMap(GoogleDriveConfiguration.Removal.init(rawValue:)) {
            drive.removal = removal
        }
        if let root = access.remote["root-folder-id"] { drive.rootFolderID = root }
        return GoogleDriveFileSystem(configuration: drive, http: http, authorizer: try access.tokenSource(http: http))
    }

    private static func driveScope(_ account: SettingValues) -> GoogleDriveConfiguration.Scope {
        account["scope"].flatMap(GoogleDriveConfiguration.Scope.init(rawValue:)) ?? .file
    }
}
