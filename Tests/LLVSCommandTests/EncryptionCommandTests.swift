import Foundation
import LLVSSupport
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `llvs remote add --encrypt`, run as a user would: nothing readable reaches the remote, a second store joins with
/// the passphrase, a wrong one is refused before anything is read or written, tampering is refused by name, the
/// passphrase changes without touching the data, and a plaintext remote and an encrypted one are never mixed.
@Suite final class EncryptionCommandTests {
    let tests: CommandLineTests

    init() throws { tests = try CommandLineTests() }

    @discardableResult
    func llvs(
        _ arguments: String..., input: Data? = nil, environment: [String: String] = [:]
    ) async throws -> CommandLineTests.Result {
        try await tests.run(arguments, input: input, environment: environment)
    }

    func path(_ name: String) -> String { tests.directory.appendingPathComponent(name).path }
    var remoteURL: String { "file://" + path("remote") }

    func write(_ path: String, _ data: Data) throws {
        try FileManager.default.createDirectory(
            atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try data.write(to: URL(fileURLWithPath: path))
    }

    /// Every file under `folder`, by path below it, with its bytes.
    func files(under folder: String) -> [String: Data] {
        var found: [String: Data] = [:]
        for name in (FileManager.default.subpaths(atPath: folder) ?? []) {
            if let data = FileManager.default.contents(atPath: folder + "/" + name),
                !FileManager.default.isDirectory(folder + "/" + name)
            {
                found[name] = data
            }
        }
        return found
    }

    /// The versions a store holds (`status` also looks at its remote, so it needs the passphrase).
    func versionCount(_ store: String, passphrase: String) async throws -> Int {
        let result = try await llvs("status", "--json", "--store", store, environment: ["LLVS_PASSPHRASE": passphrase])
        let status = try #require(
            try JSONSerialization.jsonObject(with: result.output) as? [String: Any], "\(result.error)")
        return status["versionCount"] as! Int
    }

    @Test func anEncryptedRemoteHoldsNoPlaintextAndAStoreWithThePassphraseClonesIt() async throws {
        let store = path("a")
        #expect(try await llvs("init", "--store", store).status == 0)
        #expect(
            try await llvs(
                "put", "home/MARKER-ID/notes.txt", "-", "--store", store, input: Data("MARKER-small value".utf8)
            ).status == 0)
        var large = Data()
        for i in 0..<200_000 { large.append(Data("MARKER-large \(i)\n".utf8)) }
        try write(path("large.txt"), large)
        #expect(try await llvs("put", "big/MARKER-big", path("large.txt"), "--store", store).status == 0)
        try write(path("source/MARKER-folder/MARKER-file.txt"), Data("MARKER-backed-up".utf8))
        try write(path("source/other.bin"), large)

        let added = try await llvs(
            "remote", "add", "home", remoteURL, "--encrypt", "--passphrase-stdin", "--store", store,
            input: Data("pass one\n".utf8))
        #expect(added.status == 0, "\(added.error)")
        #expect(try await llvs("remote", "show", "home", "--store", store).text.contains("encrypted: yes"))
        #expect(try await llvs("push", "--store", store).status == 0)
        let backup = try await llvs("backup", path("source"), "--to", "home", "--store", store)
        #expect(backup.status == 0, "\(backup.error)")
        #expect(try await llvs("snapshot", "home", "--store", store).status == 0)

        let onRemote = files(under: path("remote"))
        #expect(
            onRemote.keys.contains { $0.hasPrefix("snapshots/") }, "a snapshot was written: \(onRemote.keys.sorted())")
        #expect(onRemote.count > 5)
        for (name, data) in onRemote {
            #expect(data.range(of: Data("MARKER".utf8)) == nil, "\(name) holds plaintext")
            #expect(!name.contains("MARKER"))
        }
        #expect(try await llvs("remote", "list", "--store", store).text.contains("[encrypted]"))

        // Another store joins with the passphrase alone.
        let environment = ["LLVS_PASSPHRASE": "pass one"]
        #expect(
            try await llvs("remote", "add", "--all-stores", "shared", remoteURL, "--encrypt", environment: environment)
                .status == 0)
        let cloned = try await llvs("clone", "shared", path("b"), environment: environment)
        #expect(cloned.status == 0, "\(cloned.error)")
        #expect(
            try await llvs("get", "home/MARKER-ID/notes.txt", "--store", path("b"), environment: environment).text
                == "MARKER-small value")
        #expect(try await llvs("get", "big/MARKER-big", "--store", path("b"), environment: environment).output == large)
        #expect(try await llvs("restore", path("restored"), "--store", path("b"), environment: environment).status == 0)
        #expect(
            FileManager.default.contents(atPath: path("restored/MARKER-folder/MARKER-file.txt"))
                == Data("MARKER-backed-up".utf8))
        #expect(
            try await versionCount(path("b"), passphrase: "pass one") == versionCount(store, passphrase: "pass one"))

        // A wrong passphrase: exit 1, the word passphrase, no store made, the remote untouched.
        let wrong = try await llvs("clone", "shared", path("c"), environment: ["LLVS_PASSPHRASE": "pass two"])
        #expect(wrong.status == 1)
        #expect(wrong.error.contains("passphrase"))
        #expect(!FileManager.default.fileExists(atPath: path("c")))
        let wrongPush = try await llvs(
            "sync", "shared", "--store", path("b"), environment: ["LLVS_PASSPHRASE": "pass two"])
        #expect(wrongPush.status == 1 && wrongPush.error.contains("passphrase"))
        #expect(files(under: path("remote")) == onRemote)
    }

    @Test func aChangedPassphraseKeepsEveryVersionReadableAndRetiresTheOldOne() async throws {
        let store = path("a")
        #expect(try await llvs("init", "--store", store).status == 0)
        for i in 0..<3 {
            #expect(try await llvs("put", "v\(i)", "-", "--store", store, input: Data("value \(i)".utf8)).status == 0)
        }
        #expect(
            try await llvs(
                "remote", "add", "home", remoteURL, "--encrypt", "--passphrase-stdin", "--store", store,
                input: Data("old".utf8)
            ).status == 0)
        #expect(try await llvs("push", "--store", store).status == 0)
        func data() -> [String: Data] {
            files(under: path("remote")).filter { $0.key != "encryption.json" && !$0.key.hasPrefix("encryption-keys/") }
        }
        let sealed = data()

        let changed = try await llvs("remote", "passphrase", "home", "--store", store, input: Data("new\n".utf8))
        #expect(changed.status == 0, "\(changed.error)")
        #expect(data() == sealed, "the data is not rewritten")
        // The kept passphrase is the new one: this store goes on working.
        #expect(try await llvs("put", "v3", "-", "--store", store, input: Data("value 3".utf8)).status == 0)
        #expect(try await llvs("push", "--store", store).status == 0)

        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "shared", remoteURL, "--encrypt", environment: ["LLVS_PASSPHRASE": "x"]
            ).status == 0)
        let old = try await llvs("clone", "shared", path("b"), environment: ["LLVS_PASSPHRASE": "old"])
        #expect(old.status == 1 && old.error.contains("passphrase"))
        let new = try await llvs("clone", "shared", path("b"), environment: ["LLVS_PASSPHRASE": "new"])
        #expect(new.status == 0, "\(new.error)")
        for i in 0..<4 {
            #expect(
                try await llvs("get", "v\(i)", "--store", path("b"), environment: ["LLVS_PASSPHRASE": "new"]).text
                    == "value \(i)")
        }

        // --keep checks the passphrase before keeping it; --forget leaves only the environment.
        #expect(
            try await llvs("remote", "passphrase", "shared", "--keep", "--store", path("b"), input: Data("old".utf8))
                .status == 1)
        #expect(
            try await llvs("remote", "passphrase", "shared", "--keep", "--store", path("b"), input: Data("new".utf8))
                .status == 0)
        #expect(try await llvs("pull", "shared", "--store", path("b")).status == 0)
        // Each kept passphrase has the key opened with it beside it (0600), so commands skip the derivation.
        let kept = path("config/llvs/passphrases")
        #expect(try FileManager.default.contentsOfDirectory(atPath: kept).filter { $0.hasSuffix(".key") }.count == 2)
        #expect(try await llvs("remote", "passphrase", "shared", "--forget", "--store", path("b")).status == 0)
        let left = try FileManager.default.contentsOfDirectory(atPath: kept)
        #expect(left.count == 2, "store a's passphrase and opened key stay, b's are gone: \(left)")
        for name in left {
            #expect(
                (try FileManager.default.attributesOfItem(atPath: kept + "/" + name)[.posixPermissions] as? NSNumber)?
                    .intValue == 0o600)
        }
        let forgotten = try await llvs("pull", "shared", "--store", path("b"))
        #expect(forgotten.status == 1 && forgotten.error.contains("LLVS_PASSPHRASE"))
    }

    /// On a terminal a new passphrase is typed twice: two entries that differ change nothing.
    @Test func aNewPassphraseTypedOnATerminalIsAskedTwice() async throws {
        let store = path("a")
        #expect(try await llvs("init", "--store", store).status == 0)
        #expect(try await llvs("put", "v", "-", "--store", store, input: Data("value".utf8)).status == 0)
        #expect(
            try await llvs(
                "remote", "add", "home", remoteURL, "--encrypt", "--passphrase-stdin", "--store", store,
                input: Data("old".utf8)
            ).status == 0)
        #expect(try await llvs("push", "--store", store).status == 0)
        let helper = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Helpers/on-terminal.py").path
        func typed(_ first: String, _ second: String) async throws -> CommandLineTests.Result {
            try await tests.run(
                ["remote", "passphrase", "home", "--store", store],
                through: ["/usr/bin/python3", helper, "New passphrase", first, "Again, to confirm", second, "--"])
        }
        let differing = try await typed("new one", "new on")
        #expect(differing.status == 2 && differing.text.contains("the two entries differ"), "\(differing.text)")
        #expect(!differing.text.contains("new on"), "nothing typed is echoed")
        #expect(
            try await llvs("clone", remoteURL, path("b"), "--encrypt", environment: ["LLVS_PASSPHRASE": "old"]).status
                == 0)
        let matching = try await typed("new one", "new one")
        #expect(matching.status == 0 && matching.text.contains("Changed the passphrase"), "\(matching.text)")
        #expect(
            try await llvs("clone", remoteURL, path("c"), "--encrypt", environment: ["LLVS_PASSPHRASE": "new one"])
                .status == 0)
    }

    /// A version file with one byte flipped, a changes file cut short, a version file replaced by another version's:
    /// each pull fails naming the file, and the store gains nothing from it.
    @Test func tamperedRemoteFilesAreRefusedByNameWithNothingStored() async throws {
        let store = path("a")
        let environment = ["LLVS_PASSPHRASE": "p"]
        #expect(try await llvs("init", "--store", store).status == 0)
        #expect(try await llvs("put", "first", "-", "--store", store, input: Data("one".utf8)).status == 0)
        #expect(
            try await llvs("remote", "add", "--all-stores", "home", remoteURL, "--encrypt", environment: environment)
                .status == 0)
        #expect(try await llvs("push", "--store", store, environment: environment).status == 0)
        #expect(try await llvs("clone", "home", path("b"), environment: environment).status == 0)
        let put = try await llvs("put", "second", "-", "--store", store, input: SeededGenerator.bytes(300_000, seed: 4))
        let second = put.text.trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(try await llvs("push", "--store", store, environment: environment).status == 0)
        let first = try #require(
            try FileManager.default.contentsOfDirectory(atPath: path("remote/versions")).first { $0 != second })

        let versionFile = path("remote/versions/\(second)"), changesFile = path("remote/changes/\(second)")
        let original = (
            version: try Data(contentsOf: URL(fileURLWithPath: versionFile)),
            changes: try Data(contentsOf: URL(fileURLWithPath: changesFile))
        )
        var flipped = original.version
        flipped[flipped.count / 2] ^= 0x04
        let damages: [(String, String, Data)] = [
            ("a flipped byte", versionFile, flipped),
            ("a cut changes file", changesFile, original.changes.prefix(original.changes.count - 70_000)),
            (
                "another version's file", versionFile,
                try Data(contentsOf: URL(fileURLWithPath: path("remote/versions/\(first)")))
            ),
        ]
        for (what, file, damaged) in damages {
            try damaged.write(to: URL(fileURLWithPath: file))
            let pulled = try await llvs("pull", "--store", path("b"), environment: environment)
            #expect(pulled.status != 0, "\(what) was accepted")
            let named = file.hasSuffix("/versions/\(second)") ? "versions/\(second)" : "changes/\(second)"
            #expect(
                pulled.error.contains(named) && pulled.error.contains("encryption check"), "\(what): \(pulled.error)")
            #expect(try await versionCount(path("b"), passphrase: "p") == 1, "\(what): the store took something")
            try original.version.write(to: URL(fileURLWithPath: versionFile))
            try original.changes.write(to: URL(fileURLWithPath: changesFile))
        }
        #expect(try await llvs("pull", "--store", path("b"), environment: environment).status == 0)
        #expect(try await llvs("get", "second", "--store", path("b")).output == SeededGenerator.bytes(300_000, seed: 4))
    }

    @Test func aPlaintextRemoteAndAnEncryptedOneAreNeverMixed() async throws {
        let store = path("a")
        #expect(try await llvs("init", "--store", store).status == 0)
        #expect(try await llvs("put", "x", "-", "--store", store, input: Data("x".utf8)).status == 0)
        #expect(try await llvs("remote", "add", "plain", remoteURL, "--store", store).status == 0)
        #expect(try await llvs("push", "plain", "--store", store).status == 0)
        let before = files(under: path("remote"))
        #expect(
            try await llvs(
                "remote", "add", "sealed", remoteURL, "--encrypt", "--store", store,
                environment: ["LLVS_PASSPHRASE": "p"]
            ).status == 0)
        let refused = try await llvs("push", "sealed", "--store", store, environment: ["LLVS_PASSPHRASE": "p"])
        #expect(
            refused.status == 1 && refused.error.contains("not encrypted") && refused.error.contains("--base-path"),
            "\(refused.error)")
        #expect(files(under: path("remote")) == before, "nothing was written")

        let other = "file://" + path("sealed-remote")
        #expect(
            try await llvs(
                "remote", "add", "sealed2", other, "--encrypt", "--store", store, environment: ["LLVS_PASSPHRASE": "p"]
            ).status == 0)
        #expect(try await llvs("push", "sealed2", "--store", store, environment: ["LLVS_PASSPHRASE": "p"]).status == 0)
        #expect(try await llvs("remote", "add", "--all-stores", "unsealed", other).status == 0)
        for command in [
            ["push", "unsealed", "--store", store], ["sync", "unsealed", "--store", store],
            ["clone", "unsealed", path("b")],
        ] {
            let result = try await tests.run(command)
            #expect(
                result.status == 1 && result.error.contains("encrypted store") && result.error.contains("--encrypt"),
                "\(command): \(result.error)")
        }
        #expect(!FileManager.default.fileExists(atPath: path("b")))
    }

    @Test func anEncryptedRemoteNeedsAPassphraseWhenAdded() async throws {
        #expect(try await llvs("init", "--store", path("a")).status == 0)
        let none = try await llvs("remote", "add", "home", remoteURL, "--encrypt", "--store", path("a"))
        #expect(none.status == 2 && none.error.contains("LLVS_PASSPHRASE"))
        let empty = try await llvs(
            "remote", "add", "home", remoteURL, "--encrypt", "--passphrase-stdin", "--store", path("a"),
            input: Data("\n".utf8))
        #expect(empty.status == 2)
        #expect(
            try await llvs(
                "remote", "add", "home", remoteURL, "--passphrase-stdin", "--store", path("a"), input: Data("p".utf8)
            ).status == 2)
        #expect(try await llvs("remote", "passphrase", "home", "--store", path("a")).status == 3)
        #expect(try await llvs("remote", "add", "home", remoteURL, "--store", path("a")).status == 0)
        #expect(
            try await llvs("remote", "passphrase", "home", "--store", path("a")).status == 2,
            "a plaintext remote has no passphrase")
        #expect(
            try await llvs("remote", "add", "--help").text.contains(
                "LLVS apps on Apple devices cannot read an encrypted remote"))
    }

    /// Killed with SIGKILL once two versions are on the remote: a sync afterwards sends the rest, and a clone of the
    /// remote holds every version.
    @Test func aKilledEncryptedPushThenSyncConverges() async throws {
        let store = path("a")
        let environment = ["LLVS_PASSPHRASE": "p"]
        #expect(try await llvs("init", "--store", store).status == 0)
        for i in 0..<24 {
            try write(path("source/file\(i).bin"), Data(repeating: UInt8(i), count: 1 << 20) + Data("\(i)".utf8))
        }
        #expect(try await llvs("backup", path("source"), "--checkpoint-every", "1", "--store", store).status == 0)
        let versions = try await versionCount(store, passphrase: "p")
        #expect(versions >= 4)
        // One transfer at a time, so the kill lands between versions with more to send.
        #expect(
            try await llvs(
                "remote", "add", "--all-stores", "home", remoteURL, "--encrypt", "--concurrency", "1",
                environment: environment
            ).status == 0)

        let process = ChildProcess()
        process.executableURL = CommandLineTests.binary
        process.arguments = ["push", "home", "--store", store]
        process.currentDirectoryURL = tests.directory
        process.environment = CommandLineTests.cleanEnvironment.merging([
            "XDG_CONFIG_HOME": path("config"), "LLVS_PASSPHRASE": "p",
        ]) { _, new in new }
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let remoteVersions = path("remote/versions")
        func count() -> Int {
            ((try? FileManager.default.contentsOfDirectory(atPath: remoteVersions)) ?? []).filter { !$0.hasPrefix(".") }
                .count
        }
        try FileEvents.wait(in: [remoteVersions], until: { count() >= 2 }, while: { process.isRunning })
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
        #expect(process.terminationReason == .uncaughtSignal, "the push ended before it could be killed")
        #expect(count() < versions)

        let synced = try await llvs("sync", "home", "--store", store, environment: environment)
        #expect(synced.status == 0, "\(synced.error)")
        let cloned = try await llvs("clone", "home", path("b"), environment: environment)
        #expect(cloned.status == 0, "\(cloned.error)")
        #expect(try await versionCount(path("b"), passphrase: "p") == versions)
        #expect(try await llvs("restore", path("restored"), "--store", path("b")).status == 0)
        #expect(
            FileManager.default.contents(atPath: path("restored/file23.bin")) == Data(repeating: 23, count: 1 << 20)
                + Data("23".utf8))
    }
}
