import CCurl
import Foundation
import LLVSSupport

/// A server's public key as the SSH handshake gave it, named as OpenSSH names keys: its type (`ssh-ed25519`) and the
/// SHA-256 fingerprint `ssh-keygen -l` prints (`SHA256:` and the unpadded base64 of the digest of the key's blob).
struct SFTPHostKey: Sendable, Equatable {
    var type: String
    var fingerprint: String

    init(blob: [UInt8]) {
        fingerprint = Self.fingerprint(blob: blob)
        // The blob starts with its type as an SSH string: a 4-byte big-endian length and the name.
        if blob.count >= 4 {
            let length = Int(blob[0]) << 24 | Int(blob[1]) << 16 | Int(blob[2]) << 8 | Int(blob[3])
            if length > 0, length <= 64, blob.count >= 4 + length {
                type = String(decoding: blob[4..<(4 + length)], as: UTF8.self)
                return
            }
        }
        type = "unknown"
    }

    /// The key libcurl found, whose bytes are raw when it gives a length and base64 text when it does not.
    init?(_ key: curl_khkey) {
        guard let pointer = key.key else { return nil }
        if key.len > 0 {
            self.init(blob: [UInt8](UnsafeRawBufferPointer(start: pointer, count: key.len)))
        } else {
            guard let data = Data(base64Encoded: String(cString: pointer)) else { return nil }
            self.init(blob: [UInt8](data))
        }
    }

    static func fingerprint(blob: [UInt8]) -> String {
        let digest = blob.withUnsafeBytes { SHA256.digest(raw: $0) }
        return "SHA256:" + Data(digest).base64EncodedString().replacingOccurrences(of: "=", with: "")
    }
}

/// What the host-key check decided for a new connection, and why, kept for the error it becomes.
enum SFTPHostKeyVerdict: Sendable, Equatable {
    case accepted
    case unknown(SFTPHostKey)
    case changed(SFTPHostKey)
}
