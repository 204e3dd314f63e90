import CCrypto
import Foundation
import LLVSSupport

/// Proof Key for Code Exchange (RFC 7636, S256) and the random `state`, from libcrypto's random bytes.
public struct PKCE: Sendable {
    public let verifier: String
    public var challenge: String { Self.base64URL(Data(SHA256.digest(Data(verifier.utf8)))) }

    public init() { verifier = Self.base64URL(Self.randomBytes(32)) }
    public init(verifier: String) { self.verifier = verifier }

    public static func randomBytes(_ count: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: count)
        if RAND_bytes(&bytes, Int32(count)) != 1 {
            var generator = SystemRandomNumberGenerator()
            bytes = bytes.map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        return Data(bytes)
    }

    public static func base64URL(_ data: Data) -> String {
        data.base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
            .replacingOccurrences(of: "=", with: "")
    }

    /// Compares without stopping at the first difference, so timing does not reveal how much of a secret matched.
    public static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        return zip(x, y).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }
}
