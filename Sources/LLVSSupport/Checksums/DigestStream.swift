import CCrypto
import Foundation

/// A message digest over data given in pieces, through libcrypto's EVP interface: SHA-256 for LLVS's own checks,
/// SHA-1 and MD5 because services report them (Box and pCloud `sha1`, Google Drive `md5Checksum`).
public final class DigestStream {
    public enum Algorithm: Sendable { case sha256, sha1, md5 }
    private let context: OpaquePointer

    public init(_ algorithm: Algorithm = .sha256) {
        context = EVP_MD_CTX_new()
        let digest =
            switch algorithm {
            case .sha256: EVP_sha256()
            case .sha1: EVP_sha1()
            case .md5: EVP_md5()
            }
        EVP_DigestInit_ex(context, digest, nil)
    }

    deinit { EVP_MD_CTX_free(context) }

    public func update(_ data: Data) {
        data.withUnsafeBytes { raw in
            guard let base = raw.baseAddress, raw.count > 0 else { return }
            EVP_DigestUpdate(context, base, raw.count)
        }
    }

    /// The digest as lowercase hex; the stream is finished after this.
    public func finalizeHex() -> String { SHA256.hexString(finalize()) }

    /// The digest's bytes; the stream is finished after this.
    public func finalize() -> [UInt8] {
        var digest = [UInt8](repeating: 0, count: Int(EVP_MAX_MD_SIZE))
        var length: UInt32 = 0
        EVP_DigestFinal_ex(context, &digest, &length)
        return Array(digest.prefix(Int(length)))
    }

    /// The hex digest of `data` in one call.
    public static func hex(_ data: Data, _ algorithm: Algorithm) -> String {
        let stream = DigestStream(algorithm)
        stream.update(data)
        return stream.finalizeHex()
    }
}
