import CCrypto
import Foundation

/// SHA-256 through OpenSSL's libcrypto (its low-level interface: see `llvs_sha256`).
public enum SHA256 {
    public static func digest(_ data: Data) -> [UInt8] {
        data.withUnsafeBytes { digest(raw: $0) }
    }

    public static func digest(_ string: String) -> [UInt8] {
        var string = string
        return string.withUTF8 { digest(raw: UnsafeRawBufferPointer($0)) }
    }

    public static func digest(raw: UnsafeRawBufferPointer) -> [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Int(SHA256_DIGEST_LENGTH)) { out, initialized in
            llvs_sha256(raw.baseAddress, raw.count, out.baseAddress)
            initialized = Int(SHA256_DIGEST_LENGTH)
        }
    }

    public static func hex(_ data: Data) -> String { hexString(digest(data)) }

    public static func hexString(_ bytes: [UInt8]) -> String {
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
