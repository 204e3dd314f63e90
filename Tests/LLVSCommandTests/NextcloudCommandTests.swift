import Foundation
import LLVSSupport
import Testing

/// A Nextcloud behind a proxy that refuses bodies over 10 MiB, reached as a user would: `llvs auth` by Login Flow v2
/// (granted on the server's page), then a 30 MiB value pushed and cloned back identical.
@Suite final class NextcloudCommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    @Test func loginFlowThenALargeValueThroughAProxysBodyLimit() async throws {
        // The mock grants each sign-in at once, as a user who opens the page and grants access would
        // (NextcloudTests grants one on the page itself).
        let mock = try MockProcess([
            "nextcloud", "--max-body", "10485760", "--approve-devices", "--password", "the-users-own-password",
        ])
        let url = mock.url.replacingOccurrences(of: "http://", with: "webdav://") + "notes"
        #expect(try await tests.run(["init", "--store", path("a")]).status == 0)
        let added = try await tests.run(["remote", "add", "cloud", url, "--account", "home", "--store", path("a")])
        #expect(added.status == 0, "\(added.error)")

        let plain = try await tests.run(["auth", "cloud", "--store", path("a")])
        #expect(plain.status == 2 && plain.error.contains("--allow-http"), "plain HTTP needs saying so: \(plain.error)")
        let auth = try await tests.run(["auth", "cloud", "--allow-http", "--store", path("a")])
        #expect(auth.status == 0, "\(auth.error)")
        #expect(auth.error.contains("/index.php/login/v2/flow/"), "the login address is printed: \(auth.error)")
        #expect(auth.text.contains("Signed in account home as llvs"), "\(auth.text)")
        let secret = tests.directory.appendingPathComponent("config/llvs/accounts/home.secret")
        let attributes = try FileManager.default.attributesOfItem(atPath: secret.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        #expect(
            try String(contentsOf: secret, encoding: .utf8) != "the-users-own-password",
            "an app password, not the user's")

        let value = tests.directory.appendingPathComponent("large.bin")
        // Bytes that do not compress: the changes file stays large enough to go up in chunks.
        try SeededGenerator.bytes(30 * 1024 * 1024, seed: 8).write(to: value)
        #expect(try await tests.run(["put", "large", value.path, "--store", path("a")]).status == 0)
        let pushed = try await tests.run(
            ["push", "cloud", "--store", path("a")], environment: ["LLVS_HTTP_TRACE": "1"])
        #expect(pushed.status == 0, "\(pushed.error.suffix(2000))")
        #expect(pushed.error.contains("/remote.php/dav/uploads/llvs/"), "the changes file went up in chunks")
        #expect(!pushed.error.contains("← 413 "), "no body passed the proxy's limit")
        #expect(pushed.error.contains("← 201 "), "the trace shows answers")
        let cloned = try await tests.run(["clone", "cloud", path("b"), "--store", path("a")])
        #expect(cloned.status == 0, "\(cloned.error)")
        let got = try await tests.run(["get", "large", "--store", path("b")])
        #expect(got.output == (try Data(contentsOf: value)))

        // Login Flow v2 is Nextcloud's: a WebDAV remote elsewhere says how to sign in instead.
        #expect(
            try await tests.run([
                "remote", "add", "plain", "webdav://127.0.0.1:1/dav/", "--account", "other", "--store", path("a"),
            ]).status == 0)
        let refused = try await tests.run(["auth", "plain", "--store", path("a")])
        #expect(refused.status != 0 && refused.error.contains("not a Nextcloud files URL"), "\(refused.error)")
    }
}
