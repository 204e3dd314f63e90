import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs remote`, `sync`, `push`, `pull`, `status`, `snapshot`, `clone` and `conformance`, run as a user would.
@Suite final class SyncCommandTests {
    /// The failed count of a conformance report's closing line (`N passed, N failed, N skipped`); nil without one.
    static func failedCount(_ report: String) -> Int? {
        guard let match = report.firstMatch(of: /(?m)^(\d+) passed, (\d+) failed, (\d+) skipped$/) else { return nil }
        return Int(match.2)
    }

    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    @discardableResult
    func llvs(
        _ arguments: String..., input: Data? = nil, environment: [String: String] = [:]
    ) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input, environment: environment)
    }

    var folder: URL { tests.directory }
    func store(_ name: String) -> String { folder.appendingPathComponent(name).path }

    @Test func twoStoresSyncThroughALocalFolderAndACloneCatchesUp() async throws {
        let remote = "file://" + folder.appendingPathComponent("remote").path
        #expect(try await llvs("remote", "add", "--all-stores", "home", remote).status == 0)
        #expect(try await llvs("init", "--store", store("a")).status == 0)
        #expect(try await llvs("init", "--store", store("b"), "--storage", "sqlite").status == 0)
        _ = try await llvs("put", "from-a", "-", "--store", store("a"), input: Data("A".utf8))
        _ = try await llvs("put", "from-b", "-", "--store", store("b"), input: Data("B".utf8))
        #expect(try await llvs("sync", "--store", store("a")).text.contains("Sent 1 version"))
        #expect(try await llvs("sync", "home", "--store", store("b")).text.contains("Retrieved 1 version"))
        #expect(try await llvs("sync", "--store", store("a")).status == 0)
        for name in ["a", "b"] {
            #expect(try await llvs("get", "from-a", "--store", store(name)).text == "A")
            #expect(try await llvs("get", "from-b", "--store", store(name)).text == "B")
        }
        let status =
            try JSONSerialization.jsonObject(with: try await llvs("status", "--json", "--store", store("a")).output)
            as! [String: Any]
        #expect(status["missingHere"] as? Int == 0 && status["missingThere"] as? Int == 0)

        #expect(try await llvs("snapshot", "home", "--store", store("a")).text.contains("Uploaded snapshot"))
        _ = try await llvs("put", "after", "-", "--store", store("a"), input: Data("later".utf8))
        _ = try await llvs("push", "--store", store("a"))
        let clone = try await llvs("clone", "home", store("c"))
        #expect(clone.text.contains("Restored snapshot"))
        #expect(try await llvs("get", "after", "--store", store("c")).text == "later")
        // A version made on b arrives on a by pull.
        _ = try await llvs("put", "more", "-", "--store", store("b"), input: Data("x".utf8))
        _ = try await llvs("push", "--store", store("b"))
        #expect(try await llvs("pull", "--store", store("a")).text.contains("Retrieved"))
        #expect(try await llvs("get", "more", "--store", store("a")).text == "x")
    }

    @Test func remoteMistakesGiveClearErrors() async throws {
        try await llvs("init", "--store", store("a"))
        let none = try await llvs("sync", "--store", store("a"))
        #expect(none.status == 2 && none.error.contains("llvs remote add"))
        #expect(try await llvs("sync", "nowhere", "--store", store("a")).status == 3)
        #expect(
            try await llvs("remote", "add", "--all-stores", "x", "ftp://example.com/x").error.contains("not supported"))
        #expect(try await llvs("remote", "add", "--all-stores", "bad name", "file:///tmp/x").status == 2)
        #expect(try await llvs("remote", "add", "--all-stores", "x", "file:///tmp/llvs-x").status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "x", "file:///tmp/llvs-x").status == 1)
        #expect(try await llvs("remote", "list").text.contains("x\tfile:///tmp/llvs-x"))
        #expect(try await llvs("remote", "remove", "--all-stores", "x").status == 0)
        #expect(try await llvs("remote", "remove", "--all-stores", "x").status == 3)
        let mode =
            try FileManager.default.attributesOfItem(
                atPath: folder.appendingPathComponent("config/llvs/default-remotes.json").path)[.posixPermissions]
            as? Int
        #expect(mode == 0o600)
    }

    /// `llvs conformance REMOTE --faults --json`: each failure check's status (with its note when skipped or failed).
    func faultCheckStatuses(_ remote: String) async throws -> [String: String] {
        let run = try await llvs(
            "conformance", remote, "--faults", "--json", "--listing-count", "5", "--large-file-mib", "1")
        let object = try #require(
            try JSONSerialization.jsonObject(with: run.output) as? [String: Any], "\(run.text)\n\(run.error)")
        let results = try #require(object["results"] as? [[String: Any]])
        var statuses: [String: String] = [:]
        for result in results {
            guard let id = result["id"] as? String,
                ["rate-limit", "dropped-connection", "expired-token", "revoked-token"].contains(id)
            else { continue }
            let status = result["status"] as? String ?? "?"
            statuses[id] = status == "passed" ? status : "\(status): \(result["message"] as? String ?? "")"
        }
        return statuses
    }

    /// A server is tested by its URL, as a user trying one would, with no remote added and no store; a command that
    /// takes a remote's name says how to give it one.
    @Test func conformanceTakesAURL() async throws {
        let mock = try MockProcess(["webdav", "--user", "u", "--password", "secret"])
        let url = mock.url.replacingOccurrences(of: "http://", with: "webdav://")
        let environment = ["LLVS_WEBDAV_USER": "u", "LLVS_WEBDAV_PASSWORD": "secret"]
        let report = try await llvs(
            "conformance", url, "--listing-count", "5", "--large-file-mib", "1", environment: environment)
        #expect(report.status == 0, "\(report.text)\n\(report.error)")
        #expect(Self.failedCount(report.text) == 0, "\(report.text)")
        let store = folder.appendingPathComponent("url-store").path
        #expect(try await llvs("init", "--store", store).status == 0)
        let push = try await llvs("push", url, "--store", store, environment: environment)
        #expect(push.status == 3)
        #expect(
            push.error.contains(
                "is a URL, and this command takes a remote's name: add it with `llvs remote add NAME \(url)`"),
            "\(push.error)")
        #expect(try await llvs("conformance", "dav", "--account", "x").status == 2)
        withExtendedLifetime(mock) {}
    }

    @Test func conformanceAgainstTheWebDAVMockStartedByLLVSMock() async throws {
        let mock = try MockProcess([
            "webdav", "--user", "u", "--password", "secret", "--faults", "503:0.05,drop:0.03,seed=4",
        ])
        let line = mock.url
        #expect(line.hasPrefix("http://127.0.0.1:"))
        let url = line.replacingOccurrences(of: "http://", with: "webdav://")
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "dav", url, "--user", "u", "--password-stdin",
                input: Data("secret\n".utf8)
            ).status == 0)
        let report = try await llvs("conformance", "dav", "--listing-count", "80", "--large-file-mib", "6")
        #expect(report.status == 0, "\(report.text)\n\(report.error)")
        #expect(Self.failedCount(report.text) == 0, "\(report.text)")
        let json = try await llvs("conformance", "dav", "--json", "--listing-count", "20", "--large-file-mib", "1")
        let object = try JSONSerialization.jsonObject(with: json.output) as! [String: Any]
        let results = try #require(object["results"] as? [[String: Any]], "\(json.text)")
        #expect(
            results.allSatisfy { $0["status"] as? String != "failed" },
            "\(results.filter { $0["status"] as? String == "failed" })")
        // With --faults the failure checks run too, injected between the connector and the server; a password does
        // not expire, so the expired-token check says it does not apply.
        let statuses = try await faultCheckStatuses("dav")
        #expect(
            statuses["rate-limit"] == "passed" && statuses["dropped-connection"] == "passed"
                && statuses["revoked-token"] == "passed",
            "\(statuses)")
        #expect(
            statuses["expired-token"]?.hasPrefix("skipped: the remote's credentials do not expire") == true,
            "\(statuses)")
        // Syncing through the same mock works too, faults and all.
        try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("v".utf8))
        #expect(try await llvs("sync", "dav", "--store", store("a")).text.contains("Sent 1 version"))
        #expect(try await llvs("clone", "dav", store("b")).status == 0)
        #expect(try await llvs("get", "k", "--store", store("b")).text == "v")
    }

    @Test func aGoogleDriveRemoteIsAuthorizedInTheBrowserAndPassesConformanceWithFaults() async throws {
        let mock = try MockProcess(["gdrive", "--faults", "403:0.05,503:0.03,drop:0.03,seed=8"], lineCount: 2)
        let client = mock.fields
        #expect(mock.url.hasPrefix("http://127.0.0.1:"))
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "drive", "gdrive:/LLVS/notes", "--endpoint", mock.url, "--client-id",
                client["client_id"] ?? "",
                "--client-secret-stdin", input: Data((client["client_secret"] ?? "").utf8)
            ).status == 0)
        let unauthorized = try await llvs("conformance", "drive", "--listing-count", "5", "--large-file-mib", "1")
        #expect(unauthorized.status != 0)
        #expect(
            unauthorized.text.contains("llvs auth gdrive") || unauthorized.error.contains("llvs auth gdrive"),
            "\(unauthorized.text)\(unauthorized.error)")

        // The loopback flow, with a "browser" that follows the mock's redirect back to llvs's listener.
        let helper = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-test-helper").path
        let auth = try await llvs("auth", "drive", "--timeout", "60", environment: ["BROWSER": "\(helper) open"])
        #expect(auth.status == 0, "\(auth.error)")
        #expect(!auth.text.contains("access-") && !auth.error.contains("access-"), "a token was printed")
        let tokenFile = folder.appendingPathComponent("config/llvs/accounts/gdrive.token.json").path
        #expect(try FileManager.default.attributesOfItem(atPath: tokenFile)[.posixPermissions] as? Int == 0o600)

        let report = try await llvs(
            "conformance", "drive", "--faults", "--listing-count", "120", "--large-file-mib", "6")
        #expect(report.status == 0, "\(report.text)\n\(report.error)")
        #expect(Self.failedCount(report.text) == 0, "\(report.text)")
        // Every failure check applies to an OAuth remote: the expired token is refreshed for real.
        let statuses = try await faultCheckStatuses("drive")
        #expect(
            ["rate-limit", "dropped-connection", "expired-token", "revoked-token"].allSatisfy {
                statuses[$0] == "passed"
            }, "\(statuses)")

        try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("through drive".utf8))
        #expect(try await llvs("sync", "drive", "--store", store("a")).text.contains("Sent 1 version"))
        #expect(try await llvs("snapshot", "drive", "--store", store("a")).status == 0)
        let clone = try await llvs("clone", "drive", store("b"))
        #expect(clone.status == 0, "\(clone.error)")
        #expect(try await llvs("get", "k", "--store", store("b")).text == "through drive")
    }

    /// OneDrive end to end through `llvs-mock onedrive`: remote add, the loopback sign-in (public client, PKCE),
    /// conformance with throttling and dropped connections, sync, snapshot and clone.
    @Test func aOneDriveRemoteIsAuthorizedAndPassesConformanceWithFaults() async throws {
        let mock = try MockProcess(
            ["onedrive", "--faults", "429:0.04,503:0.03,drop:0.03,retry-after=0,seed=5"], lineCount: 2)
        let client = mock.fields
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "one", "onedrive:/Apps/LLVS", "--endpoint", mock.url, "--client-id",
                client["client_id"] ?? "",
                "--tenant", "consumers"
            ).status == 0)
        let wrong = try await llvs(
            "remote", "add", "--all-stores", "two", "onedrive:/x", "--client-id", "c", "--removal", "delete")
        #expect(
            wrong.status == 2 && wrong.error.contains("--removal is not an option of OneDrive remotes (onedrive:)"),
            "\(wrong.error)")
        let helper = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-test-helper").path
        let auth = try await llvs("auth", "one", "--timeout", "60", environment: ["BROWSER": "\(helper) open"])
        #expect(auth.status == 0, "\(auth.error)")
        let report = try await llvs("conformance", "one", "--faults", "--listing-count", "120", "--large-file-mib", "6")
        #expect(report.status == 0, "\(report.text)\n\(report.error)")
        #expect(Self.failedCount(report.text) == 0, "\(report.text)")
        try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("through onedrive".utf8))
        #expect(try await llvs("sync", "one", "--store", store("a")).text.contains("Sent 1 version"))
        #expect(try await llvs("snapshot", "one", "--store", store("a")).status == 0)
        let clone = try await llvs("clone", "one", store("b"))
        #expect(clone.status == 0, "\(clone.error)")
        #expect(try await llvs("get", "k", "--store", store("b")).text == "through onedrive")
    }

    /// pCloud end to end through `llvs-mock pcloud-eu`: remote add (the secret is required), the loopback sign-in,
    /// which learns the EU region from the redirect, conformance with outages and dropped connections, sync,
    /// snapshot and clone; the device flow is refused, as pCloud has none.
    @Test func aPCloudRemoteIsAuthorizedInItsRegionAndPassesConformanceWithFaults() async throws {
        let mock = try MockProcess(["pcloud-eu", "--faults", "503:0.03,drop:0.03,retry-after=0,seed=7"], lineCount: 2)
        let client = mock.fields
        let noSecret = try await llvs(
            "remote", "add", "--all-stores", "p", "pcloud:/Apps/LLVS", "--endpoint", mock.url, "--client-id",
            client["client_id"] ?? "")
        #expect(noSecret.status == 2 && noSecret.error.contains("--client-secret-stdin"), "\(noSecret.error)")
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "p", "pcloud:/Apps/LLVS", "--endpoint", mock.url, "--client-id",
                client["client_id"] ?? "",
                "--client-secret-stdin", input: Data((client["client_secret"] ?? "").utf8)
            ).status == 0)
        let device = try await llvs("auth", "p", "--device")
        #expect(device.status == 2 && device.error.contains("--headless"), "\(device.error)")
        let helper = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-test-helper").path
        let auth = try await llvs("auth", "p", "--timeout", "60", environment: ["BROWSER": "\(helper) open"])
        #expect(auth.status == 0, "\(auth.error)")
        let token = try String(
            contentsOf: folder.appendingPathComponent("config/llvs/accounts/pcloud.token.json"), encoding: .utf8)
        #expect(token.contains("\"locationid\" : \"2\""), "\(token)")
        let report = try await llvs("conformance", "p", "--faults", "--listing-count", "120", "--large-file-mib", "6")
        #expect(report.status == 0, "\(report.text)\n\(report.error)")
        #expect(Self.failedCount(report.text) == 0, "\(report.text)")
        try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("through pcloud".utf8))
        #expect(try await llvs("sync", "p", "--store", store("a")).text.contains("Sent 1 version"))
        #expect(try await llvs("snapshot", "p", "--store", store("a")).status == 0)
        let clone = try await llvs("clone", "p", store("b"))
        #expect(clone.status == 0, "\(clone.error)")
        #expect(try await llvs("get", "k", "--store", store("b")).text == "through pcloud")
    }

    /// Box end to end through `llvs-mock box`: remote add (the secret is required), the loopback sign-in (no PKCE,
    /// a confidential client), conformance with throttling and dropped connections, sync, snapshot and clone.
    @Test func aBoxRemoteIsAuthorizedAndPassesConformanceWithFaults() async throws {
        let mock = try MockProcess(
            ["box", "--faults", "429:0.04,503:0.03,drop:0.03,retry-after=0,seed=11"], lineCount: 2)
        let client = mock.fields
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "b", "box:/Apps/LLVS", "--endpoint", mock.url, "--client-id",
                client["client_id"] ?? "",
                "--client-secret-stdin", input: Data((client["client_secret"] ?? "").utf8)
            ).status == 0)
        let device = try await llvs("auth", "b", "--device")
        #expect(device.status == 2 && device.error.contains("Box has no device authorization"), "\(device.error)")
        let helper = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent("llvs-test-helper").path
        let auth = try await llvs("auth", "b", "--timeout", "60", environment: ["BROWSER": "\(helper) open"])
        #expect(auth.status == 0, "\(auth.error)")
        let report = try await llvs("conformance", "b", "--faults", "--listing-count", "120", "--large-file-mib", "6")
        #expect(report.status == 0, "\(report.text)\n\(report.error)")
        #expect(Self.failedCount(report.text) == 0, "\(report.text)")
        try await llvs("init", "--store", store("a"))
        _ = try await llvs("put", "k", "-", "--store", store("a"), input: Data("through box".utf8))
        #expect(try await llvs("sync", "b", "--store", store("a")).text.contains("Sent 1 version"))
        #expect(try await llvs("snapshot", "b", "--store", store("a")).status == 0)
        let clone = try await llvs("clone", "b", store("b"))
        #expect(clone.status == 0, "\(clone.error)")
        #expect(try await llvs("get", "k", "--store", store("b")).text == "through box")
    }

    /// Drive (a client secret, `access_type=offline`, rclone's registered port) and Dropbox (PKCE alone,
    /// `token_access_type=offline`, any loopback port at a mock).
    @Test(arguments: ["gdrive", "dropbox"])
    func aHeadlessAuthorizationTakesThePastedRedirect(kind: String) async throws {
        let mock = try MockProcess([kind], lineCount: 2)
        let secret = kind == "gdrive" ? ["--client-secret-stdin"] : []
        #expect(
            try await tests.run(
                [
                    "remote", "add", "--all-stores", "drive", "\(kind):/x", "--endpoint", mock.url, "--client-id",
                    mock.fields["client_id"] ?? "",
                ] + secret,
                input: Data((mock.fields["client_secret"] ?? "").utf8)
            ).status == 0)
        // Run `llvs auth --headless` by hand: read the address it prints, "open" it elsewhere, paste where it ends up.
        let process = ChildProcess()
        process.executableURL = CommandLineTests.binary
        process.arguments = ["auth", "drive", "--headless"]
        process.environment = ProcessInfo.processInfo.environment.merging([
            "XDG_CONFIG_HOME": folder.appendingPathComponent("config").path
        ]) { _, new in new }
        let input = Pipe(), output = Pipe(), errors = Pipe()
        process.standardInput = input
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        var said = ""
        while !said.contains("Paste") {
            let data = errors.fileHandleForReading.availableData
            if data.isEmpty { break }
            said += String(decoding: data, as: UTF8.self)
        }
        let address = try #require(
            said.split(whereSeparator: \.isWhitespace).first { $0.hasPrefix(mock.url) }.map(String.init))
        #expect(
            address.contains(kind == "gdrive" ? "&access_type=offline" : "&token_access_type=offline")
                && address.contains("code_challenge_method=S256"), "\(address)")
        let helper = ChildProcess()
        helper.standardError = FileHandle.nullDevice  // a child left running must not hold ours
        helper.executableURL = CommandLineTests.binary.deletingLastPathComponent().appendingPathComponent(
            "llvs-test-helper")
        helper.arguments = ["location", address]
        let location = Pipe()
        helper.standardOutput = location
        try helper.run()
        let redirect = location.fileHandleForReading.readDataToEndOfFile()
        helper.waitUntilExit()
        #expect(
            String(decoding: redirect, as: UTF8.self).hasPrefix(
                kind == "gdrive" ? "http://127.0.0.1:53682/?code=" : "http://127.0.0.1:"))
        input.fileHandleForWriting.write(redirect)
        try input.fileHandleForWriting.close()
        let result = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        #expect(
            process.terminationStatus == 0,
            "\(String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self))")
        #expect(result.contains("Authorized account \(kind)"))
        #expect(try await llvs("conformance", "drive", "--listing-count", "3", "--large-file-mib", "1").status == 0)
    }

    @Test func oauthRemoteMistakesGiveClearErrors() async throws {
        let badScope = try await llvs(
            "remote", "add", "--all-stores", "s", "gdrive:/x", "--client-id", "c", "--scope", "everything")
        #expect(badScope.status == 2 && badScope.error.contains("drive.file or drive"), "\(badScope.error)")
        let scopeElsewhere = try await llvs(
            "remote", "add", "--all-stores", "s", "onedrive:/x", "--client-id", "c", "--scope", "drive")
        #expect(
            scopeElsewhere.status == 2
                && scopeElsewhere.error.contains("--scope of a OneDrive remote (onedrive:) is own or all, not 'drive'"),
            "\(scopeElsewhere.error)")
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "full", "gdrive:/x", "--client-id", "c", "--scope", "drive",
                environment: ["LLVS_GDRIVE_CLIENT_SECRET": "s"]
            ).status == 0)
        let fullDevice = try await llvs("auth", "full", "--device", environment: ["LLVS_GDRIVE_CLIENT_SECRET": "s"])
        #expect(
            fullDevice.status == 2 && fullDevice.error.contains("refuses the full Drive scope"), "\(fullDevice.error)")
        let unknown = try await llvs("remote", "add", "--all-stores", "one", "mega:/x")
        #expect(
            unknown.status == 2 && unknown.error.contains("not supported") && unknown.error.contains("box:/path"),
            "\(unknown.error)")
        let noBoxClient = try await llvs(
            "remote", "add", "--all-stores", "b", "box:/x", environment: ["LLVS_BOX_CLIENT_ID": ""])
        #expect(noBoxClient.status == 2 && noBoxClient.error.contains("--client-id"), "\(noBoxClient.error)")
        #expect(try await llvs("remote", "add", "--all-stores", "b", "box://host/x", "--client-id", "c").status == 2)
        // A new account needs the client; the existing gdrive account (made for "full" above) would serve without one.
        let noClient = try await llvs(
            "remote", "add", "--all-stores", "g", "gdrive:/x", "--account", "fresh",
            environment: ["LLVS_GDRIVE_CLIENT_ID": ""])
        #expect(noClient.status == 2 && noClient.error.contains("--client-id"), "\(noClient.error)")
        #expect(try await llvs("remote", "add", "--all-stores", "g", "gdrive://host/x", "--client-id", "c").status == 2)
        #expect(
            try await llvs("remote", "add", "--all-stores", "g", "gdrive:/x", "--client-id", "c", "--removal", "shred")
                .status == 2)
        #expect(try await llvs("remote", "add", "--all-stores", "d", "file:///tmp/llvs-nothing").status == 0)
        let notOAuth = try await llvs("auth", "d")
        #expect(notOAuth.status == 2 && notOAuth.error.contains("nothing to authorize"))
        #expect(try await llvs("auth", "missing").status == 3)
        #expect(try await llvs("remote", "add", "--all-stores", "g", "gdrive:/x", "--client-id", "c").status == 0)
        #expect(try await llvs("auth", "g", "--headless", "--device").status == 2)
        let badToken = try await llvs("auth", "g", "--token-json", folder.appendingPathComponent("nope.json").path)
        #expect(badToken.status == 1 && badToken.error.contains("nope.json"))
    }
}
