import Foundation

/// `encryption.json`, at the root of an encrypted remote's folder: the remote's master key wrapped by a key derived
/// from the passphrase with Argon2id, with the derivation's parameters and salt. The only file of an encrypted
/// remote that is not sealed; changing the passphrase rewrites it alone, never the data.
public struct RemoteKeyFile: Codable, Sendable, Equatable {
    public static let name = "encryption.json"
    public static let format = "llvs-encryption"

    public struct Derivation: Codable, Sendable, Equatable {
        public var algorithm: String
        /// Argon2id passes over memory (libsodium's opslimit).
        public var operations: UInt64
        /// Bytes of memory (libsodium's memlimit).
        public var memory: Int
        public var salt: String
    }

    public struct WrappedKey: Codable, Sendable, Equatable {
        public var nonce: String
        public var sealed: String
    }

    public var format: String
    public var version: Int
    /// How the files are sealed (`SealedFileLayout`).
    public var cipher: String
    public var derivation: Derivation
    public var key: WrappedKey

    static let cipherName = "xchacha20poly1305-64k"
    static let derivationName = "argon2id13"
    /// The wrapped key's additional data: a key file of another format cannot be opened as this one.
    static let wrapDomain = Array("llvs-encryption-key-v1".utf8)

    /// What a new key file asks of the passphrase: RFC 9106's second recommended choice (3 passes, 64 MiB), about a
    /// fifth of a second here, paid once per command.
    public static let operations: UInt64 = 3
    public static let memory = 64 << 20
    /// The most a key file may ask for: a few times what this package writes (about 2 s and 256 MiB here), so a
    /// hostile remote cannot make every command take minutes or gigabytes.
    static let maximumOperations: UInt64 = 8
    static let maximumMemory = 256 << 20

    /// A key file wrapping `key` under `passphrase`, with a fresh salt. `keyDerivationFailed` when Argon2id cannot get
    /// its memory.
    public static func wrapping(
        _ key: SecretKey, passphrase: String, operations: UInt64 = operations, memory: Int = memory
    ) throws -> RemoteKeyFile {
        let salt = Sodium.randomBytes(Sodium.saltSize)
        guard let wrapping = Sodium.argon2id(passphrase, salt: salt, operations: operations, memory: memory) else {
            throw EncryptionError.keyDerivationFailed(operations: operations, memory: memory)
        }
        let nonce = Sodium.randomBytes(Sodium.nonceSize)
        var sealed = [UInt8](repeating: 0, count: Sodium.keySize + Sodium.tagSize)
        wrapDomain.withUnsafeBytes { domain in
            sealed.withUnsafeMutableBytes { out in
                Sodium.seal(
                    key.bytes, key.bytes.count, into: out.baseAddress!, additional: domain, nonce: nonce, key: wrapping)
            }
        }
        return RemoteKeyFile(
            format: format, version: 1, cipher: cipherName,
            derivation: Derivation(
                algorithm: derivationName, operations: operations, memory: memory,
                salt: Data(salt).base64EncodedString()),
            key: WrappedKey(nonce: Data(nonce).base64EncodedString(), sealed: Data(sealed).base64EncodedString()))
    }

    /// The master key, when `passphrase` opens it; `path` names the file in errors.
    public func unwrap(passphrase: String, path: String) throws -> SecretKey {
        try check(path: path)
        let salt = [UInt8](Data(base64Encoded: derivation.salt)!)
        let nonce = [UInt8](Data(base64Encoded: key.nonce)!)
        let sealed = [UInt8](Data(base64Encoded: key.sealed)!)
        guard
            let wrapping = Sodium.argon2id(
                passphrase, salt: salt, operations: derivation.operations, memory: derivation.memory)
        else {
            throw EncryptionError.keyDerivationFailed(operations: derivation.operations, memory: derivation.memory)
        }
        var plain = [UInt8](repeating: 0, count: Sodium.keySize)
        let opened = Self.wrapDomain.withUnsafeBytes { domain in
            plain.withUnsafeMutableBytes { out in
                Sodium.open(
                    sealed, sealed.count, into: out.baseAddress, additional: domain, nonce: nonce, key: wrapping)
            }
        }
        guard opened else { throw EncryptionError.wrongPassphrase(keyFile: path) }
        return SecretKey(bytes: plain)
    }

    /// Refuses a file this build cannot use, before any work: another format or version, wrong lengths, or a
    /// derivation beyond the limits.
    func check(path: String) throws {
        func fail(_ reason: String) -> EncryptionError { .malformedKeyFile(path: path, reason: reason) }
        guard format == Self.format else { throw fail("its format is \"\(format)\", not \"\(Self.format)\"") }
        guard version == 1 else {
            throw fail("it is version \(version); this build reads version 1, so a newer llvs wrote it")
        }
        guard cipher == Self.cipherName else { throw fail("its cipher is \"\(cipher)\", not \"\(Self.cipherName)\"") }
        guard derivation.algorithm == Self.derivationName else {
            throw fail("its key derivation is \"\(derivation.algorithm)\", not \"\(Self.derivationName)\"")
        }
        guard (1...Self.maximumOperations).contains(derivation.operations),
            (8192...Self.maximumMemory).contains(derivation.memory)
        else {
            throw fail(
                "it asks for \(derivation.operations) passes over \(derivation.memory) bytes; at most \(Self.maximumOperations) passes over \(Self.maximumMemory) bytes are allowed"
            )
        }
        guard Data(base64Encoded: derivation.salt)?.count == Sodium.saltSize,
            Data(base64Encoded: key.nonce)?.count == Sodium.nonceSize,
            Data(base64Encoded: key.sealed)?.count == Sodium.keySize + Sodium.tagSize
        else {
            throw fail("its salt, nonce or wrapped key has the wrong length")
        }
    }

    public func encoded() -> Data {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(self)) ?? Data()
    }

    public static func decode(_ data: Data, path: String) throws -> RemoteKeyFile {
        let file: RemoteKeyFile
        do {
            file = try JSONDecoder().decode(RemoteKeyFile.self, from: data)
        } catch {
            throw EncryptionError.malformedKeyFile(path: path, reason: "it is not the JSON of a key file (\(error))")
        }
        try file.check(path: path)
        return file
    }
}
