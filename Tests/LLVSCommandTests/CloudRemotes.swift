import Foundation
import LLVS
import LLVSMocks
import LLVSTestSupport
import Testing

extension CommandLineTests {
    /// Runs `llvs` with these words only (no `--store`).
    func command(_ arguments: String..., input: Data? = nil) async throws -> Result {
        try await run(arguments, input: input)
    }

    /// A path in the test's folder.
    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Adds the remote `home` (for all stores) of a kind: a local folder, or the kind's mock started here, its account
    /// authorized with the token the mock issued. `folder` is the remote's folder on the service. `faults`: the
    /// mock's `--faults`; `expiredToken`: the account's access token is already past, so the first request refreshes.
    /// `options` go to `remote add` (`--encrypt`), with `environment` (`LLVS_PASSPHRASE`).
    func addRemote(
        _ kind: String, folder: String, faults: String? = nil, expiredToken: Bool = false, options: [String] = [],
        environment: [String: String] = [:]
    ) async throws -> AnyObject? {
        let faultArguments = faults.map { ["--faults", $0] } ?? []
        switch kind {
        case "webdav":
            let mock = try MockProcess(["webdav", "--user", "u", "--password", "pw"] + faultArguments)
            let added = try await run(
                [
                    "remote", "add", "--all-stores", "home",
                    mock.url.replacingOccurrences(of: "http://", with: "webdav://"), "--user", "u",
                    "--password-stdin",
                ] + options, input: Data("pw\n".utf8), environment: environment)
            #expect(added.status == 0, "\(added.error)")
            return mock
        case "gdrive", "onedrive", "pcloud", "box", "dropbox":
            // pCloud's account is in the EU region: the token from the sign-in names its host, and llvs talks only to it.
            let service = kind == "pcloud" ? "pcloud-eu" : kind
            let url =
                switch kind {
                case "gdrive": "gdrive:/" + folder.lowercased()
                case "onedrive": "onedrive:/" + folder + "?"
                default: "\(kind):/" + folder
                }
            let token = file("issued-token.json")
            let mock = try MockProcess([service, "--token-out", token] + faultArguments, lineCount: 2)
            if expiredToken {
                var issued =
                    try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: token)))
                    as? [String: Any] ?? [:]
                issued["expires_at"] = "2001-01-01T00:00:00Z"
                try JSONSerialization.data(withJSONObject: issued).write(to: URL(fileURLWithPath: token))
            }
            var words = [
                "remote", "add", "--all-stores", "home", url, "--endpoint", mock.url, "--client-id",
                mock.fields["client_id"] ?? "",
            ]
            // OneDrive's client is a public one, and the Dropbox app signs in with PKCE: no secret.
            let secret = kind == "onedrive" || kind == "dropbox" ? nil : Data((mock.fields["client_secret"] ?? "").utf8)
            if secret != nil { words.append("--client-secret-stdin") }
            let added = try await run(words + options, input: secret, environment: environment)
            #expect(added.status == 0, "\(added.error)")
            if kind == "gdrive" { #expect(added.text.contains("llvs auth gdrive")) }
            let auth = try await command("auth", "home", "--token-json", token)
            #expect(auth.status == 0, "\(auth.error)")
            return mock
        case "s3", "s3-rclone":
            // A real S3 server from PyPI (scripts/install-client-libraries), with a fresh bucket: moto's server, or
            // `rclone serve s3`, which keeps keys as files and ignores conditions on writes.
            let kind: RealS3Server.Kind = kind == "s3" ? .moto : .rclone
            if let reason = RealS3Server.unavailable(kind) {
                throw CloudFileSystemError.server(status: 0, message: reason)
            }
            let server = try await RealS3Server(kind)
            let rcloneOptions = kind == .rclone ? ["--folder-markers", "off", "--conditional-writes", "off"] : []
            let added = try await run(
                [
                    "remote", "add", "--all-stores", "home", "s3://\(server.bucket)/" + folder, "--endpoint",
                    server.endpoint.absoluteString, "--access-key-id", server.accessKeyID, "--secret-access-key-stdin",
                ] + rcloneOptions + options, input: Data(server.secretAccessKey.utf8), environment: environment)
            #expect(added.status == 0, "\(added.error)")
            return server
        case "s3-mock":
            let mock = try MockProcess(["s3"] + faultArguments, lineCount: 2)
            let added = try await run(
                [
                    "remote", "add", "--all-stores", "home", "s3://llvs/" + folder, "--endpoint", mock.url,
                    "--access-key-id", mock.fields["access_key_id"] ?? "", "--secret-access-key-stdin",
                ] + options, input: Data((mock.fields["secret_access_key"] ?? "").utf8), environment: environment)
            #expect(added.status == 0, "\(added.error)")
            return mock
        case "sftp":
            // OpenSSH's sshd on a free port, its key in a known-hosts file of the test's, the user's key given.
            if let reason = RealSSHServer.unavailable() {
                throw CloudFileSystemError.server(status: 0, message: reason)
            }
            let server = try await RealSSHServer()
            let url = server.url(server.folder.appendingPathComponent(folder).path)
                .replacingOccurrences(of: " ", with: "%20")
            let added = try await run(
                [
                    "remote", "add", "--all-stores", "home", url, "--identity", server.identityFile, "--known-hosts",
                    server.knownHostsFile,
                ] + options, environment: environment)
            #expect(added.status == 0, "\(added.error)")
            return server
        default:
            #expect(
                try await run(
                    ["remote", "add", "--all-stores", "home", "file://" + file("remote")] + options,
                    environment: environment
                ).status == 0)
            return nil
        }
    }
}
