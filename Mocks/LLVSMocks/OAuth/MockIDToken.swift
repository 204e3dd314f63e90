import Foundation
import LLVSHTTP

/// The OpenID Connect `id_token` and Microsoft's `client_info` a token answer carries when `openid` was granted:
/// libraries (msal) read the account from them, so the mock's are JWTs with the claims those libraries look for,
/// signed (RS256) with the key published at the discovery document's `jwks_uri` (`MockSigningKey`).
enum MockIDToken {
    static let tenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
    static let objectID = "00000000-0000-0000-66f3-3332eca7ea81"

    static func make(issuer: String, audience: String, issuedAt: Date, lifetime: TimeInterval, nonce: String?) -> String
    {
        let key = MockSigningKey.shared
        let header = ["typ": "JWT", "alg": "RS256", "kid": key.keyID]
        let issued = Int(issuedAt.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": issuer, "aud": audience, "iat": issued, "nbf": issued, "exp": issued + Int(lifetime),
            "sub": "llvs-mock-subject", "oid": objectID, "tid": tenant, "ver": "2.0",
            "name": "LLVS Mock", "preferred_username": "llvs-mock@example.com",
        ]
        if let nonce { claims["nonce"] = nonce }
        let signed = [header as [String: Any], claims].map { part in
            PKCE.base64URL((try? JSONSerialization.data(withJSONObject: part, options: [.sortedKeys])) ?? Data())
        }.joined(separator: ".")
        return signed + "." + key.sign(Data(signed.utf8))
    }

    /// `client_info`: base64url of `{"uid","utid"}` (the user's object ID and tenant), msal's home account ID.
    static var clientInfo: String {
        PKCE.base64URL(
            (try? JSONSerialization.data(withJSONObject: ["uid": objectID, "utid": tenant], options: [.sortedKeys]))
                ?? Data())
    }
}
