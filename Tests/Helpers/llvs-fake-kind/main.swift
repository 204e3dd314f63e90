import Foundation
import LLVS
import LLVSCloudService
import LLVSCommandLine
import LLVSHTTP

/// `llvs` with one more kind of remote, `fake:/path`, made here and nowhere in the commands: the commands take the
/// registry as a value. A fake cloud is a folder on this machine (the account's `--shelf-root`) that only opens to an
/// account holding a token (`llvs auth ACCOUNT --token-json FILE`), so the tests can show a new kind being added,
/// documented, authorized and synced without a line of the commands changing.
let fake = ConnectorKind(
    name: "fake", serviceName: "Fake Cloud", address: .servicePath,
    options: [
        ConnectorOption(
            "shelf-root", "DIR", "the folder on this machine that stands for the fake cloud", level: .account),
        ConnectorOption(
            "shelf", "NAME", "which shelf of the fake cloud the remote is on", level: .remote,
            type: .choice(["top", "bottom"]), defaultValue: "top"),
    ],
    oauth: ConnectorOAuth(hasDeviceFlow: false) { client, account in
        // Never contacted: a token comes from `llvs auth --token-json`, and the tests' tokens do not expire.
        OAuthConfiguration(
            authorizationURL: URL(string: "http://127.0.0.1:9/authorize")!,
            tokenURL: URL(string: "http://127.0.0.1:9/token")!,
            clientId: client.id, clientSecret: client.secret, scopes: ["shelves"])
    }
) { access in
    guard let root = access.account["shelf-root"] else { throw FakeCloudError.noShelfRoot }
    guard try access.keptToken() != nil else {
        throw FakeCloudError.notAuthorized(command: "llvs auth \(access.signIn.name ?? "")")
    }
    let shelf = URL(fileURLWithPath: root).appendingPathComponent(access.remote["shelf"] ?? "top")
    try FileManager.default.createDirectory(at: shelf, withIntermediateDirectories: true)
    return LocalFolderFileSystem(root: shelf)
}

enum FakeCloudError: Error, CustomStringConvertible {
    case noShelfRoot
    case notAuthorized(command: String)

    var description: String {
        switch self {
        case .noShelfRoot: "the fake account has no --shelf-root"
        case .notAuthorized(let command):
            "the fake cloud is closed to an account without a token; run `\(command) --token-json FILE`"
        }
    }
}

await LLVSTool(connectors: ConnectorRegistry.standard.adding(fake)).main()
