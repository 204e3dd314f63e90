import Foundation
import LLVS
import LLVSSupport

/// A file system that seals every file it writes into a folder of another (`SealedFileLayout`) and opens and checks
/// every file it reads, so an exchange, a snapshot or a backup stores only ciphertext on the remote without knowing.
/// Names pass through: on an LLVS remote they are version UUIDs and snapshot chunk numbers, which say nothing.
///
/// Each file is sealed under its path below the encrypted folder, so the folder can move on the remote while a file
/// put in another's place fails to open. Nothing is read or written before the key is open (`RemoteKeyring`), so a
/// wrong passphrase stops an operation before it starts. Sizes reported are the plaintext's; the service's
/// checksums, of ciphertext, are not reported.
public struct EncryptedFileSystem<Base: CloudFileSystem>: SealingFileSystem {
    public let base: Base
    public let keyring: RemoteKeyring
    /// Where sealed copies of local files the caller keeps wait for upload: on the store's disk.
    public let scratchFolder: URL
    private let root: [String]

    public init(
        base: Base, folder: String, passphrase: String, openedKey: OpenedKeyFile? = nil,
        scratchFolder: URL = FileManager.default.temporaryDirectory
    ) {
        self.base = base
        keyring = RemoteKeyring(base: base, folder: folder, passphrase: passphrase, openedKey: openedKey)
        self.scratchFolder = scratchFolder
        root = (try? CloudPath.components(folder)) ?? []
    }

    // MARK: Paths

    /// The name a file is sealed under: its path below the encrypted folder, in lower case on a service whose
    /// names ignore case (there `Case.txt` and `case.txt` are one file, which either spelling must open), and
    /// composed (NFC) on one that takes a composed and a decomposed spelling for one name. The key file and paths
    /// outside the folder are refused.
    func sealedName(_ path: String) throws -> String {
        var name = try spelledName(path)
        let capabilities = base.capabilities
        if capabilities.canonicallyEquivalentNamesCollide { name = name.precomposedStringWithCanonicalMapping }
        return capabilities.caseInsensitiveNames ? name.lowercased() : name
    }

    /// The path below the encrypted folder as the caller spelled it.
    private func spelledName(_ path: String) throws -> String {
        let parts = try CloudPath.components(path)
        guard parts.count > root.count, parts.starts(with: root),
            parts.count > root.count + 1 || parts.last != RemoteKeyFile.name,
            parts[root.count] != RemoteKeyring.keysFolderName
        else {
            throw EncryptionError.outsideEncryptedFolder(path: path, folder: root.joined(separator: "/"))
        }
        return parts.dropFirst(root.count).joined(separator: "/")
    }

    /// Opens a file under the name files are sealed under now, then, where that fails on a service whose names ignore
    /// case, under the name as spelled: earlier builds sealed files there under the spelling (LLVS's upper-case IDs).
    /// A wrong name fails every chunk before any is written, so the second try meets the file as it came.
    private func opening<T>(_ path: String, _ body: (String) throws -> T) throws -> T {
        let name = try sealedName(path)
        do {
            return try body(name)
        } catch let error as EncryptionError {
            let spelled = try spelledName(path)
            guard spelled != name, case .damaged = error else { throw error }
            do { return try body(spelled) } catch { throw error }
        }
    }

    /// Folders may be the encrypted folder itself or inside it.
    private func checkFolder(_ path: String) throws {
        let parts = try CloudPath.components(path)
        guard parts.starts(with: root) else {
            throw EncryptionError.outsideEncryptedFolder(path: path, folder: root.joined(separator: "/"))
        }
    }

    /// `encryption.json` and the `encryption-keys` folder beside it: the keyring's, never listed as the caller's.
    private func isKeyFile(_ name: String, in folder: String) -> Bool {
        (name == RemoteKeyFile.name || name == RemoteKeyring.keysFolderName)
            && (try? CloudPath.components(folder)) == root
    }

    /// Runs `open` with each key that may have sealed the file: the sealing key, other keys already open, then keys of
    /// other devices' key files not read yet (two devices that first used the remote at once each sealed under their
    /// own). The first failure is what a file no key opens reports.
    private func withEachKey<T>(_ open: (SecretKey) throws -> T) async throws -> T {
        var keys = try await keyring.openingKeys()
        var firstFailure: EncryptionError?
        while !keys.isEmpty {
            for key in keys {
                do {
                    return try open(key)
                } catch let error as EncryptionError {
                    guard case .damaged = error else { throw error }
                    firstFailure = firstFailure ?? error
                }
            }
            keys = try await keyring.newKeys()
        }
        // `openingKeys` holds the sealing key at least, so a failure was met.
        throw firstFailure ?? EncryptionError.damaged(path: "", reason: "no key opens it")
    }

    private func scratchFile(_ label: String) throws -> URL {
        try POSIX.makeDirectories(scratchFolder.path)
        return scratchFolder.appendingPathComponent("\(TemporaryWriter.tag)-\(UUID().uuidString)-\(label)")
    }

    /// What a listing says of a sealed file: its plaintext size (nil for a size no sealed file has), no checksums.
    private func plainItem(_ item: CloudItem) -> CloudItem {
        var item = item
        item.checksums = [:]
        if !item.isFolder, let size = item.size { item.size = SealedFileLayout.plainSize(sealed: size) }
        return item
    }

    // MARK: CloudFileSystem

    public var capabilities: CloudCapabilities {
        var capabilities = base.capabilities
        capabilities.checksums = []
        return capabilities
    }

    public func exists(_ path: String) async throws -> Bool {
        try checkFolder(path)
        _ = try await keyring.key()
        return try await base.exists(path)
    }

    public func list(_ folder: String) async throws -> [CloudItem] {
        try checkFolder(folder)
        _ = try await keyring.key()
        return try await base.list(folder).compactMap { isKeyFile($0.name, in: folder) ? nil : plainItem($0) }
    }

    public func listNames(_ folder: String) async throws -> [String] {
        try checkFolder(folder)
        _ = try await keyring.key()
        return try await base.listNames(folder).filter { !isKeyFile($0, in: folder) }
    }

    public func metadata(_ path: String) async throws -> CloudItem {
        try checkFolder(path)
        _ = try await keyring.key()
        return plainItem(try await base.metadata(path))
    }

    /// Bytes are sealed in memory, a local file into a sealed scratch copy; a staged file was sealed as it was
    /// written (`stager(for:)`) and goes up as it is.
    public func upload(_ source: UploadSource, to path: String, mode: UploadMode) async throws {
        let name = try sealedName(path)
        let key = try await keyring.key()
        switch source {
        case .data(let data):
            try await base.upload(.data(SealedFileCodec.seal(data, key: key, path: name)), to: path, mode: mode)
        case .staged(let url, let size):
            try await base.upload(.file(url, size: size), to: path, mode: mode)
        case .file(let url, _):
            let sealed = try scratchFile("sealed")
            defer { POSIX.remove(sealed.path) }
            try Self.seal(url, into: SealingFileWriter(url: sealed, key: key, path: name))
            try await base.upload(try UploadSource(file: sealed), to: path, mode: mode)
        }
    }

    /// Copies a local file into a sealing writer a batch at a time; a source that cannot be read, or ends early, is
    /// the caller's `localFile` failure.
    private static func seal(_ source: URL, into writer: SealingFileWriter) throws {
        do {
            let input = try ReadableFile(path: source.path)
            var offset: Int64 = 0
            while offset < input.size {
                let piece = try input.read(
                    at: offset,
                    count: Int(
                        min(Int64(SealedFileCodec.batchChunks * SealedFileLayout.chunkSize), input.size - offset)))
                try writer.write(piece)
                offset += Int64(piece.count)
            }
            try writer.finish()
        } catch let error as FileError where error.path == source.path {
            throw CloudFileSystemError.localFile(path: source.path, message: "\(error)")
        }
    }

    /// Files staged for an upload are sealed as they are written (`SealingFileWriter`): no plaintext copy on disk.
    public func stager(for path: String) async throws -> FileStager {
        let name = try sealedName(path)
        let key = try await keyring.key()
        return FileStager { try SealingFileWriter(url: $0, key: key, path: name) }
    }

    /// A whole file is opened where it lands, with no copy; a region is opened in memory and written at its place.
    public func download(_ path: String, to destination: DownloadDestination) async throws {
        switch destination {
        case .file(let url): try await openWhole(path, into: url)
        case .region: try destination.write(try await read(path, range: nil), readFrom: path)
        }
    }

    /// A whole file downloaded to `destination` and opened there.
    private func openWhole(_ path: String, into destination: URL) async throws {
        let name = try sealedName(path)
        let spelled = try spelledName(path)
        _ = try await keyring.key()
        // Downloaded to the destination and opened there: no copy. A file opened in place is gone when it fails, so
        // the key and the name are settled on its first chunk before.
        try await base.download(path, toFileAt: destination)
        let file = try? ReadableFile(path: destination.path)
        let prefix = file.flatMap {
            try? $0.read(
                at: 0, count: Int(min($0.size, Int64(SealedFileLayout.headerSize + SealedFileLayout.sealedChunkSize))))
        }
        let names = spelled == name ? [name] : [name, spelled]
        let chosen = try? await withEachKey { key -> (SecretKey, String) in
            guard let file, let prefix,
                let opened = names.first(where: {
                    SealedFileCodec.firstChunkOpens(prefix, sealedCount: file.size, key: key, path: $0)
                })
            else { throw EncryptionError.damaged(path: path, reason: "its first chunk does not open") }
            return (key, opened)
        }
        // When nothing opens the first chunk, the sealing key tells what is wrong with the file, in full.
        let (key, opened) = if let chosen { chosen } else { (try await keyring.key(), name) }
        try SealedFileCodec.openInPlace(destination, key: key, path: opened, displayPath: path)
    }

    /// A whole file opened in memory; for a range, the chunks that cover it, with the header when it is near (one
    /// request) or on its own (two).
    public func read(_ path: String, range: ByteRange?) async throws -> Data {
        guard let range else {
            _ = try sealedName(path)
            _ = try await keyring.key()
            let sealed = try await base.read(path, range: nil)
            return try await withEachKey { key in
                try opening(path) { try SealedFileCodec.open(sealed, key: key, path: $0, displayPath: path) }
            }
        }
        _ = try sealedName(path)
        _ = try await keyring.key()
        let item = try await base.metadata(path)
        guard !item.isFolder else { throw CloudFileSystemError.wrongKind(path: path, expectedFolder: false) }
        guard let sealedSize = item.size, let plainSize = SealedFileLayout.plainSize(sealed: sealedSize) else {
            throw EncryptionError.damaged(
                path: path,
                reason: "its size, \(item.size.map(String.init) ?? "unknown"), is not that of an encrypted file")
        }
        guard let span = range.resolved(size: plainSize) else {
            throw CloudFileSystemError.server(
                status: 416, message: "range \(range.httpValue) is outside the \(plainSize)-byte file \(path)")
        }
        let chunk = Int64(SealedFileLayout.chunkSize), sealedChunk = Int64(SealedFileLayout.sealedChunkSize),
            header = Int64(SealedFileLayout.headerSize)
        let first = span.lowerBound / chunk, last = (span.upperBound - 1) / chunk
        let start = header + first * sealedChunk
        let end = min(header + (last + 1) * sealedChunk, sealedSize) - 1
        let headerBytes: Data, body: Data
        if start <= 1 << 20 {
            let both = try await base.read(path, range: .bytes(0, end))
            guard both.count == Int(end + 1) else {
                throw EncryptionError.damaged(path: path, reason: "it is shorter than its listed size")
            }
            (headerBytes, body) = (both.prefix(Int(header)), both.dropFirst(Int(start)))
        } else {
            headerBytes = try await base.read(path, range: .bytes(0, header - 1))
            body = try await base.read(path, range: .bytes(start, end))
            guard body.count == Int(end - start + 1) else {
                throw EncryptionError.damaged(path: path, reason: "it is shorter than its listed size")
            }
        }
        let count = Int(last - first + 1)
        var plain = Data(count: count * SealedFileLayout.chunkSize)
        try await withEachKey { key in
            try opening(path) { name in
                let seal = try SealedFileCodec.readHeader(Data(headerBytes), key: key, path: name, displayPath: path)
                try plain.withUnsafeMutableBytes { out in
                    try Data(body).withUnsafeBytes { sealed in
                        try SealedFileCodec.openChunks(
                            seal, first: first, count: count, total: SealedFileLayout.chunkCount(plain: plainSize),
                            plainCount: plainSize, sealed: sealed, out: out.baseAddress, displayPath: path)
                    }
                }
            }
        }
        let offset = Int(span.lowerBound - first * chunk)
        return plain.subdata(in: offset..<offset + span.count)
    }

    public func makeFolder(_ path: String) async throws {
        try checkFolder(path)
        _ = try await keyring.key()
        try await base.makeFolder(path)
    }

    public func removeFile(_ path: String) async throws {
        _ = try sealedName(path)
        _ = try await keyring.key()
        try await base.removeFile(path)
    }

    public func removeFolder(_ path: String) async throws {
        try checkFolder(path)
        _ = try await keyring.key()
        try await base.removeFolder(path)
    }
}

/// The base's change feed, after the key is open: names are not sealed, so what it reports is what the caller wrote.
extension EncryptedFileSystem: CloudChangeFeed where Base: CloudChangeFeed {
    public func changeCursor(watching folders: [String]) async throws -> String {
        _ = try await keyring.key()
        return try await base.changeCursor(watching: folders)
    }

    public func changes(in folders: [String], since cursor: String) async throws -> CloudChangeSet {
        _ = try await keyring.key()
        return try await base.changes(in: folders, since: cursor)
    }

    public func waitForChanges(in folders: [String], since cursor: String, timeout: Duration) async throws -> Bool {
        _ = try await keyring.key()
        return try await base.waitForChanges(in: folders, since: cursor, timeout: timeout)
    }
}

/// A file system that seals what it writes under a remote's key: a caller that holds it as `any CloudFileSystem` can
/// open the key ahead of any work (a wrong passphrase then stops a command before it makes anything).
public protocol SealingFileSystem: CloudFileSystem {
    var keyring: RemoteKeyring { get }
}

/// Making an encrypted file system over a file system known only as `any CloudFileSystem`, keeping its change feed.
public enum RemoteEncryption {
    public static func encrypting(
        _ base: any CloudFileSystem, folder: String, passphrase: String, openedKey: OpenedKeyFile? = nil,
        scratchFolder: URL = FileManager.default.temporaryDirectory
    ) -> any CloudFileSystem {
        func wrap<Base: CloudFileSystem>(_ base: Base) -> any CloudFileSystem {
            EncryptedFileSystem(
                base: base, folder: folder, passphrase: passphrase, openedKey: openedKey, scratchFolder: scratchFolder)
        }
        return wrap(base)
    }
}
