import Foundation
import LLVSCloudService

/// A remote given by its URL on the command line rather than by a name (`llvs clone URL DIR`, `llvs conformance
/// URL`), as `git clone URL` takes one.
enum URLRemote {
    /// Whether the argument is a URL: a URL has a scheme; a remote's name cannot (names are letters, digits, '.', '_',
    /// '-').
    static func isURL(_ text: String) -> Bool { text.contains(":") }

    /// The remote `url` names, on `account` or, for a kind that signs in, the kind's own account, which must exist
    /// already (made by `llvs remote add` and authorized by `llvs auth`).
    static func entry(_ url: String, account: String?, context: CommandContext) throws -> RemoteEntry {
        let (kind, _) = try context.connectors.parse(url)
        var account = account
        if account == nil, kind.accountUse == .required { account = kind.name }
        if let account, try context.accountBook().load()[account] == nil {
            throw CommandError.failed(
                "There is no account called \(account) to sign in to \(kind.serviceName) with; add a remote on it first (`llvs remote add --all-stores NAME \(url) …`, then `llvs auth \(account)`), or name one with --account."
            )
        }
        return RemoteEntry(url: url, account: account, options: [:])
    }
}
