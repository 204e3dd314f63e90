import Foundation
import LLVS

/// The keys of one encrypted folder on a remote, opened from its key files with the passphrase on first use and then
/// held for the process. When the folder has no key file yet, the first use makes one, unless the folder already
/// holds a plaintext store. Concurrent first uses share one opening.
///
/// Two devices may make a folder's key at the same moment. Each new key is written first under a name of its own,
/// `encryption-keys/<random>.json`, which no other device writes, and then created as `encryption.json`, which names
/// the key to seal with (earlier builds read only it). Where the remote refuses a second create
/// (`CloudCapabilities.exclusiveCreate`: S3's If-None-Match, a rename that never replaces) the later device takes the
/// first one's key and removes its own file, so the remote ends with one key. Not every remote can refuse (Drive keeps
/// two files of one name), so nothing depends on it: where both writes land, the last stays, and a file sealed under
/// the other device's key opens with that key, found in `encryption-keys/` when a file fails under the keys already
/// open (`newKeys`). So both devices' data stays readable by every device, whichever key file won.
public actor RemoteKeyring {
    public nonisolated let base: any CloudFileSystem
    /// The encrypted folder ("" for the file system's root).
    public nonisolated let folder: String
    private let passphrase: String
    /// Where the opened key is kept between commands, when the passphrase is kept too; nil to derive it every time.
    private let openedKey: OpenedKeyFile?
    private var opening: Task<SecretKey, any Error>?
    /// Keys other than the sealing one that open files here: other devices' keys, made at the same moment.
    private var otherKeys: [SecretKey] = []
    /// The key files of `encryption-keys/` already read (opened or not), so each costs one derivation per process.
    private var readKeyFiles: Set<String> = []

    /// The folder, beside `encryption.json`, where each key is kept under a name of its own.
    public static let keysFolderName = "encryption-keys"
    /// The most key files of `encryption-keys/` one process derives keys from: a hostile remote cannot make it derive
    /// without end. A race of devices makes one each.
    static let maximumKeyFiles = 16

    public init(base: any CloudFileSystem, folder: String, passphrase: String, openedKey: OpenedKeyFile? = nil) {
        self.base = base
        self.folder = (try? CloudPath.components(folder).joined(separator: "/")) ?? folder
        self.passphrase = passphrase
        self.openedKey = openedKey
    }

    public nonisolated var keyFilePath: String { CloudPath.join(folder, RemoteKeyFile.name) }
    public nonisolated var keysFolderPath: String { CloudPath.join(folder, Self.keysFolderName) }

    /// The key new files are sealed with. A failure (a wrong passphrase, an unreachable remote) is not kept: the next
    /// use tries again.
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

    /// Every key known to open files here, the sealing key first.
    public func openingKeys() async throws -> [SecretKey] {
        [try await key()] + otherKeys
    }

    /// Reads the key files of `encryption-keys/` not read yet and returns the keys they hold that were not known: what
    /// to try when a file opens under none of `openingKeys()`. A key file the passphrase does not open is skipped (it
    /// cannot have sealed anything this passphrase reads); one that cannot be downloaded now is tried again next time.
    public func newKeys() async throws -> [SecretKey] {
        let primary = try await key()
        var found: [SecretKey] = []
        for name in try await base.listNames(keysFolderPath).sorted()
        where name.hasSuffix(".json") && !readKeyFiles.contains(name) {
            guard readKeyFiles.count < Self.maximumKeyFiles else { break }
            let path = CloudPath.join(keysFolderPath, name)
            let data: Data
            do { data = try await base.download(path) } catch { continue }
            readKeyFiles.insert(name)
            guard let key = try? RemoteKeyFile.decode(data, path: path).unwrap(passphrase: passphrase, path: path),
                key != primary, !otherKeys.contains(key)
            else { continue }
            otherKeys.append(key)
            found.append(key)
        }
        return found
    }

    /// The names of a plaintext store's folders: one of them in the folder means a store is there unencrypted.
    static let plaintextStoreFolders: Set<String> = [
        RemoteFormat.versionsFolder, RemoteFormat.changesFolder, "snapshots",
    ]

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
        let file = try RemoteKeyFile.wrapping(key, passphrase: passphrase).encoded()
        // Its own name first: whatever another device writes to encryption.json next, this key stays on the remote.
        let ownFile = CloudPath.join(keysFolderPath, UUID().uuidString.lowercased() + ".json")
        try await base.upload(.data(file), to: ownFile, mode: .newName)
        do {
            // Created only where no device made one yet: on a remote that refuses a second create itself
            // (`exclusiveCreate`), two devices starting at once end with the first one's key alone.
            try await base.upload(.data(file), to: path, mode: .create)
        } catch CloudFileSystemError.alreadyExists {
            // Another device's key is the folder's: this one sealed nothing, and goes.
            try? await base.removeFile(ownFile)
            let keptData = try await base.download(path)
            let kept = try RemoteKeyFile.decode(keptData, path: path).unwrap(passphrase: passphrase, path: path)
            openedKey?.keep(kept, forKeyFile: keptData)
            return kept
        }
        // Where a create is not refused by the remote itself, another device may have written its key since: seal with
        // the one the remote names, so devices converge on one key, and keep this one for what it may already have
        // sealed (nothing yet, in this process).
        let keptData = (try? await base.download(path)) ?? file
        if keptData != file,
            let kept = try? RemoteKeyFile.decode(keptData, path: path).unwrap(passphrase: passphrase, path: path)
        {
            otherKeys.append(key)
            openedKey?.keep(kept, forKeyFile: keptData)
            return kept
        }
        openedKey?.keep(key, forKeyFile: file)
        return key
    }

    /// True when `folder` on `base` has a key file: it is an encrypted remote's folder.
    public static func isEncrypted(_ base: any CloudFileSystem, folder: String) async throws -> Bool {
        try await base.exists(CloudPath.join(folder, RemoteKeyFile.name))
    }

    /// Rewraps the folder's keys under `newPassphrase`: `encryption.json` and each key file of `encryption-keys/` the
    /// old passphrase opens. The data stays as it is; each key file is replaced in one upload, so an interruption
    /// leaves the old passphrase opening what it opened.
    public static func changePassphrase(
        on base: any CloudFileSystem, folder: String, from passphrase: String, to newPassphrase: String
    ) async throws {
        let path = CloudPath.join(folder, RemoteKeyFile.name)
        let data: Data
        do {
            data = try await base.download(path)
        } catch CloudFileSystemError.notFound {
            throw EncryptionError.malformedKeyFile(
                path: path, reason: "there is none: nothing was encrypted in this folder yet")
        }
        let key = try RemoteKeyFile.decode(data, path: path).unwrap(passphrase: passphrase, path: path)
        let keysFolder = CloudPath.join(folder, keysFolderName)
        for name in try await base.listNames(keysFolder) where name.hasSuffix(".json") {
            let keyPath = CloudPath.join(keysFolder, name)
            guard
                let other = try? RemoteKeyFile.decode(try await base.download(keyPath), path: keyPath).unwrap(
                    passphrase: passphrase, path: keyPath)
            else { continue }
            try await base.upload(try RemoteKeyFile.wrapping(other, passphrase: newPassphrase).encoded(), to: keyPath)
        }
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
