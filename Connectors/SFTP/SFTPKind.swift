import Foundation
import LLVS
import LLVSCloudService

extension ConnectorKind {
    /// `sftp://user@host[:port]/path`: a folder on an SSH server (`/~/path` for one under the user's home). The
    /// server's key must be in the known-hosts file (or given by `--host-key`); the user signs in with a key
    /// (`--identity`, else the usual ones in ~/.ssh and the SSH agent) or a password on standard input.
    public static let sftp = ConnectorKind(
        name: "sftp", serviceName: "SFTP", address: .server,
        options: [
            ConnectorOption(
                "user", "USER", "the user to sign in as (else the URL's user@, else $USER)", level: .account),
            ConnectorOption(
                "identity", "FILE",
                "the private key to sign in with (else ~/.ssh/id_ed25519, id_ecdsa or id_rsa, and the SSH agent)",
                level: .account),
            ConnectorOption(
                "known-hosts", "FILE", "the known-hosts file the server's key must be in (default ~/.ssh/known_hosts)",
                level: .account),
            ConnectorOption(
                "host-key", "SHA256:…",
                "accept the server key with this fingerprint (as `ssh-keygen -l` prints it) though no known-hosts entry names it",
                level: .account),
            ConnectorOption(
                "connections", "N", "SSH connections at once (default 4)", level: .remote, type: .number(1...16)),
        ],
        secret: ConnectorSecret("password", "the user's password (or the private key's passphrase)", required: false),
        usesHTTP: false
    ) { access in
        guard let host = access.url.host, !host.isEmpty else {
            throw ConnectorKindError.usage("an SFTP remote names its server, as sftp://me@backup.example.com/srv/llvs")
        }
        guard access.url.password == nil else {
            throw ConnectorKindError.usage(
                "an SFTP remote's URL holds no password; give it on standard input with --password-stdin")
        }
        let environment = access.environment
        let home = environment["HOME"] ?? NSHomeDirectory()
        guard
            let user = access.account["user"] ?? access.url.user?.removingPercentEncoding
                ?? environment["USER"].flatMap({ $0.isEmpty ? nil : $0 })
        else {
            throw ConnectorKindError.usage("an SFTP remote needs a user: sftp://USER@\(host)/path, or --user")
        }
        let fingerprint = access.account["host-key"]
        if let fingerprint, !SFTPConfiguration.isFingerprint(fingerprint) {
            throw ConnectorKindError.usage(
                "--host-key takes a key's SHA-256 fingerprint as `ssh-keygen -l` prints it (SHA256: and 43 characters), not \(fingerprint)"
            )
        }
        let identity =
            access.account["identity"]
            ?? SFTPConfiguration.defaultIdentities(home: home).first { FileManager.default.isReadableFile(atPath: $0) }
        if let identity, !FileManager.default.isReadableFile(atPath: identity) {
            throw SFTPError.unreadableIdentity(path: identity, message: "it is missing or not readable")
        }
        var configuration = SFTPConfiguration(
            host: host, port: access.url.port ?? 22, user: user, root: access.url.path, identityFile: identity,
            password: access.secret, knownHostsFile: access.account["known-hosts"] ?? home + "/.ssh/known_hosts",
            hostKeyFingerprint: fingerprint)
        if let connections = access.remote["connections"].flatMap(Int.init) { configuration.connections = connections }
        return SFTPFileSystem(configuration: configuration)
    }
}
