import Foundation

/// A remote's master key: 32 random bytes, made once when the remote is first encrypted and kept on the remote
/// only wrapped by the passphrase (`RemoteKeyFile`). Every file is sealed with it.
public struct SecretKey: Sendable, Equatable {
    let bytes: [UInt8]

    init(bytes: [UInt8]) {
        precondition(bytes.count == Sodium.keySize)
        self.bytes = bytes
    }

    /// A fresh random key.
    public static func random() -> SecretKey { SecretKey(bytes: Sodium.randomBytes(Sodium.keySize)) }
}
