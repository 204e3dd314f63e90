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

    public static func digest(raw: UnsafeRawBufferPointer) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: Int(SHA256_DIGEST_LENGTH))
        _ = CCrypto.SHA256(raw.baseAddress?.assumingMemoryBound(to: UInt8.self), raw.count, &out)
        return out
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
