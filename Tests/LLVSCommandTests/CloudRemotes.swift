import Foundation
import Testing

extension CommandLineTests {
    /// Runs `llvs` with these words only (no `--store`).
    func command(_ arguments: String..., input: Data? = nil) async throws -> Result { try await run(arguments, input: input) }

    /// A path in the test's folder.
    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Adds the remote `home` (for all stores) of a kind: a local folder, or the kind's mock started here, its account
    /// authorized with the token the mock issued. `folder` is the remote's folder on the service.
    func addRemote(_ kind: String, folder: String) async throws -> MockProcess? {
        switch kind {
        case "webdav":
            let mock = try MockProcess(["webdav", "--user", "u", "--password", "pw"])
            let added = try await command("remote", "add", "--all-stores", "home", mock.url.replacingOccurrences(of: "http://", with: "webdav://"), "--user", "u",
                                 "--password-stdin", input: Data("pw\n".utf8))
            #expect(added.status == 0, "\(added.error)")
            return mock
        case "gdrive":
            let token = file("issued-token.json")
            let mock = try MockProcess(["gdrive", "--token-out", token], lineCount: 2)
            let added = try await command("remote", "add", "--all-stores", "home", "gdrive:/" + folder.lowercased(), "--endpoint", mock.url,
                                 "--client-id", mock.fields["client_id"] ?? "", "--client-secret-stdin",
                                 input: Data((mock.fields["client_secret"] ?? "").utf8))
            #expect(added.status == 0, "\(added.error)")
            #expect(added.text.contains("llvs auth gdrive"))
            let auth = try await command("auth", "home", "--token-json", token)
            #expect(auth.status == 0, "\(auth.error)")
            return mock
        case "onedrive":
            let token = file("issued-token.json")
            let mock = try MockProcess(["onedrive", "--token-out", token], lineCount: 2)
            let added = try await command("remote", "add", "--all-stores", "home", "onedrive:/" + folder + "?", "--endpoint", mock.url,
                                 "--client-id", mock.fields["client_id"] ?? "")
            #expect(added.status == 0, "\(added.error)")
            #expect(try await command("auth", "home", "--token-json", token).status == 0)
            return mock
        case "pcloud":
            // An account in the EU region: the token from the sign-in names its host, and llvs talks only to it.
            let token = file("issued-token.json")
            let mock = try MockProcess(["pcloud-eu", "--token-out", token], lineCount: 2)
            let added = try await command("remote", "add", "--all-stores", "home", "pcloud:/" + folder, "--endpoint", mock.url,
                                 "--client-id", mock.fields["client_id"] ?? "", "--client-secret-stdin",
                                 input: Data((mock.fields["client_secret"] ?? "").utf8))
            #expect(added.status == 0, "\(added.error)")
            #expect(try await command("auth", "home", "--token-json", token).status == 0)
            return mock
        case "box":
            let token = file("issued-token.json")
            let mock = try MockProcess(["box", "--token-out", token], lineCount: 2)
            let added = try await command("remote", "add", "--all-stores", "home", "box:/" + folder, "--endpoint", mock.url,
                                 "--client-id", mock.fields["client_id"] ?? "", "--client-secret-stdin",
                                 input: Data((mock.fields["client_secret"] ?? "").utf8))
            #expect(added.status == 0, "\(added.error)")
            #expect(try await command("auth", "home", "--token-json", token).status == 0)
            return mock
        default:
            #expect(try await command("remote", "add", "--all-stores", "home", "file://" + file("remote")).status == 0)
            return nil
        }
    }
}
