import Foundation
import LLVS
import LLVSSupport
@testable import LLVSEncryption
import LLVSTestSupport
import Testing

/// The key file: the passphrase opens it, nothing else does, a rewrap keeps the key, and a hostile file is refused
/// before any work.
@Suite struct RemoteKeyTests {
    @Test func thePassphraseOpensTheKeyAndAnotherDoesNot() throws {
        let key = SecretKey.random()
        let file = try RemoteKeyFile.wrapping(key, passphrase: "correct horse", operations: 1, memory: 8 << 20)
        let decoded = try RemoteKeyFile.decode(file.encoded(), path: "encryption.json")
        #expect(try decoded.unwrap(passphrase: "correct horse", path: "encryption.json") == key)
        #expect(throws: EncryptionError.wrongPassphrase(keyFile: "encryption.json")) {
            try decoded.unwrap(passphrase: "correct horse ", path: "encryption.json")
        }
    }

    @Test func aKeyFileAskingTooMuchIsRefusedBeforeDerivingAnything() throws {
        var file = try RemoteKeyFile.wrapping(SecretKey.random(), passphrase: "p", operations: 1, memory: 8 << 20)
        file.derivation.memory = 1 << 40
        #expect(throws: EncryptionError.self) { try RemoteKeyFile.decode(file.encoded(), path: "k") }
        // A few times what this package writes (3 passes over 64 MiB) is the most: 16 passes over 1 GiB took 35 s.
        file.derivation.memory = 1 << 30
        #expect(throws: EncryptionError.self) { try RemoteKeyFile.decode(file.encoded(), path: "k") }
        file.derivation.memory = 64 << 20
        file.derivation.operations = 16
        #expect(throws: EncryptionError.self) { try RemoteKeyFile.decode(file.encoded(), path: "k") }
        file.derivation.operations = 8
        file.derivation.memory = 256 << 20
        #expect(throws: Never.self) { try RemoteKeyFile.decode(file.encoded(), path: "k") }
        file.derivation.memory = 8 << 20
        file.version = 2
        #expect(throws: EncryptionError.self) { try RemoteKeyFile.decode(file.encoded(), path: "k") }
        #expect(throws: EncryptionError.self) { try RemoteKeyFile.decode(Data("not json".utf8), path: "k") }
    }

    @Test func theFirstUseMakesTheKeyAndASecondDeviceOpensIt() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = LocalFolderFileSystem(root: folder)
        let first = EncryptedFileSystem(base: base, folder: "store", passphrase: "one")
        try await first.upload(Data("marker-value".utf8), to: "store/versions/A")
        #expect(FileManager.default.fileExists(atPath: folder.appendingPathComponent("store/encryption.json").path))
        let second = EncryptedFileSystem(base: base, folder: "store", passphrase: "one")
        #expect(try await second.download("store/versions/A") == Data("marker-value".utf8))
        #expect(try await second.listNames("store") == ["versions"], "the key file is not listed")

        let wrong = EncryptedFileSystem(base: base, folder: "store", passphrase: "two")
        await #expect(throws: EncryptionError.wrongPassphrase(keyFile: "store/encryption.json")) {
            try await wrong.upload(Data(), to: "store/versions/B")
        }
        #expect(
            !FileManager.default.fileExists(atPath: folder.appendingPathComponent("store/versions/B").path),
            "nothing is written before the key is open")

        try await RemoteKeyring.changePassphrase(on: base, folder: "store", from: "one", to: "two")
        #expect(
            try await EncryptedFileSystem(base: base, folder: "store", passphrase: "two").download("store/versions/A")
                == Data("marker-value".utf8))
        await #expect(throws: EncryptionError.self) {
            try await EncryptedFileSystem(base: base, folder: "store", passphrase: "one").download("store/versions/A")
        }
    }

    /// Two devices that make the folder's key at once: whichever `encryption.json` the folder keeps, what each sealed
    /// opens for both and for a third, also after the passphrase changes.
    @Test func twoKeysMadeAtOnceBothOpenWhateverEncryptionJSONHolds() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = LocalFolderFileSystem(root: folder)
        let first = EncryptedFileSystem(base: base, folder: "store", passphrase: "p")
        _ = try await first.keyring.key()
        // The second device found no key file (it looked before the first wrote one) and made its own.
        try FileManager.default.removeItem(at: folder.appendingPathComponent("store/encryption.json"))
        let second = EncryptedFileSystem(base: base, folder: "store", passphrase: "p")
        _ = try await second.keyring.key()
        try await first.upload(Data("from the first".utf8), to: "store/versions/A")
        try await second.upload(Data("from the second".utf8), to: "store/versions/B")
        #expect(
            try FileManager.default.contentsOfDirectory(
                atPath: folder.appendingPathComponent("store/encryption-keys").path
            ).count == 2)

        #expect(
            try await first.download("store/versions/B") == Data("from the second".utf8),
            "the first device finds the second's key")
        let third = EncryptedFileSystem(base: base, folder: "store", passphrase: "p")
        #expect(try await third.download("store/versions/A") == Data("from the first".utf8))
        #expect(try await third.read("store/versions/A", range: .bytes(5, 7)) == Data("the".utf8))
        let local = folder.appendingPathComponent("downloaded")
        try await third.download("store/versions/A", toFileAt: local)
        #expect(try Data(contentsOf: local) == Data("from the first".utf8))
        #expect(try await third.listNames("store") == ["versions"], "the key files are not listed")
        await #expect(throws: EncryptionError.self) {
            try await third.upload(Data(), to: "store/encryption-keys/x.json")
        }

        try await RemoteKeyring.changePassphrase(on: base, folder: "store", from: "p", to: "q")
        let later = EncryptedFileSystem(base: base, folder: "store", passphrase: "q")
        #expect(try await later.download("store/versions/A") == Data("from the first".utf8))
        #expect(try await later.download("store/versions/B") == Data("from the second".utf8))

        // A file no key opens still fails by name.
        try Data("LLVSENC1 not sealed at all, long enough to hold a chunk".utf8).write(
            to: folder.appendingPathComponent("store/versions/C"))
        await #expect(throws: EncryptionError.self) { try await later.download("store/versions/C") }
    }

    /// Two devices whose creates of `encryption.json` meet: the local folder links the key file into place, which
    /// refuses the second, so both seal with the first one's key and the folder keeps one key file.
    @Test func twoFirstUsesAtOnceLeaveOneKeyWhereACreateIsRefused() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        try await expectOneKeyFromTwoFirstUses(on: LocalFolderFileSystem(root: folder), folder: "store")
    }

    @Test func aFolderHoldingAPlaintextStoreIsNotEncryptedInPlace() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = LocalFolderFileSystem(root: folder)
        try await base.upload(Data("{}".utf8), to: "store/versions/A")
        let encrypted = EncryptedFileSystem(base: base, folder: "store", passphrase: "p")
        await #expect(throws: EncryptionError.plaintextStore(folder: "store")) {
            try await encrypted.listNames("store/versions")
        }
        #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("store/encryption.json").path))
    }

    @Test func pathsOutsideTheFolderAndTheKeyFileAreRefused() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let encrypted = EncryptedFileSystem(base: LocalFolderFileSystem(root: folder), folder: "store", passphrase: "p")
        await #expect(throws: EncryptionError.self) { try await encrypted.upload(Data(), to: "elsewhere/file") }
        await #expect(throws: EncryptionError.self) { try await encrypted.upload(Data(), to: "store/encryption.json") }
        await #expect(throws: EncryptionError.self) { try await encrypted.download("store/encryption.json") }
    }

    /// The opened key kept on this machine is used while the key file is the one it came from (here shown by a
    /// keyring whose passphrase alone would not open it), and not once the key file was rewrapped.
    @Test func theKeptOpenedKeyIsUsedOnlyForTheKeyFileItCameFrom() async throws {
        let folder = try temporaryFolder()
        defer { try? FileManager.default.removeItem(at: folder) }
        let base = LocalFolderFileSystem(root: folder.appendingPathComponent("remote"))
        let opened = OpenedKeyFile(url: folder.appendingPathComponent("opened.key"))
        try await EncryptedFileSystem(base: base, folder: "", passphrase: "right", openedKey: opened).upload(
            Data("v".utf8), to: "versions/A")
        let attributes = try FileManager.default.attributesOfItem(atPath: opened.url.path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)

        let fromCache = EncryptedFileSystem(base: base, folder: "", passphrase: "not derived", openedKey: opened)
        #expect(try await fromCache.download("versions/A") == Data("v".utf8))

        try await RemoteKeyring.changePassphrase(on: base, folder: "", from: "right", to: "newer")
        let stale = EncryptedFileSystem(base: base, folder: "", passphrase: "not derived", openedKey: opened)
        await #expect(throws: EncryptionError.wrongPassphrase(keyFile: "encryption.json")) {
            try await stale.download("versions/A")
        }
        #expect(
            try await EncryptedFileSystem(base: base, folder: "", passphrase: "newer", openedKey: opened).download(
                "versions/A") == Data("v".utf8))
    }
}
