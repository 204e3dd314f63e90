import Foundation
import Testing

/// `llvs clone URL DIR`, as `git clone` is used: a new machine has no store and no remotes, only the address.
@Suite final class CloneCommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    @discardableResult
    func llvs(
        _ arguments: String..., input: Data? = nil, environment: [String: String] = [:]
    ) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input, environment: environment)
    }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }

    /// A store `a` with one value, pushed to the remote `home` (kept for all stores) at `url`.
    func pushOneValue(to url: String, addArguments: [String] = [], input: Data? = nil) async throws {
        #expect(try await llvs("init", "--store", path("a")).status == 0)
        #expect(try await llvs("put", "greeting", "-", "--store", path("a"), input: Data("hello".utf8)).status == 0)
        let added = try await tests.run(["remote", "add", "--all-stores", "home", url] + addArguments, input: input)
        #expect(added.status == 0, "\(added.error)")
        let pushed = try await llvs("push", "home", "--store", path("a"))
        #expect(pushed.status == 0, "\(pushed.error)")
    }

    func expectCloned(
        _ result: CommandLineTests.Result, into store: String, remote: String = "origin", url: String
    ) async throws {
        #expect(result.status == 0, "\(result.error)")
        #expect(try await llvs("get", "greeting", "--store", path(store)).text == "hello")
        let listed = try await llvs("remote", "list", "--store", path(store))
        #expect(listed.text.contains("\(remote)\t\(url)"), "\(listed.text)")
    }

    @Test func aLocalFolderURLClonesAndTheNewStoreSyncsWithItByName() async throws {
        let url = "file://" + path("remote")
        try await pushOneValue(to: url)
        try await expectCloned(try await llvs("clone", url, path("b")), into: "b", url: url)
        // The new store keeps the remote as its own: a later sync needs no name and no configuration.
        #expect(try await llvs("put", "more", "-", "--store", path("b"), input: Data("from b".utf8)).status == 0)
        #expect(try await llvs("sync", "--store", path("b")).text.contains("Sent 1 version"))
        try await expectCloned(
            try await llvs("clone", url, path("c"), "--name", "upstream"), into: "c", remote: "upstream", url: url)
    }

    @Test func aWebDAVURLClones() async throws {
        let mock = try MockProcess(["webdav"])
        let url = mock.url.replacingOccurrences(of: "http://", with: "webdav://")
        try await pushOneValue(to: url)
        try await expectCloned(try await llvs("clone", url, path("b")), into: "b", url: url)
        withExtendedLifetime(mock) {}
    }

    /// A cloud URL signs in with the kind's account, made and authorized once on this machine.
    @Test func aGoogleDriveURLClonesOnTheKindsAccount() async throws {
        let token = path("issued-token.json")
        let mock = try MockProcess(["gdrive", "--token-out", token], lineCount: 2)
        let url = "gdrive:/stores/shared"
        #expect(try await llvs("init", "--store", path("a")).status == 0)
        #expect(try await llvs("put", "greeting", "-", "--store", path("a"), input: Data("hello".utf8)).status == 0)
        let added = try await llvs(
            "remote", "add", "--all-stores", "home", url, "--endpoint", mock.url, "--client-id",
            mock.fields["client_id"] ?? "",
            "--client-secret-stdin", input: Data((mock.fields["client_secret"] ?? "").utf8))
        #expect(added.status == 0, "\(added.error)")
        #expect(try await llvs("auth", "home", "--token-json", token).status == 0)
        #expect(try await llvs("push", "home", "--store", path("a")).status == 0)
        let missing = try await llvs("clone", url, path("x"), "--account", "nobody")
        #expect(missing.status == 1 && missing.error.contains("llvs auth nobody"), "\(missing.error)")
        let cloned = try await llvs("clone", url, path("b"))
        try await expectCloned(cloned, into: "b", url: url)
        #expect(try await llvs("remote", "show", "origin", "--store", path("b")).text.contains("account: gdrive"))

        withExtendedLifetime(mock) {}
    }

    /// With a change-feed position, a pull of one new version costs what a sync does on every cloud: the feed
    /// request and the version's two files. A file is one request on Drive and Dropbox; on OneDrive and Box its content
    /// request is redirected to a download host, and on pCloud a link is asked for first: two exchanges each, as
    /// the services define their downloads.
    @Test(arguments: ["gdrive", "onedrive", "pcloud", "box", "dropbox"])
    func aPullOfOneNewVersionIsTheFeedAndTwoDownloads(kind: String) async throws {
        #expect(try await llvs("init", "--store", path("a")).status == 0)
        #expect(try await llvs("put", "greeting", "-", "--store", path("a"), input: Data("hello".utf8)).status == 0)
        let mock = try await tests.addRemote(kind, folder: "Stores/shared")
        #expect(try await llvs("push", "home", "--store", path("a")).status == 0)
        let cloned = try await llvs("clone", "home", path("b"))
        #expect(cloned.status == 0, "\(cloned.error)")
        #expect(try await llvs("sync", "--store", path("b")).status == 0)
        func requests(_ command: String) async throws -> [String] {
            #expect(
                try await llvs("put", "n\(UUID().uuidString)", "-", "--store", path("a"), input: Data("new".utf8))
                    .status == 0)
            #expect(try await llvs("push", "home", "--store", path("a")).status == 0)
            let traced = try await llvs(command, "--store", path("b"), environment: ["LLVS_HTTP_TRACE": "1"])
            #expect(traced.status == 0, "\(traced.error)")
            return traced.error.split(separator: "\n").filter { $0.contains("→ ") }.map(String.init)
        }
        let exchangesPerDownload = kind == "gdrive" || kind == "dropbox" ? 1 : 2
        let pull = try await requests("pull")
        #expect(pull.count == 1 + 2 * exchangesPerDownload, "\(kind) pull: \(pull.joined(separator: "\n"))")
        let sync = try await requests("sync")
        #expect(sync.count == pull.count, "\(kind) sync: \(sync.joined(separator: "\n"))")
        withExtendedLifetime(mock) {}
    }

    /// A refresh runs in a helper process (so it outlives a killed command), and still shows in the trace.
    @Test func aTracedCommandShowsTheTokenRefreshItsHelperMakes() async throws {
        #expect(try await llvs("init", "--store", path("a")).status == 0)
        let mock = try await tests.addRemote("gdrive", folder: "Stores/traced", expiredToken: true)
        let traced = try await llvs("push", "home", "--store", path("a"), environment: ["LLVS_HTTP_TRACE": "1"])
        #expect(traced.status == 0, "\(traced.error)")
        let requests = traced.error.split(separator: "\n").filter { $0.contains("→ ") }
        #expect(
            requests.first?.contains("→ POST") == true && requests.first?.contains("token") == true,
            "\(requests.prefix(3))")
        #expect(!traced.error.contains("refresh_token="), "the refresh token is redacted")
        withExtendedLifetime(mock) {}
    }

    @Test func anEncryptedURLClonesWithThePassphraseAndAWrongOneLeavesNothing() async throws {
        let url = "file://" + path("remote")
        try await pushOneValue(to: url, addArguments: ["--encrypt", "--passphrase-stdin"], input: Data("secret".utf8))
        let kept = path("config/llvs/passphrases")
        let before = Set(try FileManager.default.contentsOfDirectory(atPath: kept))

        let wrong = try await llvs(
            "clone", url, path("b"), "--encrypt", "--passphrase-stdin", input: Data("guess".utf8))
        #expect(wrong.status == 1 && wrong.error.contains("passphrase"))
        #expect(!FileManager.default.fileExists(atPath: path("b")))
        #expect(
            Set(try FileManager.default.contentsOfDirectory(atPath: kept)) == before, "the wrong passphrase is not kept"
        )

        try await expectCloned(
            try await llvs("clone", url, path("b"), "--encrypt", "--passphrase-stdin", input: Data("secret".utf8)),
            into: "b", url: url)
        #expect(try await llvs("remote", "show", "origin", "--store", path("b")).text.contains("encrypted: yes"))
        #expect(try await llvs("pull", "--store", path("b")).status == 0, "the kept passphrase serves later commands")

        // An empty folder is no store, and cloning it makes no key there.
        try FileManager.default.createDirectory(atPath: path("empty"), withIntermediateDirectories: true)
        let empty = try await llvs(
            "clone", "file://" + path("empty"), path("c"), "--encrypt", environment: ["LLVS_PASSPHRASE": "p"])
        #expect(empty.status == 3)
        #expect(try FileManager.default.contentsOfDirectory(atPath: path("empty")).isEmpty)
    }

    @Test func mistakesGiveClearErrors() async throws {
        let unknown = try await llvs("clone", "nowhere", path("b"))
        #expect(
            unknown.status == 3 && unknown.error.contains("llvs clone URL DIR")
                && !unknown.error.contains("llvs remote add nowhere URL`"))
        #expect(try await llvs("clone", "nowhere", path("b"), "--name", "x").status == 2)
        #expect(try await llvs("clone", "nowhere", path("b"), "--encrypt").status == 2)
        #expect(try await llvs("clone", "ftp://example.com/x", path("b")).status == 2)
        let notAStore = try await llvs("clone", "file://" + path("missing"), path("b"))
        #expect(notAStore.status == 3 && notAStore.error.contains("holds no LLVS store"))
        #expect(!FileManager.default.fileExists(atPath: path("b")))
    }
}
