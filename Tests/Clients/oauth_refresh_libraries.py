"""Refreshes tokens against a mock's OAuth endpoints through the service's own client library, as a user's client
does: Google's google-auth (a refresh token that stays the same), Microsoft's msal (discovery, a device flow finished
on the mock's verification page, the account found from id_token and client_info, a silent refresh that rotates the
refresh token, a secret a public client must not send), Box's SDK (an authorization code, single-use refresh tokens).
A refused refresh token must come back as the library's own error. Where a library and the mock disagree, the mock
is wrong.

usage: python oauth_refresh_libraries.py gdrive|onedrive|box BASE_URL CLIENT_ID CLIENT_SECRET REFRESH_TOKEN
       (prints "ok" and exits 0 when every step held)
"""
import hashlib
import os
import sys
import urllib.parse

import requests


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def google(base, client_id, secret, refresh):
    from google.auth.exceptions import RefreshError
    from google.auth.transport.requests import Request
    from google.oauth2.credentials import Credentials

    credentials = Credentials(token=None, refresh_token=refresh, token_uri=base + "/token", client_id=client_id, client_secret=secret)
    credentials.refresh(Request())
    check(credentials.token and credentials.expiry, "google-auth refreshes and knows when the token expires")
    check(credentials.refresh_token == refresh, "Google keeps the refresh token the same")
    first = credentials.token
    credentials.refresh(Request())
    check(credentials.token != first, "a second refresh with the same refresh token works and gives a new token")
    answer = requests.get(base + "/drive/v3/about", params={"fields": "user"}, headers={"Authorization": "Bearer " + credentials.token})
    check(answer.status_code == 200, f"the refreshed token works on the API: {answer.status_code}")
    try:
        Credentials(token=None, refresh_token="revoked", token_uri=base + "/token", client_id=client_id, client_secret=secret).refresh(Request())
        check(False, "a revoked refresh token was accepted")
    except RefreshError as error:
        check("invalid_grant" in str(error), f"invalid_grant comes back as google-auth's RefreshError: {error}")


class PlainHTTP(requests.Session):
    """msal speaks only https to an authority; the mock listens in plain http on loopback. This session does what a
    TLS-terminating proxy in front of the mock would: the request goes on in http, saying `X-Forwarded-Proto: https`,
    so the mock writes its URLs as https."""

    def request(self, method, url, *args, **kwargs):
        headers = dict(kwargs.pop("headers", None) or {})
        headers["X-Forwarded-Proto"] = "https"
        return super().request(method, url.replace("https://", "http://", 1), *args, headers=headers, **kwargs)


def microsoft(base, client_id):
    import msal

    host = urllib.parse.urlsplit(base).netloc
    authority = f"https://{host}/consumers"
    app = msal.PublicClientApplication(client_id, authority=authority, http_client=PlainHTTP(), instance_discovery=False)
    scopes = ["Files.ReadWrite"]
    flow = app.initiate_device_flow(scopes=scopes)
    check("user_code" in flow and flow.get("message"), f"a device flow with a user code and a message: {flow}")
    # The person on the other device: opens the verification page and enters the code.
    browser = PlainHTTP()
    page = browser.get(flow["verification_uri"])
    check(page.status_code == 200 and "<form" in page.text, f"the verification page is served: {page.status_code}")
    approved = browser.post(flow["verification_uri"], data={"user_code": flow["user_code"]})
    check(approved.status_code == 200, f"entering the code approves it: {approved.status_code} {approved.text}")
    result = app.acquire_token_by_device_flow(flow)
    check("access_token" in result, f"the device flow ends with a token: {result}")
    accounts = app.get_accounts()
    check(len(accounts) == 1, f"msal finds the account from id_token and client_info: {accounts}")
    refresh_before = next(iter(app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)))["secret"]
    renewed = app.acquire_token_silent(scopes, account=accounts[0], force_refresh=True)
    check(renewed and "access_token" in renewed and renewed["access_token"] != result["access_token"], f"a silent refresh: {renewed}")
    refresh_after = next(iter(app.token_cache.find(msal.TokenCache.CredentialType.REFRESH_TOKEN)))["secret"]
    check(refresh_after != refresh_before, "Microsoft rotates the refresh token, and msal keeps the new one")
    drive = requests.get(base + "/v1.0/me/drive", headers={"Authorization": "Bearer " + renewed["access_token"]})
    check(drive.status_code == 200, f"the refreshed token works on Graph: {drive.status_code}")
    refused = app.acquire_token_by_refresh_token("revoked", scopes)
    check(refused.get("error") == "invalid_grant", f"a revoked refresh token is msal's invalid_grant: {refused}")
    confidential = msal.ConfidentialClientApplication(client_id, client_credential="a secret", authority=authority,
                                                      http_client=PlainHTTP(), instance_discovery=False)
    secret_sent = confidential.acquire_token_by_refresh_token(refresh_after, scopes)
    check(secret_sent.get("error") == "invalid_client" and "AADSTS700025" in secret_sent.get("error_description", ""),
          f"a public client that sends a secret is refused: {secret_sent}")

    # Sign-in by authorization code, as a desktop app does it: msal makes the authorize address (state, nonce, PKCE),
    # the browser follows it to the loopback redirect, and msal redeems the code, checking the id_token's nonce.
    by_code = msal.PublicClientApplication(client_id, authority=authority, http_client=PlainHTTP(), instance_discovery=False)
    flow = by_code.initiate_auth_code_flow(scopes, redirect_uri="http://localhost:8400")
    answer = PlainHTTP().get(flow["auth_uri"], allow_redirects=False)
    check(answer.status_code == 302, f"authorize redirects back: {answer.status_code} {answer.text}")
    response = dict(urllib.parse.parse_qsl(urllib.parse.urlsplit(answer.headers["Location"]).query))
    signed_in = by_code.acquire_token_by_auth_code_flow(flow, response)
    sent_nonce = hashlib.sha256(flow["nonce"].encode("ascii")).hexdigest()  # msal sends the nonce's hash
    check("access_token" in signed_in and signed_in.get("id_token_claims", {}).get("nonce") == sent_nonce,
          f"the code is redeemed and the id_token carries the nonce sent: {signed_in}")
    check(len(by_code.get_accounts()) == 1, "msal keeps the account the code signed in")
    # The id_token is signed with a key the discovery document publishes, and verifies as Microsoft's do (PyJWT).
    import jwt
    discovery = PlainHTTP().get(f"https://{host}/common/v2.0/.well-known/openid-configuration").json()
    keys = {key["kid"]: key for key in PlainHTTP().get(discovery["jwks_uri"]).json()["keys"]}
    header = jwt.get_unverified_header(signed_in["id_token"])
    check(header.get("alg") == "RS256" and header.get("kid") in keys, f"the id_token names a published RS256 key: {header}")
    verified = jwt.decode(signed_in["id_token"], jwt.PyJWK(keys[header["kid"]]).key, algorithms=["RS256"], audience=client_id)
    check(verified["nonce"] == sent_nonce, f"the verified claims: {verified}")
    tampered = signed_in["id_token"].rsplit(".", 1)[0] + "." + jwt.utils.base64url_encode(b"x" * 256).decode()
    try:
        jwt.decode(tampered, jwt.PyJWK(keys[header["kid"]]).key, algorithms=["RS256"], audience=client_id)
        check(False, "a wrong signature verifies")
    except jwt.InvalidSignatureError:
        pass
    # Microsoft checks PKCE when the authorize request gave a challenge, and does not demand one of a desktop app.
    bare = PlainHTTP().get(flow["auth_uri"].split("?")[0], allow_redirects=False, params={
        "client_id": client_id, "response_type": "code", "redirect_uri": "http://localhost:8400", "scope": "openid"})
    check(bare.status_code == 302, f"an authorize request without PKCE is answered: {bare.status_code} {bare.text}")


def box(base, client_id, secret, refresh):
    from box_sdk_gen import AccessToken, BaseUrls, BoxAPIError, BoxOAuth, InMemoryTokenStorage, NetworkSession, OAuthConfig

    session = NetworkSession(base_urls=BaseUrls(base_url=base, upload_url=base + "/api", oauth_2_url=base + "/api/oauth2"))
    # An authorization code, as the browser's redirect hands it back, exchanged by the SDK.
    redirect = "http://127.0.0.1:9/callback"
    answer = requests.get(base + "/api/oauth2/authorize", allow_redirects=False,
                          params={"client_id": client_id, "response_type": "code", "redirect_uri": redirect, "state": "s"})
    check(answer.status_code == 302, f"authorize redirects back: {answer.status_code} {answer.text}")
    code = urllib.parse.parse_qs(urllib.parse.urlsplit(answer.headers["Location"]).query)["code"][0]
    by_code = BoxOAuth(OAuthConfig(client_id=client_id, client_secret=secret))
    token = by_code.get_tokens_authorization_code_grant(code, network_session=session)
    check(token.access_token and token.refresh_token, "the SDK exchanges the code")

    storage = InMemoryTokenStorage(token=AccessToken(access_token="expired", refresh_token=refresh))
    auth = BoxOAuth(OAuthConfig(client_id=client_id, client_secret=secret, token_storage=storage))
    renewed = auth.refresh_token(network_session=session)
    check(renewed.access_token and renewed.refresh_token and renewed.refresh_token != refresh,
          "a refresh gives a new refresh token, and the SDK stores it")
    check(storage.get().refresh_token == renewed.refresh_token, "the SDK's storage holds the new refresh token")
    again = auth.refresh_token(network_session=session)
    check(again.refresh_token != renewed.refresh_token, "the stored (new) refresh token works once more")
    spent = BoxOAuth(OAuthConfig(client_id=client_id, client_secret=secret,
                                 token_storage=InMemoryTokenStorage(token=AccessToken(access_token="x", refresh_token=refresh))))
    try:
        spent.refresh_token(network_session=session)
        check(False, "a spent refresh token was accepted")
    except BoxAPIError as error:
        check(error.response_info.status_code == 400 and "invalid_grant" in str(error.response_info.body),
              f"a spent refresh token is the SDK's BoxAPIError with invalid_grant: {error}")


def dropbox_sdk(base, client_id, secret, refresh):
    from tls_proxy import TLSProxy

    with TLSProxy(urllib.parse.urlsplit(base).port) as proxy:
        # The SDK builds https://HOST URLs from these, read as it is imported; requests verifies with the bundle named here.
        for name in ("DROPBOX_API_HOST", "DROPBOX_API_CONTENT_HOST", "DROPBOX_API_NOTIFY_HOST", "DROPBOX_WEB_HOST"):
            os.environ[name] = proxy.host
        os.environ["REQUESTS_CA_BUNDLE"] = proxy.certificate
        import dropbox
        from dropbox.exceptions import AuthError
        from dropbox.oauth import DropboxOAuth2Flow

        session = {}
        flow = DropboxOAuth2Flow(client_id, "http://127.0.0.1:9/callback", session, "csrf-token", use_pkce=True,
                                 token_access_type="offline")
        url = flow.start()
        check("code_challenge=" in url and "token_access_type=offline" in url, f"the SDK asks with PKCE, offline: {url}")
        answer = requests.get(url, allow_redirects=False, verify=proxy.certificate)
        check(answer.status_code == 302, f"authorize redirects back: {answer.status_code} {answer.text}")
        fields = urllib.parse.parse_qs(urllib.parse.urlsplit(answer.headers["Location"]).query)
        result = flow.finish({"code": fields["code"][0], "state": fields["state"][0]})
        check(result.access_token and result.refresh_token and result.account_id and result.expires_at,
              f"the SDK exchanges the code with its verifier: {result}")

        dbx = dropbox.Dropbox(oauth2_refresh_token=result.refresh_token, app_key=client_id)
        check(dbx.users_get_current_account().account_id == result.account_id,
              "a client holding only the refresh token refreshes before its first call")
        dbx.refresh_access_token()
        check(dbx._oauth2_refresh_token == result.refresh_token, "Dropbox keeps the refresh token (no rotation)")
        check(dbx.users_get_current_account().account_id == result.account_id, "the refreshed token works")
        revoked = dropbox.Dropbox(oauth2_refresh_token="revoked-" + refresh, app_key=client_id)
        try:
            revoked.users_get_current_account()
            check(False, "a revoked refresh token was accepted")
        except AuthError as error:
            check(error.error.is_invalid_access_token(), f"a revoked refresh token is the SDK's AuthError: {error}")


def main():
    service, base, client_id, secret, refresh = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3], sys.argv[4], sys.argv[5]
    if service == "gdrive":
        google(base, client_id, secret, refresh)
    elif service == "onedrive":
        microsoft(base, client_id)
    elif service == "box":
        box(base, client_id, secret, refresh)
    elif service == "dropbox":
        dropbox_sdk(base, client_id, secret, refresh)
    else:
        raise SystemExit(f"failed: unknown service {service}")
    print("ok")


if __name__ == "__main__":
    main()
