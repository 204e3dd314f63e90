import Foundation
import LLVS
import LLVSConformance
import LLVSMocks
import LLVSSFTP
import LLVSSupport
import LLVSTestSupport
import Testing

/// The connector against OpenSSH's own server, started by each test on a free port.
@Suite(
    .serialized,
    .enabled(
        if: RealSSHServer.unavailable() == nil || CIEnvironment.requiresEveryTest,
        "sshd is missing; install Debian's openssh-server (.ci/run does)"))
struct SFTPServerTests {
    func start() async throws -> RealSSHServer {
        if let reason = RealSSHServer.unavailable() {
            throw CloudFileSystemError.server(status: 0, message: "CI must have sshd: \(reason)")
        }
        return try await RealSSHServer()
    }

    /// The connector on a folder of the server, retrying at once (the tests' faults need no waiting).
    func fileSystem(
        _ server: RealSSHServer, root: String, knownHosts: String? = nil, fingerprint: String? = nil,
        identity: String? = nil
    ) -> SFTPFileSystem {
        let configuration = SFTPConfiguration(
            host: "127.0.0.1", port: Int(server.port), user: server.user, root: root,
            identityFile: identity ?? server.identityFile, knownHostsFile: knownHosts ?? server.knownHostsFile,
            hostKeyFingerprint: fingerprint)
        return SFTPFileSystem(configuration: configuration, retry: RetryPolicy(maximumAttempts: 4, sleep: { _ in }))
    }

    /// Every file under a local folder whose name starts with the upload prefix: what uploads left behind.
    func temporaries(under folder: URL) -> [String] {
        let walker = FileManager.default.enumerator(atPath: folder.path)
        return (walker?.allObjects as? [String] ?? []).filter {
            ($0 as NSString).lastPathComponent.hasPrefix(SFTPFileSystem.temporaryPrefix)
        }
    }

    @Test func theConnectorConformsWithFaultsInjected() async throws {
        let server = try await start()
        let root = server.folder.appendingPathComponent("conformance")
        var options = ConformanceOptions()
        options.listingCount = 250
        options.largeFileSize = 11 * 1024 * 1024 + 12_345
        // Faults in the file operations under the retry policy, as `llvs conformance --faults` puts them for SFTP;
        // a key does not expire, so only the expired-token check does not apply.
        let faulty = FaultInjectingFileSystem(fileSystem(server, root: root.path))
        options.faults = faulty
        await expectConformance(
            RetryingFileSystem(faulty, policy: RetryPolicy(maximumAttempts: 4, sleep: { _ in })), options: options,
            skippable: ["expired-token"])
        #expect(temporaries(under: server.folder) == [], "uploads left temporary files behind")
        // What the connector made is private to the user.
        let made = try FileManager.default.attributesOfItem(atPath: root.path)
        #expect((made[.posixPermissions] as? Int) == 0o700)
    }

    @Test func aStoreOnTheServerConvergesAndBootstrapsAThirdStore() async throws {
        let server = try await start()
        try await convergeAndBootstrap(through: fileSystem(server, root: server.folder.path + "/stores/shared"))
    }

    @Test func theConformanceSuitePassesThroughEncryption() async throws {
        let server = try await start()
        var options = ConformanceOptions()
        options.listingCount = 60
        try await expectConformanceThroughEncryption(
            fileSystem(server, root: server.folder.path + "/sealed"), options: options,
            skippable: checksNeedingFaults)
    }

    /// Two devices starting an encrypted folder at once leave one key: OpenSSH's rename refuses the second create.
    @Test func twoFirstUsesOfAnEncryptedFolderLeaveOneKey() async throws {
        let server = try await start()
        try await expectOneKeyFromTwoFirstUses(on: fileSystem(server, root: server.folder.path), folder: "sealed")
    }

    /// A server whose key is in no known-hosts entry is refused, its fingerprint shown as ssh-keygen shows it;
    /// `--host-key` with that fingerprint lets it in; a known-hosts entry with another key is a changed key.
    @Test func serverKeysAreCheckedAgainstKnownHosts() async throws {
        let server = try await start()
        let empty = server.folder.appendingPathComponent("empty_known_hosts").path
        FileManager.default.createFile(atPath: empty, contents: Data())
        do {
            _ = try await fileSystem(server, root: server.folder.path, knownHosts: empty).list("")
            Issue.record("a server with an unknown key was trusted")
        } catch let error as SFTPError {
            guard case .unknownHostKey(let host, let type, let fingerprint, let file) = error else {
                Issue.record("not an unknown key: \(error)")
                return
            }
            #expect(host == "[127.0.0.1]:\(server.port)" && type == "ssh-ed25519" && file == empty)
            #expect(fingerprint == server.hostKeyFingerprint)
            #expect(error.description.contains("ssh-keyscan -p \(server.port) 127.0.0.1 >> \(empty)"))
        }
        let pinned = fileSystem(
            server, root: server.folder.path, knownHosts: empty, fingerprint: server.hostKeyFingerprint)
        try await pinned.upload(Data("hello".utf8), to: "pinned.txt")
        #expect(try await pinned.read("pinned.txt", range: nil) == Data("hello".utf8))

        // Another key under the server's name.
        let other = server.folder.appendingPathComponent("other_ed25519").path
        try RealSSHServer.makeKey(at: other)
        let otherKey = try String(contentsOfFile: other + ".pub", encoding: .utf8).split(separator: " ")
        let changed = server.folder.appendingPathComponent("changed_known_hosts").path
        try "[127.0.0.1]:\(server.port) \(otherKey[0]) \(otherKey[1])\n".write(
            toFile: changed, atomically: true, encoding: .utf8)
        do {
            _ = try await fileSystem(server, root: server.folder.path, knownHosts: changed).list("")
            Issue.record("a server whose key changed was trusted")
        } catch SFTPError.changedHostKey(_, _, let fingerprint, _) {
            #expect(fingerprint == server.hostKeyFingerprint)
        }
    }

    @Test func aKeyTheServerDoesNotKnowIsASignInRefusal() async throws {
        let server = try await start()
        let stranger = server.folder.appendingPathComponent("stranger_ed25519").path
        try RealSSHServer.makeKey(at: stranger)
        do {
            _ = try await fileSystem(server, root: server.folder.path, identity: stranger).list("")
            Issue.record("a key the server does not know signed in")
        } catch SFTPError.signInRefused(let user, _, let tried) {
            #expect(user == server.user && tried.contains(stranger))
        }
    }

    /// A private key protected by a passphrase signs in with it as the password (`--password-stdin`), and not with
    /// another.
    @Test func aPassphraseProtectedKeyTakesThePassword() async throws {
        let server = try await start()
        let locked = server.folder.appendingPathComponent("locked_ed25519").path
        try RealSSHServer.makeKey(at: locked, passphrase: "pass phrase")
        let authorized = server.folder.appendingPathComponent("authorized_keys")
        let handle = try FileHandle(forWritingTo: authorized)
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(contentsOf: URL(fileURLWithPath: locked + ".pub")))
        try handle.close()
        func signIn(_ password: String) async throws {
            var configuration = fileSystem(server, root: server.folder.path, identity: locked).configuration
            configuration.password = password
            _ = try await SFTPFileSystem(configuration: configuration).list("")
        }
        try await signIn("pass phrase")
        await #expect(throws: SFTPError.self) { try await signIn("not the phrase") }
    }

    /// Connections the server drops between operations (a restart, an idle timeout) are replaced: the next
    /// operations succeed on new ones.
    @Test func connectionsTheServerDroppedAreReplaced() async throws {
        let server = try await start()
        let fs = fileSystem(server, root: server.folder.path + "/dropped")
        let data = bytes(300_000, seed: 3)
        for index in 0..<4 { try await fs.upload(data, to: "f\(index).bin") }
        server.dropConnections()
        async let first = fs.read("f0.bin", range: nil)
        async let second = fs.read("f1.bin", range: .bytes(10, 19))
        async let listed = fs.list("")
        #expect(try await first == data)
        #expect(try await second == data[10..<20])
        #expect(try await listed.map(\.name).sorted() == ["f0.bin", "f1.bin", "f2.bin", "f3.bin"])
        server.dropConnections()
        try await fs.upload(data, to: "after.bin")
        #expect(try await fs.metadata("after.bin").size == 300_000)
    }

    /// A server that goes silent on an open connection (its session stopped) is left after the stall timeout, in
    /// any phase of an operation (here the quote commands and the open of an upload, where libcurl's own low-speed
    /// check does not look), and the operation is tried again on a new connection.
    @Test func aConnectionThatGoesSilentIsLeftAfterTheStallTimeout() async throws {
        let server = try await start()
        var configuration = fileSystem(server, root: server.folder.path + "/silent").configuration
        // Long enough that a healthy connection on a loaded machine is never taken for a silent one.
        configuration.stallTimeout = .seconds(20)
        configuration.connections = 1
        let fs = SFTPFileSystem(configuration: configuration, retry: RetryPolicy(maximumAttempts: 6, sleep: { _ in }))
        try await fs.upload(Data("before".utf8), to: "before.txt")
        server.pauseConnections()
        defer { server.dropConnections() }
        try await fs.upload(Data("after".utf8), to: "after.txt")
        #expect(try await fs.read("after.txt", range: nil) == Data("after".utf8))
        #expect(try await fs.listNames("").sorted() == ["after.txt", "before.txt"])
    }

    /// An upload killed part way leaves its temporary file: never listed, and removed by a listing once it has gone
    /// unwritten for over a day, whatever the server's time zone; a recent one (an upload under way) stays.
    @Test func temporariesOfKilledUploadsAreRemovedOnceLongAbandoned() async throws {
        let server = try await start()
        let folder = server.folder.appendingPathComponent("abandoned")
        let fs = fileSystem(server, root: folder.path)
        try await fs.upload(Data("kept".utf8), to: "kept.txt")
        let stale = folder.appendingPathComponent(SFTPFileSystem.temporaryPrefix + "stale").path
        let fresh = folder.appendingPathComponent(SFTPFileSystem.temporaryPrefix + "fresh").path
        for path in [stale, fresh] { FileManager.default.createFile(atPath: path, contents: Data("part".utf8)) }
        try FileManager.default.setAttributes(
            [.modificationDate: Date().addingTimeInterval(-3 * 24 * 3600)], ofItemAtPath: stale)
        #expect(try await fs.list("").map(\.name) == ["kept.txt"])
        #expect(!FileManager.default.fileExists(atPath: stale), "the long-abandoned temporary should be gone")
        #expect(FileManager.default.fileExists(atPath: fresh), "a recent temporary may be an upload under way")
        #expect(try await fs.listNames("") == ["kept.txt"])
    }

    /// A file replaced while another device reads: the name always holds one whole version, never part of one; an
    /// upload of a name that never repeats keeps the first file when it meets one already there.
    @Test func uploadsNeverShowPartOfAFile() async throws {
        let server = try await start()
        let fs = fileSystem(server, root: server.folder.path + "/replace")
        let first = bytes(2_000_000, seed: 1)
        let second = bytes(2_000_000, seed: 2)
        try await fs.upload(first, to: "file.bin")
        async let replaced: Void = fs.upload(second, to: "file.bin")
        var seen: [Data] = []
        for _ in 0..<5 {
            if let data = try? await fs.read("file.bin", range: nil) { seen.append(data) }
        }
        try await replaced
        for data in seen { #expect(data == first || data == second, "a read saw part of a file") }
        #expect(try await fs.read("file.bin", range: nil) == second)
        try await fs.upload(.data(first), to: "file.bin", mode: .newName)
        #expect(try await fs.read("file.bin", range: nil) == second, "newName must not replace")
        #expect(temporaries(under: server.folder) == [])
    }
}
