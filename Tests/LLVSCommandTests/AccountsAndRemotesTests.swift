import Foundation
import Testing

/// Accounts (one sign-in per user, shared by remotes) and remotes (per store, or for all stores), run as a user
/// would: two stores each with a `backup` on one account, an old remotes.json moved over, per-kind option errors,
/// and a kind added by another program without a change to the commands.
@Suite final class AccountsAndRemotesTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    @discardableResult
    func llvs(
        _ arguments: String..., input: Data? = nil, environment: [String: String] = [:]
    ) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input, environment: environment)
    }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }
    var config: URL { tests.directory.appendingPathComponent("config/llvs") }

    /// Secrets stay private however the folder was left: an accounts folder opened to others is taken back to 0700,
    /// and a `.lock` planted as a link is refused rather than followed (its target is never made).
    @Test func accountFilesStayPrivateAndALockLinkIsNotFollowed() async throws {
        let accounts = config.appendingPathComponent("accounts")
        try FileManager.default.createDirectory(
            at: accounts, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let added = try await llvs(
            "remote", "add", "--all-stores", "drive", "gdrive:/x", "--endpoint", "http://127.0.0.1:9", "--client-id",
            "c",
            "--client-secret-stdin", input: Data("s3cret".utf8))
        #expect(added.status == 0, "\(added.error)")
        let mode = (try FileManager.default.attributesOfItem(atPath: accounts.path)[.posixPermissions] as? NSNumber)?
            .intValue
        #expect(mode == 0o700, "the accounts folder is \(String(mode ?? 0, radix: 8))")
        for name in try FileManager.default.contentsOfDirectory(atPath: accounts.path) {
            let fileMode =
                (try FileManager.default.attributesOfItem(atPath: accounts.appendingPathComponent(name).path)[
                    .posixPermissions] as? NSNumber)?.intValue
            #expect(fileMode == 0o600, "\(name) is \(String(fileMode ?? 0, radix: 8))")
        }
        let target = path("planted-target")
        try FileManager.default.createSymbolicLink(
            atPath: accounts.appendingPathComponent("gdrive.token.json.lock").path, withDestinationPath: target)
        let token = path("token.json")
        try Data(#"{"access_token":"a","refresh_token":"r","token_type":"Bearer","expires_in":3600}"#.utf8).write(
            to: URL(fileURLWithPath: token))
        let auth = try await llvs("auth", "drive", "--token-json", token)
        #expect(auth.status != 0 && auth.error.contains("lock"), "\(auth.text) \(auth.error)")
        #expect(!FileManager.default.fileExists(atPath: target), "the lock link's target was made")
    }

    @Test func twoStoresEachHaveABackupOnOneAccountAuthorizedOnce() async throws {
        let token = path("issued-token.json")
        let mock = try MockProcess(["gdrive", "--token-out", token], lineCount: 2)
        for store in ["a", "b"] { #expect(try await llvs("init", "--store", path(store)).status == 0) }
        let first = try await llvs(
            "remote", "add", "backup", "gdrive:/Backups/a", "--endpoint", mock.url, "--client-id",
            mock.fields["client_id"] ?? "",
            "--client-secret-stdin", "--store", path("a"), input: Data((mock.fields["client_secret"] ?? "").utf8))
        #expect(
            first.status == 0 && first.text.contains("on the new account gdrive")
                && first.text.contains("llvs auth gdrive"), "\(first.error)")
        let second = try await llvs("remote", "add", "backup", "gdrive:/Backups/b", "--store", path("b"))
        #expect(second.status == 0 && second.text.contains("on the account gdrive"), "\(second.error)")
        let again = try await llvs("remote", "add", "backup", "gdrive:/Backups/c", "--store", path("a"))
        #expect(again.status == 1 && again.error.contains("exists already for this store"), "\(again.error)")

        // One authorization, by account name, serves both stores' remotes.
        let auth = try await llvs("auth", "gdrive", "--token-json", token)
        #expect(auth.status == 0 && auth.text.contains("Authorized account gdrive"), "\(auth.error)")
        for store in ["a", "b"] {
            _ = try await llvs("put", "from-\(store)", "-", "--store", path(store), input: Data(store.utf8))
            let sync = try await llvs("sync", "--store", path(store))
            #expect(sync.status == 0 && sync.text.contains("Sent 1 version"), "\(store): \(sync.error)")
        }
        // Each store's backup is its own folder: a second sync of a finds nothing of b's.
        #expect(try await llvs("sync", "--store", path("a")).text.contains("Retrieved 0 versions"))
        #expect(
            try await llvs("remote", "list", "--store", path("a")).text.contains(
                "backup\tgdrive:/Backups/a  account gdrive"))
        #expect(
            try await llvs("remote", "list", "--store", path("b")).text.contains(
                "backup\tgdrive:/Backups/b  account gdrive"))
        let accountFiles = try FileManager.default.contentsOfDirectory(
            atPath: config.appendingPathComponent("accounts").path
        ).sorted()
        // The secret, the token and the lock every writer of the token takes (`llvs auth` too).
        #expect(accountFiles == ["gdrive.secret", "gdrive.token.json", "gdrive.token.json.lock"])
        #expect(
            try await llvs("account", "show", "gdrive", "--store", path("b")).text.contains(
                "remotes of this store on it: backup"))
        // A clone from a's backup keeps the remote, so it syncs with it by name.
        #expect(try await llvs("clone", "backup", path("c"), "--store", path("a")).status == 0)
        #expect(try await llvs("get", "from-a", "--store", path("c")).text == "a")
        #expect(try await llvs("remote", "list", "--store", path("c")).text.contains("backup\tgdrive:/Backups/a"))
    }

    @Test func anOldRemotesFileIsMovedOverAndGoesOnSyncing() async throws {
        let token = path("issued-token.json")
        let mock = try MockProcess(["gdrive", "--token-out", token], lineCount: 2)
        try FileManager.default.createDirectory(at: config, withIntermediateDirectories: true)
        let old = """
            {"home": {"url": "file://\(path("remote"))", "concurrency": 4},
             "drive": {"url": "gdrive:/old", "endpoint": "\(mock.url)", "clientId": "\(mock.fields["client_id"] ?? "")", "removal": "delete"}}
            """
        try Data(old.utf8).write(to: config.appendingPathComponent("remotes.json"))
        try Data((mock.fields["client_secret"] ?? "").utf8).write(to: config.appendingPathComponent("drive.secret"))
        try FileManager.default.copyItem(atPath: token, toPath: config.appendingPathComponent("drive.token.json").path)

        #expect(try await llvs("init", "--store", path("a")).status == 0)
        _ = try await llvs("put", "k", "-", "--store", path("a"), input: Data("v".utf8))
        let moved = try await llvs("sync", "home", "--store", path("a"))
        #expect(moved.status == 0 && moved.text.contains("Sent 1 version"), "\(moved.error)")
        #expect(
            moved.error.contains("Moved 2 remotes from") && moved.error.contains("remotes.json.moved"), "\(moved.error)"
        )
        #expect(!FileManager.default.fileExists(atPath: config.appendingPathComponent("remotes.json").path))
        #expect(FileManager.default.fileExists(atPath: config.appendingPathComponent("remotes.json.moved").path))
        #expect(FileManager.default.fileExists(atPath: config.appendingPathComponent("accounts/drive.token.json").path))
        #expect(FileManager.default.fileExists(atPath: config.appendingPathComponent("accounts/drive.secret").path))

        let drive = try await llvs("sync", "drive", "--store", path("a"))
        #expect(
            drive.status == 0 && drive.text.contains("Sent 1 version") && !drive.error.contains("Moved"),
            "\(drive.error)")
        let shown = try await llvs("remote", "show", "drive", "--json", "--store", path("a"))
        let object = try #require(try JSONSerialization.jsonObject(with: shown.output) as? [String: Any])
        #expect(object["account"] as? String == "drive" && object["level"] as? String == "allStores")
        #expect((object["options"] as? [String: String])?["removal"] == "delete")
        #expect((object["accountOptions"] as? [String: String])?["client-id"] == mock.fields["client_id"])
        // Another store sees the moved remotes too, as it saw the old ones.
        #expect(try await llvs("clone", "home", path("b")).status == 0)
        #expect(try await llvs("get", "k", "--store", path("b")).text == "v")
    }

    @Test func optionsAreCheckedPerKind() async throws {
        #expect(try await llvs("init", "--store", path("a")).status == 0)
        func add(_ words: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
            try await tests.run(["remote", "add"] + words + ["--store", path("a")], input: input)
        }
        let scope = try await add("x", "webdav://dav.example.com/x", "--scope", "drive")
        #expect(
            scope.status == 2
                && scope.error.contains(
                    "--scope is not an option of WebDAV remotes (webdav:); they take --user, --auth"),
            "\(scope.error)")
        let user = try await add("x", "file:///tmp/x", "--user", "u")
        #expect(user.status == 2 && user.error.contains("they take none of their own"), "\(user.error)")
        let auth = try await add("x", "webdavs://dav.example.com/x", "--user", "u", "--auth", "kerberos")
        #expect(
            auth.status == 2
                && auth.error.contains("--auth of a WebDAV remote (webdav:) is basic or digest, not 'kerberos'"),
            "\(auth.error)")
        let endpoint = try await add("x", "gdrive:/x", "--client-id", "c", "--endpoint", "ftp://mock")
        #expect(
            endpoint.status == 2 && endpoint.error.contains("is an http:// or https:// URL, not 'ftp://mock'"),
            "\(endpoint.error)")
        let secret = try await add("x", "gdrive:/x", "--client-id", "c", "--password-stdin", input: Data("pw".utf8))
        #expect(secret.status == 2 && secret.error.contains("their secret is --client-secret-stdin"), "\(secret.error)")
        let concurrency = try await add("x", "file:///tmp/x", "--concurrency", "0")
        #expect(concurrency.status == 2 && concurrency.error.contains("from 1 to 64, not 0"), "\(concurrency.error)")
        let pcloud = try await add("x", "pcloud:/x", "--client-id", "c")
        #expect(pcloud.status == 2 && pcloud.error.contains("--client-secret-stdin"), "\(pcloud.error)")
        let noFile = try await add("x", "file:", "--base-path", "y")
        #expect(noFile.status == 2, "\(noFile.error)")
        // Nothing was kept by any of those.
        #expect(try await llvs("remote", "list", "--store", path("a")).text.isEmpty)
        #expect(!FileManager.default.fileExists(atPath: config.appendingPathComponent("accounts.json").path))

        // Accounts: a kind mismatch and a differing option are refused, with the way out.
        #expect(try await add("g", "gdrive:/x", "--client-id", "c", "--account", "work").status == 0)
        let otherKind = try await add("o", "onedrive:/x", "--account", "work")
        #expect(
            otherKind.status == 2
                && otherKind.error.contains("the account work is a Google Drive account, not OneDrive"),
            "\(otherKind.error)")
        let otherClient = try await add("h", "gdrive:/y", "--client-id", "d", "--account", "work")
        #expect(
            otherClient.status == 1 && otherClient.error.contains("The account work has --client-id c, not d"),
            "\(otherClient.error)")
        let sameScope = try await add("h", "gdrive:/y", "--scope", "drive.file", "--account", "work")
        #expect(sameScope.status == 0, "drive.file is the account's scope by default: \(sameScope.error)")
        let noStore = try await tests.run(["remote", "add", "x", "file:///tmp/x", "--store", path("nowhere")])
        #expect(noStore.status == 4, "\(noStore.error)")
        let shownAccount = try await llvs("account", "list")
        #expect(shownAccount.text.contains("work\tGoogle Drive  client c  not authorized"), "\(shownAccount.text)")
        #expect(
            try await llvs("account", "remove", "work", "--store", path("a")).error.contains("need adding again: g, h"))
        #expect(try await llvs("sync", "g", "--store", path("a")).error.contains("which is not there any more"))
    }

    /// The kind `llvs-fake-kind` adds to the standard registry (see Tests/Helpers/llvs-fake-kind).
    func fake(_ arguments: String..., input: Data? = nil) async throws -> CommandLineTests.Result {
        try await tests.run(
            arguments, input: input,
            executable: CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-fake-kind"))
    }

    @Test func aKindAddedToTheRegistryIsDocumentedAuthorizedAndSynced() async throws {
        let help = try await fake("remote", "add", "--help")
        #expect(help.status == 0)
        #expect(
            help.text.contains("fake:/path  Fake Cloud: signs in with OAuth") && help.text.contains("--shelf NAME")
                && help.text.contains("[top|bottom; default top]") && help.text.contains("LLVS_FAKE_SHELF_ROOT"),
            "\(help.text)")
        #expect(try await fake("--help").text.contains("fake:/path"))
        #expect(
            try await llvs("remote", "add", "--help").text.contains("fake:") == false,
            "llvs itself does not know the kind")

        let shelves = path("shelves")
        for store in ["a", "b"] { #expect(try await fake("init", "--store", path(store)).status == 0) }
        let badShelf = try await fake(
            "remote", "add", "backup", "fake:/notes", "--client-id", "c", "--shelf-root", shelves, "--shelf", "middle",
            "--store", path("a"))
        #expect(
            badShelf.status == 2
                && badShelf.error.contains("--shelf of a Fake Cloud remote (fake:) is top or bottom, not 'middle'"),
            "\(badShelf.error)")
        let added = try await fake(
            "remote", "add", "backup", "fake:/notes", "--client-id", "c", "--shelf-root", shelves, "--shelf", "bottom",
            "--store", path("a"))
        #expect(
            added.status == 0 && added.text.contains("Next, authorize the account: llvs auth fake"), "\(added.error)")
        _ = try await fake("put", "k", "-", "--store", path("a"), input: Data("v".utf8))
        let closed = try await fake("sync", "--store", path("a"))
        #expect(closed.status != 0 && closed.error.contains("llvs auth fake"), "\(closed.error)")

        let token = path("fake-token.json")
        try Data(#"{"access_token": "fake-access", "token_type": "Bearer"}"#.utf8).write(
            to: URL(fileURLWithPath: token))
        #expect(try await fake("auth", "fake", "--token-json", token).text.contains("Authorized account fake"))
        #expect(try await fake("sync", "--store", path("a")).text.contains("Sent 1 version"))
        #expect(FileManager.default.fileExists(atPath: shelves + "/bottom/notes/versions"))
        #expect(
            try await fake("remote", "add", "backup", "fake:/notes", "--shelf", "bottom", "--store", path("b")).status
                == 0)
        #expect(try await fake("sync", "--store", path("b")).text.contains("Retrieved 1 version"))
        #expect(try await fake("get", "k", "--store", path("b")).text == "v")
    }
}
