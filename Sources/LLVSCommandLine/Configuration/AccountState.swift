import Foundation
import LLVSCloudService

/// What `remote show` and `account show` tell of an account besides its options: whether a secret is kept, and for
/// an OAuth kind whether it is authorized; never the secret or the token themselves.
struct AccountState: Encodable {
    var secretKept: Bool
    /// nil for a kind that does not sign in with OAuth.
    var authorized: Bool?

    init(_ name: String, kind: ConnectorKind?, configuration: UserConfiguration) {
        secretKept = FileManager.default.fileExists(atPath: configuration.secretFile(name).path)
        authorized =
            kind?.oauth == nil ? nil : FileManager.default.fileExists(atPath: configuration.tokenFile(name).path)
    }

    /// The lines for people, each starting with `indent`.
    func lines(_ name: String, kind: ConnectorKind?, configuration: UserConfiguration, indent: String) -> [String] {
        var lines: [String] = []
        if secretKept {
            lines.append("\(indent)\(kind?.secret?.name ?? "secret"): kept in \(configuration.secretFile(name).path)")
        }
        if let authorized {
            lines.append(
                authorized
                    ? "\(indent)authorized: token in \(configuration.tokenFile(name).path)"
                    : "\(indent)not authorized yet: run `llvs auth \(name)`")
        }
        return lines
    }
}
