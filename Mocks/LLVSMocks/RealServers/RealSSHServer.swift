import Foundation
import LLVSHTTP
import LLVSSupport

/// OpenSSH's own server (Debian's `openssh-server`) for the SFTP tests: started on a free port of the loopback
/// with a throwaway host key and user key, signing in the user the tests run as, its SFTP subsystem the server's own
/// (`internal-sftp`). Stops with the value, with every session it forked. For the SFTP tests and `llvs-bench sftp`.
public final class RealSSHServer: Sendable {
    public static let binary = "/usr/sbin/sshd"
    public static let keygen = "/usr/bin/ssh-keygen"

    public let port: UInt16
    /// The user the server signs in: the one the tests run as.
    public let user: String
    /// The folder holding the keys, the known-hosts file and the configuration.
    public let folder: URL
    /// The user's private key, which the server's authorized keys hold.
    public var identityFile: String { folder.appendingPathComponent("user_ed25519").path }
    /// A known-hosts file naming the server's key, as `[127.0.0.1]:port`.
    public var knownHostsFile: String { folder.appendingPathComponent("known_hosts").path }
    /// The server key's fingerprint, as `ssh-keygen -l` prints it.
    public let hostKeyFingerprint: String
    private let process: SpawnedProcess

    /// Why the server cannot run here; nil when it can.
    public static func unavailable() -> String? {
        FileManager.default.isExecutableFile(atPath: binary)
            ? nil : "\(binary) is missing; install Debian's openssh-server (.ci/run does)"
    }

    public init() async throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("llvs-sshd-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        guard let account = getpwuid(geteuid()) else {
            throw HTTPError.localFile(path: "/etc/passwd", message: "no account for user \(geteuid()): errno \(errno)")
        }
        user = String(cString: account.pointee.pw_name)
        let hostKey = folder.appendingPathComponent("host_ed25519").path
        for key in [hostKey, folder.appendingPathComponent("user_ed25519").path] { try Self.makeKey(at: key) }
        try FileManager.default.copyItem(
            atPath: folder.appendingPathComponent("user_ed25519.pub").path,
            toPath: folder.appendingPathComponent("authorized_keys").path)
        let printed = ChildProcess.output(of: URL(fileURLWithPath: Self.keygen), ["-l", "-f", hostKey + ".pub"])
        guard let fingerprint = printed?.output.split(separator: " ").first(where: { $0.hasPrefix("SHA256:") }) else {
            throw HTTPError.localFile(path: hostKey, message: "ssh-keygen -l printed no fingerprint")
        }
        hostKeyFingerprint = String(fingerprint)
        // sshd run by root wants its privilege-separation folder.
        if geteuid() == 0 {
            try? FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        }
        var lastFailure = ""
        for _ in 0..<5 {
            let port = try RealWebDAVServer.freePort()
            let configuration = folder.appendingPathComponent("sshd_config")
            try """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(hostKey)
            PidFile none
            AuthorizedKeysFile \(folder.appendingPathComponent("authorized_keys").path)
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            UsePAM no
            StrictModes no
            PermitRootLogin prohibit-password
            MaxStartups 64
            MaxSessions 64
            Subsystem sftp internal-sftp

            """.write(to: configuration, atomically: true, encoding: .utf8)
            if let started = try await SpawnedProcess.announcing(
                [Self.binary, "-D", "-e", "-f", configuration.path], "Server listening on 127.0.0.1 port \(port)")
            {
                process = started
                self.port = port
                let publicKey = try String(contentsOfFile: hostKey + ".pub", encoding: .utf8).split(separator: " ")
                try "[127.0.0.1]:\(port) \(publicKey[0]) \(publicKey[1])\n".write(
                    toFile: knownHostsFile, atomically: true, encoding: .utf8)
                return
            }
            lastFailure = "it did not say it listens on port \(port)"
        }
        try? FileManager.default.removeItem(at: folder)
        throw HTTPError.transport(code: 7, message: "sshd did not start: \(lastFailure)", url: "")
    }

    deinit {
        dropConnections()
        process.stop()
        try? FileManager.default.removeItem(at: folder)
    }

    /// Ends every session the server forked (each in a session of its own), as a server restart would: clients find
    /// their connections closed.
    public func dropConnections() {
        for child in Self.children(of: process.pid) {
            for grandchild in Self.children(of: child) { kill(grandchild, SIGKILL) }
            kill(child, SIGKILL)
        }
    }

    /// Stops every session the server forked (SIGSTOP): their connections stay open and say nothing, as a server
    /// that hangs. `dropConnections` ends them.
    public func pauseConnections() {
        for child in Self.children(of: process.pid) {
            kill(child, SIGSTOP)
            for grandchild in Self.children(of: child) { kill(grandchild, SIGSTOP) }
        }
    }

    /// Processes whose parent is `parent`, from /proc.
    static func children(of parent: pid_t) -> [pid_t] {
        guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc") else { return [] }
        return entries.compactMap { entry -> pid_t? in
            guard let pid = pid_t(entry),
                let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
                let close = stat.lastIndex(of: ")")
            else { return nil }
            // After the command's closing parenthesis: state, then the parent's ID.
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            return fields.count > 1 && pid_t(fields[1]) == parent ? pid : nil
        }
    }

    /// Makes an Ed25519 key pair (`path` and `path.pub`), its private key locked with `passphrase` when one is given.
    public static func makeKey(at path: String, passphrase: String = "") throws {
        let made = ChildProcess.output(
            of: URL(fileURLWithPath: keygen), ["-q", "-t", "ed25519", "-N", passphrase, "-C", "llvs-test", "-f", path])
        guard made?.status == 0 else { throw HTTPError.localFile(path: path, message: "ssh-keygen could not make it") }
    }

    /// The remote URL of a folder on the server.
    public func url(_ path: String) -> String { "sftp://\(user)@127.0.0.1:\(port)\(path)" }
}
