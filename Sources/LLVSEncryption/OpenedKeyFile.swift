import Foundation
import LLVSSupport
#if canImport(Glibc)
import Glibc
#endif

/// A remote's opened master key kept on this machine (mode 0600) beside the passphrase kept for it, so a command
/// does not derive it again (a fifth of a second and 64 MiB each time). It holds no more than the kept passphrase
/// already gives, and is only used while the remote's `encryption.json` is byte for byte the one it was opened from:
/// a key file rewrapped elsewhere (a new passphrase) is opened with the passphrase again.
public struct OpenedKeyFile: Sendable {
    public let url: URL

    public init(url: URL) { self.url = url }

    struct Contents: Codable {
        /// SHA-256 of the key file the key was opened from.
        var keyFile: String
        var key: String
    }

    /// The key opened from a key file with these bytes, if it is kept; a damaged file counts as none.
    func key(forKeyFile keyFile: Data) -> SecretKey? {
        guard let data = FileManager.default.contents(atPath: url.path),
            let contents = try? JSONDecoder().decode(Contents.self, from: data),
            contents.keyFile == SHA256.hex(keyFile),
            let bytes = Data(base64Encoded: contents.key), bytes.count == Sodium.keySize
        else { return nil }
        return SecretKey(bytes: [UInt8](bytes))
    }

    /// Keeps the key; a failure only costs the next command a derivation.
    func keep(_ key: SecretKey, forKeyFile keyFile: Data) {
        guard
            let data = try? JSONEncoder().encode(
                Contents(keyFile: SHA256.hex(keyFile), key: Data(key.bytes).base64EncodedString()))
        else { return }
        let temporary = url.path + ".\(TemporaryWriter.tag)-\(UUID().uuidString)"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        guard fd >= 0 else { return }
        let written = data.withUnsafeBytes { (try? POSIX.write($0, at: 0, to: fd, path: temporary)) != nil }
        close(fd)
        if !written || rename(temporary, url.path) != 0 { unlink(temporary) }
    }

    public func remove() { unlink(url.path) }
}
