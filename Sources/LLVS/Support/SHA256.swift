import CCrypto
import Foundation

/// SHA-256 through OpenSSL's libcrypto.
public enum SHA256 {
    public static func digest(_ data: Data) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        data.withUnsafeBytes { raw in
            _ = CCrypto.SHA256(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &out)
        }
        return out
    }

    public static func digest(_ string: String) -> [UInt8] {
        var string = string
        return string.withUTF8 { buffer in
            var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
            _ = CCrypto.SHA256(buffer.baseAddress, buffer.count, &out)
            return out
        }
    }

    public static func hex(_ data: Data) -> String { hexString(digest(data)) }

    static func hexString(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var chars = [UInt8]()
        chars.reserveCapacity(bytes.count * 2)
        for byte in bytes {
            chars.append(digits[Int(byte >> 4)])
            chars.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: chars, as: UTF8.self)
    }
}

/// A message digest over data given in pieces, through libcrypto's EVP interface: SHA-256 for LLVS's own checks,
/// MD5 because services report it (Google Drive's `md5Checksum`).
public final class DigestStream {
    public enum Algorithm: Sendable { case sha256, md5 }
    private let context: OpaquePointer

    public init(_ algorithm: Algorithm = .sha256) {
        context = EVP_MD_CTX_new()
        EVP_DigestInit_ex(context, algorithm == .sha256 ? EVP_sha256() : EVP_md5(), nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ data: Data) {
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            EVP_DigestUpdate(context, base, raw.count)
        }
    }

    /// The digest as lowercase hex; the stream is finished after this.
    public func finalizeHex() -> String {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return SHA256.hexString(Array(digest.prefix(Int(length))))
    }

    /// The hex digest of `data` in one call.
    public static func hex(_ data: Data, _ algorithm: Algorithm) -> String {
        let stream = DigestStream(algorithm)
        stream.update(data)
        return stream.finalizeHex()
    }
}
