import Foundation
import LLVSMocks
import LLVSSupport
import LLVSTestSupport
import Testing

/// An SFTP remote from the command line, against OpenSSH's sshd: the server's key checked (refused when unknown,
/// with what to do), `llvs conformance --faults` through it, a sync between two stores.
@Suite(
    .enabled(
        if: RealSSHServer.unavailable() == nil || CIEnvironment.requiresEveryTest,
        "sshd is missing; install Debian's openssh-server (.ci/run does)"))
final class SFTPCommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    @Test func anSFTPRemoteIsCheckedConformsAndSyncsFromTheCommandLine() async throws {
        let server = try await RealSSHServer()
        let url = server.url(server.folder.path + "/stores/shared")
        // An unknown server is refused with its fingerprint and the commands that trust it.
        let empty = path("known_hosts")
        FileManager.default.createFile(atPath: empty, contents: Data())
        let unknown = try await tests.run(
            ["conformance", url, "--listing-count", "5"],
            environment: ["LLVS_SFTP_IDENTITY": server.identityFile, "LLVS_SFTP_KNOWN_HOSTS": empty])
        #expect(unknown.status != 0, "\(unknown.text)")
        #expect(
            unknown.text.contains(server.hostKeyFingerprint)
                && unknown.text.contains("ssh-keyscan -p \(server.port) 127.0.0.1 >> \(empty)"),
            "\(unknown.text)\n\(unknown.error)")
        // Its fingerprint given, it is let in.
        let pinned = try await tests.run(
            ["conformance", url, "--listing-count", "5", "--large-file-mib", "1"],
            environment: [
                "LLVS_SFTP_IDENTITY": server.identityFile, "LLVS_SFTP_KNOWN_HOSTS": empty,
                "LLVS_SFTP_HOST_KEY": server.hostKeyFingerprint,
            ])
        #expect(pinned.status == 0, "\(pinned.text)\n\(pinned.error)")

        let added = try await tests.run([
            "remote", "add", "--all-stores", "box", url, "--identity", server.identityFile, "--known-hosts",
            server.knownHostsFile,
        ])
        #expect(added.status == 0, "\(added.error)")
        let conformance = try await tests.run(
            ["conformance", "box", "--faults", "--listing-count", "120", "--large-file-mib", "9"])
        #expect(conformance.status == 0, "\(conformance.text)\n\(conformance.error)")
        #expect(conformance.text.contains("23 passed, 0 failed"), "\(conformance.text)")

        for store in ["a", "b"] { #expect(try await tests.run(["init", "--store", path(store)]).status == 0) }
        #expect(
            try await tests.run(["put", "k", "-", "--store", path("a")], input: Data("over SSH".utf8)).status == 0)
        #expect(try await tests.run(["sync", "box", "--store", path("a")]).status == 0)
        #expect(try await tests.run(["sync", "box", "--store", path("b")]).status == 0)
        #expect(try await tests.run(["get", "k", "--store", path("b")]).text == "over SSH")

        let noHost = try await tests.run(["remote", "add", "--all-stores", "nohost", "sftp:///srv"])
        #expect(noHost.status == 2, "\(noHost.error)")
        let withPassword = try await tests.run(["conformance", "sftp://me:secret@127.0.0.1:\(server.port)/x"])
        #expect(withPassword.status == 2 && withPassword.error.contains("--password-stdin"), "\(withPassword.error)")
    }
}
