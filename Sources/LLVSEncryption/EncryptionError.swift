import Foundation

/// What can go wrong reading or writing an encrypted remote. A file that fails its check is never used: the
/// operation that read it fails, naming it.
public enum EncryptionError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The passphrase does not open the key kept in `keyFile`.
    case wrongPassphrase(keyFile: String)
    /// `keyFile` is not a key file this build can read, or asks for key derivation beyond the limits.
    case malformedKeyFile(path: String, reason: String)
    /// A remote file failed its authentication or is not an encrypted file: altered, cut short, written by
    /// something else, or moved from another path.
    case damaged(path: String, reason: String)
    /// The folder to encrypt already holds a plaintext store; encrypting it in place would mix the two.
    case plaintextStore(folder: String)
    /// Argon2id could not derive the passphrase's key (libsodium refused, most likely for want of the memory).
    case keyDerivationFailed(operations: UInt64, memory: Int)
    /// A path the encrypted file system cannot serve: outside its folder, or its key file.
    case outsideEncryptedFolder(path: String, folder: String)

    public var description: String {
        switch self {
        case .wrongPassphrase(let keyFile):
            "The passphrase does not open this remote's key (\(keyFile)): check $LLVS_PASSPHRASE or the kept passphrase; if it was changed on another device, keep the new one with `llvs remote passphrase NAME --keep`."
        case .malformedKeyFile(let path, let reason): "The remote's key file \(path) cannot be used: \(reason)."
        case .damaged(let path, let reason):
            "The remote file \(path) fails its encryption check (\(reason)): it was altered, cut short or put in another file's place, and is not used."
        case .plaintextStore(let folder):
            "The remote folder \(folder.isEmpty ? "(the root)" : folder) already holds a store that is not encrypted; an encrypted remote needs a folder of its own: add it with another --base-path, or without --encrypt."
        case .keyDerivationFailed(let operations, let memory):
            "The key could not be derived from the passphrase (Argon2id, \(operations) passes over \(memory >> 20) MiB): libsodium refused, most likely for want of memory."
        case .outsideEncryptedFolder(let path, let folder):
            "\(path) is outside the encrypted folder \(folder.isEmpty ? "(the root)" : folder), or is its key file."
        }
    }
}
