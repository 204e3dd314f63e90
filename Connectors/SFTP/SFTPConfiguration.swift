import Foundation
import LLVS
import LLVSHTTP

/// Where the server is, who signs in and how, and how the server's key is checked (docs/services/sftp.md).
public struct SFTPConfiguration: Sendable {
    public var host: String
    public var port: Int
    public var user: String
    /// The folder on the server that is this file system's root: absolute (`/srv/llvs`), or under the user's home
    /// directory when it starts with `/~/` (libcurl's spelling, as in `sftp://host/~/llvs`).
    public var root: String
    /// The private key to sign in with; nil tries the user's usual keys (`~/.ssh/id_ed25519`, `id_ecdsa`, `id_rsa`)
    /// and the SSH agent.
    public var identityFile: String?
    /// The password, for a server that takes one (and, with an identity, the key's passphrase).
    public var password: String?
    /// The OpenSSH known-hosts file the server's key must be in (`~/.ssh/known_hosts`).
    public var knownHostsFile: String
    /// A server key accepted though the known-hosts file does not name it: its SHA-256 fingerprint as OpenSSH shows
    /// it (`SHA256:` and 43 base64 characters).
    public var hostKeyFingerprint: String?
    /// SSH connections open at once; each carries one operation at a time. OpenSSH starts refusing new connections
    /// past ten being set up at once (MaxStartups), so more than eight gains nothing on a default server.
    public var connections = 4
    /// How long a connection (TCP, key exchange and sign-in) may take.
    public var connectTimeout: Duration = .seconds(30)
    /// A transfer that moves less than a byte a second for this long has stalled.
    public var stallTimeout: Duration = .seconds(60)
    /// The largest answer `read` keeps in memory; larger files are downloaded to a file.
    public var memoryReadLimit = 256 * 1024 * 1024
    /// Modes of what the connector makes (before the server's umask): private to the signed-in user.
    public var fileMode = 0o600
    public var folderMode = 0o700

    public init(
        host: String, port: Int = 22, user: String, root: String, identityFile: String? = nil,
        password: String? = nil, knownHostsFile: String, hostKeyFingerprint: String? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        let components = root.split(separator: "/").map(String.init)
        self.root = "/" + components.joined(separator: "/")
        self.identityFile = identityFile
        self.password = password
        self.knownHostsFile = knownHostsFile
        self.hostKeyFingerprint = hostKeyFingerprint
    }

    /// The server path of a path below the root (`/srv/llvs/a/b`), with a trailing `/` for a folder URL.
    func serverPath(_ components: [String], folder: Bool = false) -> String {
        let path = ([root == "/" ? "" : root] + components).joined(separator: "/")
        return (path.isEmpty ? "/" : path) + (folder && !path.isEmpty ? "/" : "")
    }

    /// The URL libcurl is given for a server path: each segment escaped as every request's are (`URLEscaping`), so
    /// `/` and the `~` of a home-relative root stay.
    func url(_ serverPath: String) -> String {
        let escaped = serverPath.split(separator: "/", omittingEmptySubsequences: false).map {
            URLEscaping.escape(String($0))
        }.joined(separator: "/")
        let hostPart = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "sftp://\(hostPart):\(port)\(escaped)"
    }

    /// A path as a quote command takes it: in double quotes, with `"` and `\` escaped (libcurl's `Curl_get_pathname`).
    static func quoted(_ serverPath: String) -> String {
        "\"" + serverPath.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
            + "\""
    }

    /// The server as known-hosts entries name it: `[host]:port` off port 22.
    public var knownHostsName: String { port == 22 ? host : "[\(host)]:\(port)" }

    /// Whether text is a SHA-256 key fingerprint as OpenSSH prints it: `SHA256:` and 43 unpadded base64 characters.
    public static func isFingerprint(_ text: String) -> Bool {
        guard text.hasPrefix("SHA256:") else { return false }
        let digest = text.dropFirst(7)
        return digest.count == 43 && Data(base64Encoded: digest + "=") != nil
    }

    /// The user's usual private keys, in the order OpenSSH tries them.
    public static func defaultIdentities(home: String) -> [String] {
        ["id_ed25519", "id_ecdsa", "id_rsa"].map { home + "/.ssh/" + $0 }
    }
}
