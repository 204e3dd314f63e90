"""Meets each named fault of a mock (`llvs-mock SERVICE --list-faults`) through the service's own client library, as
a user's test harness would: the fault is injected into the running mock through its control path (POST a
`--faults` spec to /llvs-mock/faults), then the library does what meets it. A transient fault must be waited out by
the library (it retries, and the call succeeds) or come back as the library's own error with the service's reason; a
final one as that error. So each fault the mock lists is what the real service sends, in a form the library
understands.

usage: python named_faults_client_library.py SERVICE BASE_URL TOKEN [CLIENT_ID SECRET REFRESH_TOKEN]
       python named_faults_client_library.py nextcloud|webdav BASE_URL USER PASSWORD SERVER_OR_DAV_URL
       (SERVICE box, dropbox, gdrive, onedrive or pcloud; prints "ok" and exits 0 when every fault was met as the service's own)
"""
import io
import os
import sys
import warnings

import requests


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def inject(base, spec):
    answer = requests.post(base + "/llvs-mock/faults", data=spec)
    check(answer.status_code == 204, f"the mock takes the fault {spec}: {answer.status_code} {answer.text}")


def box(base, token, client_id, secret, refresh):
    from box_sdk_gen import (AccessToken, BaseUrls, BoxAPIError, BoxClient, BoxDeveloperTokenAuth, BoxOAuth,
                             InMemoryTokenStorage, NetworkSession, OAuthConfig)
    from box_sdk_gen.managers.folders import CreateFolderParent
    from box_sdk_gen.managers.uploads import UploadFileAttributes, UploadFileAttributesParentField

    session = NetworkSession(base_urls=BaseUrls(base_url=base, upload_url=base + "/api", oauth_2_url=base + "/api/oauth2"))
    client = BoxClient(BoxDeveloperTokenAuth(token=token), network_session=session)
    folder = client.folders.create_folder(f"named-faults-{os.getpid()}", CreateFolderParent(id="0"))

    def upload(name, data):
        return client.uploads.upload_file(
            UploadFileAttributes(name=name, parent=UploadFileAttributesParentField(id=folder.id)), io.BytesIO(data)).entries[0]

    def fails(call, status, code, what):
        try:
            call()
            check(False, f"{what}: the call should fail")
        except BoxAPIError as error:
            info = error.response_info
            check(info.status_code == status and info.code == code, f"{what}: {status} {code}, got {info.status_code} {info.code}")

    # Transient: the SDK waits out a 429 with retry-after and retries.
    inject(base, "rate-limited")
    check(client.users.get_user_me().id, "rate-limited: the SDK retries and succeeds")
    # Another client made the name first: the SDK's error carries item_name_in_use, and the name is taken.
    inject(base, "name-in-use")
    fails(lambda: client.folders.create_folder("contested", CreateFolderParent(id=folder.id)), 409, "item_name_in_use",
          "name-in-use")
    names = [item.name for item in client.folders.get_folder_items(folder.id).entries]
    check("contested" in names, f"name-in-use: the other client's folder is there: {names}")
    # A commit met while the parts are still processed (202, Retry-After): the SDK's chunked upload commits again
    # and ends with the file.
    data = os.urandom(20 * 1024 * 1024 + 5)
    inject(base, "commit-processing")
    made = client.chunked_uploads.upload_big_file(io.BytesIO(data), "processing.bin", len(data), folder.id)
    check(made.size == len(data), f"commit-processing: the SDK's chunked upload ends with the file: {made}")
    # A commit refused right after the last part (Box has not seen it yet): this SDK does not commit again, and says
    # why in its own error.
    inject(base, "parts-mismatch")
    fails(lambda: client.chunked_uploads.upload_big_file(io.BytesIO(data), "mismatch.bin", len(data), folder.id),
          400, "parts_mismatch", "parts-mismatch")
    # Final: the account is full.
    inject(base, "storage-full")
    fails(lambda: upload("full.bin", b"x" * 1000), 403, "storage_limit_exceeded", "storage-full")
    # Eventual consistency: readable at once, missing from the folder's next two listings.
    inject(base, "listing-lag")
    lagging = upload("lagging.bin", b"y" * 1000)
    check(client.files.get_file_by_id(lagging.id).size == 1000, "listing-lag: the new file is readable at once")
    seen = [any(item.name == "lagging.bin" for item in client.folders.get_folder_items(folder.id).entries) for _ in range(3)]
    check(seen == [False, False, True], f"listing-lag: missing from the next two listings, then there: {seen}")
    # Final: the refresh token was revoked.
    inject(base, "invalid-grant")
    auth = BoxOAuth(OAuthConfig(client_id=client_id, client_secret=secret,
                                token_storage=InMemoryTokenStorage(token=AccessToken(access_token="x", refresh_token=refresh))))
    try:
        auth.refresh_token(network_session=session)
        check(False, "invalid-grant: the refresh should fail")
    except BoxAPIError as error:
        check(error.response_info.status_code == 400 and "invalid_grant" in str(error.response_info.body),
              f"invalid-grant: the SDK's error with invalid_grant: {error}")


def gdrive(base, token, client_id, secret, refresh):
    import json

    from google.auth.exceptions import RefreshError
    from google.auth.transport.requests import Request
    from google.oauth2.credentials import Credentials
    from googleapiclient.discovery import build_from_document
    from googleapiclient.discovery_cache import get_static_doc
    from googleapiclient.errors import HttpError
    from googleapiclient.http import MediaIoBaseUpload

    document = json.loads(get_static_doc("drive", "v3"))
    document["rootUrl"] = base + "/"
    document["baseUrl"] = base + "/" + document["servicePath"]
    drive = build_from_document(document, credentials=Credentials(token=token))
    folder = drive.files().create(body={"name": f"named-faults-{os.getpid()}",
                                        "mimeType": "application/vnd.google-apps.folder"}, fields="id").execute()

    def upload(name):
        media = MediaIoBaseUpload(io.BytesIO(b"z" * 1000), mimetype="application/octet-stream", resumable=False)
        return drive.files().create(body={"name": name, "parents": [folder["id"]]}, media_body=media, fields="id").execute()

    def listed():
        query = f"'{folder['id']}' in parents and trashed = false"
        return [item["name"] for item in drive.files().list(q=query, fields="files(name)").execute()["files"]]

    def fails(call, status, reason, what):
        try:
            call()
            check(False, f"{what}: the call should fail")
        except HttpError as error:
            reasons = [detail.get("reason") for detail in error.error_details or []]
            check(error.resp.status == status and reason in reasons, f"{what}: {status} {reason}, got {error.resp.status} {reasons}")

    # Transient: the client retries these when asked to (num_retries), 403 rate limits included, and succeeds.
    for fault in ["user-rate-limit", "rate-limit", "too-many-requests", "backend-error"]:
        inject(base, fault)
        about = drive.about().get(fields="user").execute(num_retries=3)
        check("user" in about, f"{fault}: the client retries and succeeds")
    # Final: not retried, the reason in the client's error.
    inject(base, "daily-limit")
    fails(lambda: drive.about().get(fields="user").execute(num_retries=3), 403, "dailyLimitExceeded", "daily-limit")
    inject(base, "storage-quota")
    fails(lambda: upload("full.bin"), 403, "storageQuotaExceeded", "storage-quota")
    inject(base, "listing-lag")
    lagging = upload("lagging.bin")
    check(drive.files().get(fileId=lagging["id"], fields="size").execute()["size"] == "1000", "listing-lag: readable at once")
    seen = ["lagging.bin" in listed() for _ in range(3)]
    check(seen == [False, False, True], f"listing-lag: missing from the next two listings, then there: {seen}")
    inject(base, "invalid-grant")
    credentials = Credentials(token=None, refresh_token=refresh, token_uri=base + "/token", client_id=client_id,
                              client_secret=secret)
    try:
        credentials.refresh(Request())
        check(False, "invalid-grant: the refresh should fail")
    except RefreshError as error:
        check("invalid_grant" in str(error), f"invalid-grant: google-auth's RefreshError with invalid_grant: {error}")


def onedrive(base, token, client_id, secret, refresh):
    import asyncio
    import urllib.parse

    import httpx
    import msal
    from kiota_abstractions.authentication import (AccessTokenProvider, AllowedHostsValidator,
                                                   BaseBearerTokenAuthenticationProvider)
    from msgraph import GraphRequestAdapter, GraphServiceClient
    from msgraph.generated.drives.item.items.item.create_upload_session.create_upload_session_post_request_body import (
        CreateUploadSessionPostRequestBody)
    from msgraph.generated.models.drive_item import DriveItem
    from msgraph.generated.models.folder import Folder
    from msgraph.generated.models.o_data_errors.o_data_error import ODataError

    host = urllib.parse.urlsplit(base).hostname

    class StaticToken(AccessTokenProvider):
        def __init__(self):
            self.validator = AllowedHostsValidator([host])

        async def get_authorization_token(self, uri, additional_authentication_context=None):
            return token if self.validator.is_url_host_valid(uri) else ""

        def get_allowed_hosts_validator(self):
            return self.validator

    async def drill():
        adapter = GraphRequestAdapter(BaseBearerTokenAuthenticationProvider(StaticToken()))
        adapter.base_url = base + "/v1.0"
        client = GraphServiceClient(request_adapter=adapter)
        drive = await client.me.drive.get()
        items = client.drives.by_drive_id(drive.id).items
        root = await client.drives.by_drive_id(drive.id).root.get()
        folder = await items.by_drive_item_id(root.id).children.post(DriveItem(name=f"named-faults-{os.getpid()}", folder=Folder()))

        async def fails(call, status, code, what):
            try:
                await call()
                check(False, f"{what}: the call should fail")
            except ODataError as error:
                check(error.response_status_code == status and error.error.code == code,
                      f"{what}: {status} {code}, got {error.response_status_code} {error.error.code}")

        # Transient: the SDK's retry handler waits them out (Retry-After, or its own delay) and the call succeeds.
        for fault in ["throttled", "throttled-no-retry-after", "unavailable"]:
            inject(base, fault)
            check((await client.me.drive.get()).id == drive.id, f"{fault}: the SDK retries and succeeds")
        # Upload-session fragments go without the SDK (its large-file task cannot read Graph's ranges): what Graph
        # answers there is what a client reads.
        session = await items.by_drive_item_id(f"{folder.id}:/session.bin:").create_upload_session.post(
            CreateUploadSessionPostRequestBody())
        async with httpx.AsyncClient() as http:
            for fault, status, code in [("upload-session-gone", 404, "itemNotFound"), ("wrong-range", 416, "invalidRange")]:
                inject(base, fault)
                answer = await http.put(session.upload_url, content=b"abc", headers={"Content-Range": "bytes 0-2/6"})
                check(answer.status_code == status and answer.json()["error"]["code"] == code,
                      f"{fault}: {status} {code}, got {answer.status_code} {answer.text}")
        # Final: the drive is full.
        inject(base, "quota-full")
        await fails(lambda: items.by_drive_item_id(f"{folder.id}:/full.bin:").content.put(b"x" * 1000), 507,
                    "quotaLimitReached", "quota-full")
        inject(base, "listing-lag")
        lagging = await items.by_drive_item_id(f"{folder.id}:/lagging.bin:").content.put(b"y" * 1000)
        check((await items.by_drive_item_id(lagging.id).get()).size == 1000, "listing-lag: readable at once")
        seen = []
        for _ in range(3):
            listed = await items.by_drive_item_id(folder.id).children.get()
            seen.append(any(item.name == "lagging.bin" for item in listed.value))
        check(seen == [False, False, True], f"listing-lag: missing from the next two listings, then there: {seen}")

    asyncio.run(drill())

    # Final: the refresh token was revoked; msal reads Microsoft's error (it speaks only https: see PlainHTTP).
    class PlainHTTP(requests.Session):
        def request(self, method, url, *args, **kwargs):
            headers = dict(kwargs.pop("headers", None) or {})
            headers["X-Forwarded-Proto"] = "https"
            return super().request(method, url.replace("https://", "http://", 1), *args, headers=headers, **kwargs)

    netloc = urllib.parse.urlsplit(base).netloc
    app = msal.PublicClientApplication(client_id, authority=f"https://{netloc}/consumers", http_client=PlainHTTP(),
                                       instance_discovery=False)
    inject(base, "invalid-grant")
    result = app.acquire_token_by_refresh_token(refresh, scopes=["Files.ReadWrite"])
    check(result.get("error") == "invalid_grant", f"invalid-grant: msal's answer has invalid_grant: {result}")


def pcloud(base, token, *_):
    from pcloud import PyCloud

    cloud = PyCloud("", token, endpoint="api", oauth2=True)
    cloud.endpoint = base + "/"
    folder = cloud.createfolder(folderid=0, name=f"named-faults-{os.getpid()}")["metadata"]

    def upload(name):
        return cloud.uploadfile(data=b"p" * 1000, filename=name, folderid=folder["folderid"])

    # pCloud answers HTTP 200 with a result code; the library hands the answer back as it is. A transient code is
    # the client's to try again, and the same call then succeeds.
    for fault, code, call in [("too-many-logins", 4000, lambda: cloud.userinfo()),
                              ("internal-error", 5000, lambda: cloud.userinfo()),
                              ("upload-error", 5001, lambda: upload("retried.bin"))]:
        inject(base, fault)
        first = call()
        check(first.get("result") == code and first.get("error"), f"{fault}: result {code} with an error: {first}")
        check(call().get("result") == 0, f"{fault}: the call made again succeeds")
    inject(base, "over-quota")
    full = upload("full.bin")
    check(full.get("result") == 2008, f"over-quota: result 2008: {full}")
    inject(base, "listing-lag")
    lagging = upload("lagging.bin")["metadata"][0]
    check(cloud.stat(fileid=lagging["fileid"]).get("result") == 0, "listing-lag: readable at once")
    seen = [any(item["name"] == "lagging.bin" for item in cloud.listfolder(folderid=folder["folderid"])["metadata"]["contents"])
            for _ in range(3)]
    check(seen == [False, False, True], f"listing-lag: missing from the next two listings, then there: {seen}")
    inject(base, "token-revoked")
    revoked = cloud.userinfo()
    check(revoked.get("result") == 2094, f"token-revoked: result 2094: {revoked}")


def dropbox_sdk(base, token, client_id, secret, refresh):
    from urllib.parse import urlsplit

    from tls_proxy import TLSProxy

    with TLSProxy(urlsplit(base).port) as proxy:
        for name in ("DROPBOX_API_HOST", "DROPBOX_API_CONTENT_HOST", "DROPBOX_API_NOTIFY_HOST"):
            os.environ[name] = proxy.host
        os.environ["REQUESTS_CA_BUNDLE"] = proxy.certificate
        import dropbox
        from dropbox.exceptions import ApiError, AuthError
        from dropbox.files import UploadSessionCursor

        dbx = dropbox.Dropbox(oauth2_access_token=token, oauth2_refresh_token=refresh, app_key=client_id)
        folder = f"/named-faults-{os.getpid()}"

        # Waited out by the SDK itself: 429s for their Retry-After, 5xx with backoff, an expired token by a refresh.
        for fault in ["too-many-requests", "too-many-write-operations", "unavailable", "expired-token"]:
            inject(base, fault)
            stored = dbx.files_upload(fault.encode(), f"{folder}/{fault}.txt")
            check(stored.size == len(fault), f"{fault}: the upload goes through")

        # Final for one call, in the SDK's own error types, with Dropbox's reason.
        inject(base, "write-contention")
        try:
            dbx.files_upload(b"w", f"{folder}/contended.txt")
            check(False, "write-contention: the upload should be refused")
        except ApiError as error:
            check(error.error.is_path() and error.error.get_path().reason.is_too_many_write_operations(),
                  f"write-contention: path/too_many_write_operations: {error}")
        check(dbx.files_upload(b"w", f"{folder}/contended.txt").size == 1, "write-contention: the retry goes through")
        inject(base, "insufficient-space")
        try:
            dbx.files_upload(b"full", f"{folder}/full.txt")
            check(False, "insufficient-space: the upload should be refused")
        except ApiError as error:
            check(error.error.is_path() and error.error.get_path().reason.is_insufficient_space(),
                  f"insufficient-space: path/insufficient_space: {error}")

        page = dbx.files_list_folder(folder, limit=1)
        inject(base, "cursor-reset")
        try:
            dbx.files_list_folder_continue(page.cursor)
            check(False, "cursor-reset: continue should be refused")
        except ApiError as error:
            check(error.error.is_reset(), f"cursor-reset: reset: {error}")

        piece = b"a" * 1000
        session = dbx.files_upload_session_start(piece)
        cursor = UploadSessionCursor(session_id=session.session_id, offset=len(piece))
        inject(base, "append-answer-lost")
        try:
            dbx.files_upload_session_append_v2(piece, cursor)
            check(False, "append-answer-lost: the answer should be lost")
        except requests.exceptions.ConnectionError:
            pass
        try:
            dbx.files_upload_session_append_v2(piece, cursor)
            check(False, "append-answer-lost: the repeat should meet incorrect_offset")
        except ApiError as error:
            check(error.error.is_incorrect_offset()
                  and error.error.get_incorrect_offset().correct_offset == 2 * len(piece),
                  f"append-answer-lost: the session holds the lost append: {error}")

        inject(base, "listing-lag")
        lagging = dbx.files_upload(b"lag", f"{folder}/lagging.txt")
        check(dbx.files_get_metadata(lagging.path_lower).size == 3, "listing-lag: readable at once")
        seen = [any(entry.name == "lagging.txt" for entry in dbx.files_list_folder(folder).entries) for _ in range(3)]
        check(seen == [False, False, True], f"listing-lag: missing from the next two listings, then there: {seen}")

        inject(base, "invalid-grant")
        try:
            dbx.refresh_access_token()
            check(False, "invalid-grant: the refresh should be refused")
        except AuthError as error:
            check(error.error.is_invalid_access_token(), f"invalid-grant: the SDK's AuthError: {error}")


def nextcloud(base, user, password, server, *_):
    from nc_py_api import Nextcloud, NextcloudException

    warnings.simplefilter("ignore", DeprecationWarning)
    nc = Nextcloud(nextcloud_url=server, nc_auth_user=user, nc_auth_pass=password)
    folder = f"named-faults-{os.getpid()}"
    nc.files.mkdir(folder)

    def fails(call, status, what):
        try:
            call()
            check(False, f"{what}: the call should fail")
        except NextcloudException as error:
            check(error.status_code == status, f"{what}: {status}, got {error.status_code} {error}")

    # Transient: the library does not retry; it says what the server said, and the call made again succeeds.
    for fault, status in [("locked", 423), ("maintenance", 503), ("too-many-requests", 429)]:
        inject(base, fault)
        fails(lambda: nc.files.upload(f"{folder}/{fault}.txt", b"n" * 100), status, fault)
        nc.files.upload(f"{folder}/{fault}.txt", b"n" * 100)
        check(nc.files.download(f"{folder}/{fault}.txt") == b"n" * 100, f"{fault}: made again, it succeeds")
    # The assembly of a chunked upload is done, but answered 423: the file is there whole, the upload gone.
    data = os.urandom(6 * 1024 * 1024 + 7)
    inject(base, "assembly-locked")
    fails(lambda: nc.files.upload_stream(f"{folder}/assembled.bin", io.BytesIO(data), chunk_size=5 * 1024 * 1024), 423,
          "assembly-locked")
    check(nc.files.download(f"{folder}/assembled.bin") == data, "assembly-locked: the file is whole after all")
    # Final.
    for fault, status in [("insufficient-storage", 507), ("too-large", 413)]:
        inject(base, fault)
        fails(lambda: nc.files.upload(f"{folder}/{fault}.bin", b"f" * 1000), status, fault)
    inject(base, "listing-lag")
    nc.files.upload(f"{folder}/lagging.bin", b"l" * 1000)
    check(nc.files.download(f"{folder}/lagging.bin") == b"l" * 1000, "listing-lag: readable at once")
    seen = [any(node.name == "lagging.bin" for node in nc.files.listdir(folder)) for _ in range(3)]
    check(seen == [False, False, True], f"listing-lag: missing from the next two listings, then there: {seen}")


def webdav(base, user, password, url, *_):
    from webdav4.client import Client, ClientError, HTTPError, InsufficientStorage, ResourceLocked

    client = Client(url, auth=(user, password))
    folder = f"named-faults-{os.getpid()}"
    client.mkdir(folder)

    def upload(name, data=b"w" * 1000):
        client.upload_fileobj(io.BytesIO(data), f"{folder}/{name}", overwrite=True)

    def read(name):
        data = io.BytesIO()
        client.download_fileobj(f"{folder}/{name}", data)
        return data.getvalue()

    def status_of(call):
        """The status the library's error carries (its ResourceLocked is a 423, InsufficientStorage a 507), or None when
        the call succeeded."""
        try:
            call()
            return None
        except ResourceLocked:
            return 423
        except InsufficientStorage:
            return 507
        except HTTPError as error:
            return error.status_code
        except ClientError as error:
            return getattr(error, "status_code", str(error))

    # Transient: said as the server's status (or waited out), and the call made again succeeds.
    for fault, status in [("locked", 423), ("unavailable", 503), ("too-many-requests", 429)]:
        inject(base, fault)
        met = status_of(lambda: upload(f"{fault}.bin"))
        check(met in (status, None), f"{fault}: {status} or waited out, got {met}")
        upload(f"{fault}.bin")
        check(read(f"{fault}.bin") == b"w" * 1000, f"{fault}: made again, it is there")
    for fault, status in [("insufficient-storage", 507), ("too-large", 413)]:
        inject(base, fault)
        met = status_of(lambda: upload(f"{fault}.bin"))
        check(met == status, f"{fault}: {status}, got {met}")
    inject(base, "listing-lag")
    upload("lagging.bin")
    check(read("lagging.bin") == b"w" * 1000, "listing-lag: readable at once")
    seen = [any(entry["name"].rstrip("/").endswith("lagging.bin") for entry in client.ls(folder)) for _ in range(3)]
    check(seen == [False, False, True], f"listing-lag: missing from the next two listings, then there: {seen}")


def main():
    service, base, token = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
    extra = sys.argv[4:7] + [""] * (3 - len(sys.argv[4:7]))
    drills = {"box": box, "dropbox": dropbox_sdk, "gdrive": gdrive, "onedrive": onedrive, "pcloud": pcloud, "nextcloud": nextcloud,
              "webdav": webdav}
    if service not in drills:
        raise SystemExit(f"failed: unknown service {service}")
    drills[service](base, token, *extra)
    print("ok")


if __name__ == "__main__":
    main()
