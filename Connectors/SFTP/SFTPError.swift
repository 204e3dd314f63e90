import Foundation

/// What stops an SFTP connection before any file is touched: the server's key, the sign-in. Each says what to do.
public enum SFTPError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The server's key is in no known-hosts entry for it: it is refused, as `ssh` with `StrictHostKeyChecking yes`
    /// does, so a first connection to a server impersonated on the way is never trusted.
    case unknownHostKey(host: String, keyType: String, fingerprint: String, knownHostsFile: String)
    /// The known-hosts file names another key for this server: it may be impersonated, or its key was replaced.
    case changedHostKey(host: String, keyType: String, fingerprint: String, knownHostsFile: String)
    /// The server refused every way of signing in that was offered.
    case signInRefused(user: String, host: String, tried: String)
    /// A private key given cannot be read.
    case unreadableIdentity(path: String, message: String)

    public var description: String {
        switch self {
        case .unknownHostKey(let host, let keyType, let fingerprint, let file):
            "The SFTP server \(host) is not known: its \(keyType) key \(fingerprint) is in no entry of \(file). If that is its key (ask its administrator, or compare `ssh-keygen -lf` of its key), add it with `ssh-keyscan \(SFTPError.keyscanTarget(host)) >> \(file)`, or accept this key alone with --host-key \(fingerprint)."
        case .changedHostKey(let host, let keyType, let fingerprint, let file):
            "The SFTP server \(host) offers the \(keyType) key \(fingerprint), which is not the key \(file) holds for it. Someone may be impersonating it; if its key was replaced on purpose, remove the old entry with `ssh-keygen -R \(host) -f \(file)` and add the new one."
        case .signInRefused(let user, let host, let tried):
            "The SFTP server \(host) refused to sign \(user) in (tried: \(tried)). Give the key it knows with --identity FILE, or a password with --password-stdin."
        case .unreadableIdentity(let path, let message):
            "The private key \(path) cannot be read: \(message)."
        }
    }

    /// The arguments `ssh-keyscan` takes for `host:port`.
    static func keyscanTarget(_ host: String) -> String {
        guard host.hasPrefix("["), let close = host.firstIndex(of: "]") else { return host }
        let name = host[host.index(after: host.startIndex)..<close]
        let port = host[close...].dropFirst(2)
        return port.isEmpty ? String(name) : "-p \(port) \(name)"
    }
}
