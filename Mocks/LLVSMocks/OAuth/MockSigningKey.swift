import CCrypto
import Foundation
import LLVSHTTP

/// The RSA key a mock identity provider signs its `id_token`s with (RS256), published as a JSON Web Key Set at the
/// discovery document's `jwks_uri`, as Microsoft publishes its keys: a library that verifies signatures can. Made
/// once per process (2048 bits take a moment), on first use.
// @unchecked: it holds an OpenSSL key (a C handle), made once in `init` and only read after; signing with one
// EVP_PKEY from several threads is safe, as each signature has an EVP_MD_CTX of its own.
final class MockSigningKey: @unchecked Sendable {
    static let shared = MockSigningKey()

    let keyID = "llvs-mock-signing-key"
    private let key: OpaquePointer?
    /// The public key as a JWK: modulus and exponent, base64url.
    let jwk: [String: String]

    private init() {
        var made: OpaquePointer?
        if let context = EVP_PKEY_CTX_new_from_name(nil, "RSA", nil) {
            if EVP_PKEY_keygen_init(context) == 1, EVP_PKEY_CTX_set_rsa_keygen_bits(context, 2048) == 1 {
                _ = EVP_PKEY_generate(context, &made)
            }
            EVP_PKEY_CTX_free(context)
        }
        key = made
        func parameter(_ name: String) -> String {
            var number: OpaquePointer?
            guard let made, EVP_PKEY_get_bn_param(made, name, &number) == 1, let number else { return "" }
            defer { BN_free(number) }
            var bytes = [UInt8](repeating: 0, count: (Int(BN_num_bits(number)) + 7) / 8)
            _ = BN_bn2bin(number, &bytes)
            return PKCE.base64URL(Data(bytes))
        }
        jwk = ["kty": "RSA", "use": "sig", "alg": "RS256", "kid": keyID, "n": parameter("n"), "e": parameter("e")]
    }

    /// The RS256 signature (RSASSA-PKCS1-v1_5 over SHA-256) of `message`, base64url; empty if OpenSSL failed.
    func sign(_ message: Data) -> String {
        guard let key, let context = EVP_MD_CTX_new() else { return "" }
        defer { EVP_MD_CTX_free(context) }
        guard EVP_DigestSignInit(context, nil, EVP_sha256(), nil, key) == 1 else { return "" }
        var length = 0
        let signed = message.withUnsafeBytes { input -> Data? in
            let bytes = input.bindMemory(to: UInt8.self).baseAddress
            guard EVP_DigestSign(context, nil, &length, bytes, input.count) == 1 else { return nil }
            var signature = [UInt8](repeating: 0, count: length)
            guard EVP_DigestSign(context, &signature, &length, bytes, input.count) == 1 else { return nil }
            return Data(signature.prefix(length))
        }
        return signed.map(PKCE.base64URL) ?? ""
    }

    /// The key set served at `jwks_uri`.
    var keySet: [String: Any] { ["keys": [jwk]] }
}
