import Foundation
import LLVSHTTP

/// The OpenID Connect `id_token` and Microsoft's `client_info` a token answer carries when `openid` was granted:
/// libraries (msal) read the account from them (unverified, as they read it for the cache), so the mock's are
/// well-formed JWTs with the claims those libraries look for, signed with nothing.
enum MockIDToken {
    static let tenant = "9188040d-6c67-4c5b-b112-36a304b66dad"
    static let objectID = "00000000-0000-0000-66f3-3332eca7ea81"

    static func make(issuer: String, audience: String, issuedAt: Date, lifetime: TimeInterval, nonce: String?) -> String
    {
        let header = ["typ": "JWT", "alg": "none"]
        let issued = Int(issuedAt.timeIntervalSince1970)
        var claims: [String: Any] = [
            "iss": issuer, "aud": audience, "iat": issued, "nbf": issued, "exp": issued + Int(lifetime),
            "sub": "llvs-mock-subject", "oid": objectID, "tid": tenant, "ver": "2.0",
            "name": "LLVS Mock", "preferred_username": "llvs-mock@example.com",
        ]
        if let nonce { claims["nonce"] = nonce }
        return [header as [String: Any], claims].map { part in
            PKCE.base64URL((try? JSONSerialization.data(withJSONObject: part, options: [.sortedKeys])) ?? Data())
        }.joined(separator: ".") + "."
    }

    /// `client_info`: base64url of `{"uid","utid"}` (the user's object ID and tenant), msal's home account ID.
    static var clientInfo: String {
        PKCE.base64URL(
            (try? JSONSerialization.data(withJSONObject: ["uid": objectID, "utid": tenant], options: [.sortedKeys]))
                ?? Data())
    }
}
