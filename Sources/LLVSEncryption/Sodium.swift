import CSodium
import Foundation

/// The calls into libsodium this target makes, each checked. libsodium is initialised once, before the first use.
enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    static func ready() {
        precondition(initialised, "libsodium could not be initialised")
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        ready()
        var bytes = [UInt8](repeating: 0, count: count)
        randombytes_buf(&bytes, count)
        return bytes
    }

    /// XChaCha20-Poly1305 (IETF): `plain` sealed into `out`, which has room for `plainCount + tagSize` bytes.
    static func seal(
        _ plain: UnsafeRawPointer?, _ plainCount: Int, into out: UnsafeMutableRawPointer,
        additional: UnsafeRawBufferPointer, nonce: UnsafeRawPointer, key: UnsafeRawPointer
    ) {
        var written: UInt64 = 0
        let result = crypto_aead_xchacha20poly1305_ietf_encrypt(
            out.assumingMemoryBound(to: UInt8.self), &written,
            plain?.assumingMemoryBound(to: UInt8.self), UInt64(plainCount),
            additional.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(additional.count),
            nil, nonce.assumingMemoryBound(to: UInt8.self), key.assumingMemoryBound(to: UInt8.self))
        precondition(result == 0 && written == UInt64(plainCount + tagSize), "XChaCha20-Poly1305 sealing failed")
    }

    /// Opens what `seal` made; false when it fails its authentication (altered, another key, another place).
    static func open(
        _ sealed: UnsafeRawPointer, _ sealedCount: Int, into out: UnsafeMutableRawPointer?,
        additional: UnsafeRawBufferPointer, nonce: UnsafeRawPointer, key: UnsafeRawPointer
    ) -> Bool {
        guard sealedCount >= tagSize else { return false }
        var written: UInt64 = 0
        let result = crypto_aead_xchacha20poly1305_ietf_decrypt(
            out?.assumingMemoryBound(to: UInt8.self), &written, nil,
            sealed.assumingMemoryBound(to: UInt8.self), UInt64(sealedCount),
            additional.baseAddress?.assumingMemoryBound(to: UInt8.self), UInt64(additional.count),
            nonce.assumingMemoryBound(to: UInt8.self), key.assumingMemoryBound(to: UInt8.self))
        return result == 0 && written == UInt64(sealedCount - tagSize)
    }

    static let tagSize = Int(crypto_aead_xchacha20poly1305_ietf_ABYTES)
    static let nonceSize = Int(crypto_aead_xchacha20poly1305_ietf_NPUBBYTES)
    static let keySize = Int(crypto_aead_xchacha20poly1305_ietf_KEYBYTES)

    /// Argon2id (version 1.3) of a passphrase: a key of `keySize` bytes, or nil when libsodium refuses the
    /// parameters or cannot get the memory.
    static func argon2id(_ passphrase: String, salt: [UInt8], operations: UInt64, memory: Int) -> [UInt8]? {
        ready()
        guard salt.count == Int(crypto_pwhash_SALTBYTES) else { return nil }
        var key = [UInt8](repeating: 0, count: keySize)
        let length = UInt64(passphrase.utf8.count)
        let result = passphrase.withCString { chars in
            crypto_pwhash(&key, UInt64(keySize), chars, length, salt, operations, memory, crypto_pwhash_ALG_ARGON2ID13)
        }
        return result == 0 ? key : nil
    }

    static let saltSize = Int(crypto_pwhash_SALTBYTES)
}
