import CCrypto
import Foundation

/// HMAC-SHA256 on libcrypto: the keyed hash AWS Signature Version 4 chains to derive its signing key and sign.
public enum HMACSHA256 {
    public static func mac(key: [UInt8], _ message: [UInt8]) -> [UInt8] {
        var out = [UInt8](repeating: 0, count: 32)
        var length: UInt32 = 0
        key.withUnsafeBufferPointer { keyBytes in
            message.withUnsafeBufferPointer { messageBytes in
                _ = HMAC(
                    EVP_sha256(), keyBytes.baseAddress, Int32(keyBytes.count), messageBytes.baseAddress,
                    messageBytes.count, &out, &length)
            }
        }
        return Array(out.prefix(Int(length)))
    }

    public static func mac(key: [UInt8], _ message: String) -> [UInt8] { mac(key: key, Array(message.utf8)) }
}
