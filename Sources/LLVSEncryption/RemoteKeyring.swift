import Foundation
import LLVS

/// The key of one encrypted folder on a remote, opened from its `encryption.json` with the passphrase on first use
/// and then held for the process. When the folder has no key file yet, the first use makes one, unless the folder
/// already holds a plaintext store. Concurrent first uses share one opening.
public actor RemoteKeyring {
    public nonisolated let base: any CloudFileSystem
    /// The encrypted folder ("" for the file system's root).
    public nonisolated let folder: String
    private let passphrase: String
    /// Where the opened key is kept between commands, when the passphrase is kept too; nil to derive it every time.
    private let openedKey: OpenedKeyFile?
    private var opening: Task<SecretKey, any Error>?

    public init(base: any CloudFileSystem, folder: String, passphrase: String, openedKey: OpenedKeyFile? = nil) {
        self.base = base
        self.folder = (try? CloudPath.components(folder).joined(separator: "/")) ?? folder
        self.passphrase = passphrase
        self.openedKey = openedKey
    }

    public nonisolated var keyFilePath: String { CloudPath.join(folder, RemoteKeyFile.name) }

    /// The folder's key. A failure (a wrong passphrase, an unreachable remote) is not kept: the next use tries again.
    public func key() async throws -> SecretKey {
        if let opening { return try await opening.value }
        let task = Task { try await self.openOrMake() }
        opening = task
        do {
            return try await task.value
        } catch {
            opening = nil
            throw error
        }
    }

    /// The names of a plaintext store's folders: one of them in the folder means a store is there unencrypted.
    static let plaintextStoreFolders: Set<String> = [RemoteFormat.versionsFolder, RemoteFormat.changesFolder, "snapshots"]

    private func openOrMake() async throws -> SecretKey {
        let path = keyFilePath
        let data: Data
        do {
            data = try await base.download(path)
        } catch CloudFileSystemError.notFound {
            return try await make()
        }
        if let kept = openedKey?.key(forKeyFile: data) { return kept }
        let key = try RemoteKeyFile.decode(data, path: path).unwrap(passphrase: passphrase, path: path)
        openedKey?.keep(key, forKeyFile: data)
        return key
    }

    private func make() async throws -> SecretKey {
        let path = keyFilePath
        if try await !Set(base.listNames(folder)).isDisjoint(with: Self.plaintextStoreFolders) {
            throw EncryptionError.plaintextStore(folder: folder)
        }
        let key = SecretKey.random()
        let file = try RemoteKeyFile.wrapping(key, passphrase: passphrase)
        try await base.upload(file.encoded(), to: path)
        // Two devices may make a key at the same moment; the file the remote kept is the key, so read it back.
        let keptData = try await base.download(path)
        let kept = try RemoteKeyFile.decode(keptData, path: path)
        let opened = kept == file ? key : try kept.unwrap(passphrase: passphrase, path: path)
        openedKey?.keep(opened, forKeyFile: keptData)
        return opened
    }

    /// True when `folder` on `base` has a key file: it is an encrypted remote's folder.
    public static func isEncrypted(_ base: any CloudFileSystem, folder: String) async throws -> Bool {
        try await base.exists(CloudPath.join(folder, RemoteKeyFile.name))
    }

    /// Rewraps the folder's key under `newPassphrase`. The data stays as it is; the key file is replaced in one upload,
    /// so an interruption leaves the old passphrase working.
    public static func changePassphrase(on base: any CloudFileSystem, folder: String, from passphrase: String, to newPassphrase: String) async throws {
        let path = CloudPath.join(folder, RemoteKeyFile.name)
        let data: Data
        do {
            data = try await base.download(path)
        } catch CloudFileSystemError.notFound {
            throw EncryptionError.malformedKeyFile(path: path, reason: "there is none: nothing was encrypted in this folder yet")
        }
        let key = try RemoteKeyFile.decode(data, path: path).unwrap(passphrase: passphrase, path: path)
        try await base.upload(try RemoteKeyFile.wrapping(key, passphrase: newPassphrase).encoded(), to: path)
    }

    /// Checks that `passphrase` opens the folder's key, without making one: a folder with no key yet takes any.
    public static func check(_ passphrase: String, on base: any CloudFileSystem, folder: String) async throws {
        let path = CloudPath.join(folder, RemoteKeyFile.name)
        let data: Data
        do {
            data = try await base.download(path)
        } catch CloudFileSystemError.notFound {
            return
        }
        _ = try RemoteKeyFile.decode(data, path: path).unwrap(passphrase: passphrase, path: path)
    }
}
