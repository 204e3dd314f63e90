"""Drives the Google Drive mock with Google's own API client (google-api-python-client from PyPI, with its bundled
discovery document), as a user pointing their client at `llvs-mock gdrive` would: about, folders, both upload kinds
(multipart with the client's LF line endings, resumable in chunks), listing with paging, a query and an order, metadata with
the fields real clients ask for, ranged downloads, rename and move, copy, generated IDs, the changes feed, trash and
delete, empty trash, and the errors Drive gives. Where the library and the mock disagree, the mock is wrong.

usage: python drive_api_client.py ENDPOINT ACCESS_TOKEN      (prints "ok" and exits 0 when every step held)
"""
import hashlib
import io
import sys

from google.auth.exceptions import RefreshError
from google.oauth2.credentials import Credentials
import json

from googleapiclient.discovery import build_from_document
from googleapiclient.discovery_cache import get_static_doc
from googleapiclient.errors import HttpError
from googleapiclient.http import MediaIoBaseDownload, MediaIoBaseUpload


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def refused(call, status, what):
    try:
        call.execute()
    except HttpError as error:
        check(error.resp.status == status, f"{what}: status {error.resp.status}, expected {status}: {error}")
        return
    raise SystemExit(f"failed: {what} was accepted")


def client(root, token):
    """The client from its bundled discovery document with the mock as the root URL (how an emulator is reached:
    `api_endpoint` alone would leave uploads going to www.googleapis.com)."""
    document = json.loads(get_static_doc("drive", "v3"))
    document["rootUrl"] = root
    document["baseUrl"] = root + document["servicePath"]
    return build_from_document(document, credentials=Credentials(token=token))


def main():
    root, token = sys.argv[1].rstrip("/") + "/", sys.argv[2]
    drive = client(root, token)

    about = drive.about().get(fields="user(displayName,emailAddress),storageQuota,maxUploadSize").execute()
    check("emailAddress" in about["user"] and "usage" in about["storageQuota"], f"about: {about}")
    refused(drive.about().get(), 400, "about.get without fields")

    folder = drive.files().create(body={"name": "sdk", "mimeType": "application/vnd.google-apps.folder"}, fields="id,name,mimeType").execute()
    check(folder["mimeType"] == "application/vnd.google-apps.folder", f"folder: {folder}")
    other = drive.files().create(body={"name": "other", "mimeType": "application/vnd.google-apps.folder"}, fields="id").execute()

    small = b"hello from google-api-python-client\n"
    media = MediaIoBaseUpload(io.BytesIO(small), mimetype="text/plain", resumable=False)
    created = drive.files().create(body={"name": "small.txt", "parents": [folder["id"]], "description": "a note",
                                         "appProperties": {"origin": "sdk"}},
                                   media_body=media, fields="id,name,size,md5Checksum,mimeType,modifiedTime,parents").execute()
    check(int(created["size"]) == len(small) and created["md5Checksum"] == hashlib.md5(small).hexdigest(), f"multipart upload: {created}")
    check(created["modifiedTime"].endswith("Z"), f"times are RFC 3339 UTC: {created['modifiedTime']}")
    check(created["mimeType"] == "text/plain", f"the media part's type is the file's: {created}")
    kept = drive.files().get(fileId=created["id"], fields="description,appProperties").execute()
    check(kept.get("description") == "a note" and kept.get("appProperties") == {"origin": "sdk"}, f"writable metadata kept: {kept}")
    dated = drive.files().update(fileId=created["id"], body={"modifiedTime": "2020-02-02T02:02:02.000Z", "appProperties": {"origin": None}},
                                 fields="modifiedTime,appProperties").execute()
    check(dated["modifiedTime"] == "2020-02-02T02:02:02.000Z" and "appProperties" not in dated, f"modifiedTime set, property removed: {dated}")
    # Times come back to the millisecond they were sent with, whatever binary fraction the millisecond parses to.
    for stamp in ["2021-03-04T05:06:05.678Z", "2021-03-04T05:06:05.001Z", "2021-03-04T05:06:05.999Z", "2024-12-31T23:59:59.123Z"]:
        sent = drive.files().update(fileId=created["id"], body={"modifiedTime": stamp}, fields="modifiedTime").execute()
        read = drive.files().get(fileId=created["id"], fields="modifiedTime").execute()
        check(sent["modifiedTime"] == stamp and read["modifiedTime"] == stamp, f"modifiedTime {stamp} came back as {sent} and {read}")

    # rclone renames in place by adding and removing the same parent with a new name: the file stays where it was.
    inplace = drive.files().update(fileId=created["id"], body={"name": "in-place.txt"}, addParents=folder["id"],
                                   removeParents=folder["id"], fields="id,name,parents").execute()
    check(inplace["name"] == "in-place.txt" and inplace["parents"] == [folder["id"]], f"rename in place: {inplace}")
    listed = drive.files().list(q=f"'{folder['id']}' in parents and name = 'in-place.txt'", fields="files(id)").execute()["files"]
    check([f["id"] for f in listed] == [created["id"]], f"the file renamed in place is listed in its folder: {listed}")
    drive.files().update(fileId=created["id"], body={"name": "small.txt"}, fields="id").execute()

    big = bytes((i * 7 + 3) % 251 for i in range(1024 * 1024 + 12345))
    media = MediaIoBaseUpload(io.BytesIO(big), mimetype="application/octet-stream", chunksize=256 * 1024, resumable=True)
    request = drive.files().create(body={"name": "big.bin", "parents": [folder["id"]]}, media_body=media, fields="id,size,md5Checksum")
    response = None
    while response is None:
        _, response = request.next_chunk()
    check(int(response["size"]) == len(big) and response["md5Checksum"] == hashlib.md5(big).hexdigest(), f"resumable upload: {response}")

    # What rclone and other real clients ask for: every field must be known, even when the answer is empty.
    fields = "id,name,size,md5Checksum,sha1Checksum,sha256Checksum,resourceKey,shortcutDetails,exportLinks,webViewLink,capabilities"
    meta = drive.files().get(fileId=created["id"], fields=fields).execute()
    check(meta["id"] == created["id"], f"metadata: {meta}")
    refused(drive.files().get(fileId=created["id"], fields="id,noSuchField"), 400, "an unknown field")
    refused(drive.files().list(q="name = 'nothing at all'", fields="files(id,noSuchField)"), 400, "an unknown field on an empty answer")

    for i in range(5):
        drive.files().create(body={"name": f"page-{i}", "parents": [folder["id"]], "mimeType": "application/vnd.google-apps.folder"}, fields="id").execute()
    names = []
    request = drive.files().list(q=f"'{folder['id']}' in parents and trashed = false", pageSize=2, fields="nextPageToken,files(id,name)")
    while request is not None:
        page = request.execute()
        names += [f["name"] for f in page.get("files", [])]
        request = drive.files().list_next(request, page)
    check(sorted(names) == sorted(["small.txt", "big.bin"] + [f"page-{i}" for i in range(5)]), f"paged listing: {names}")

    ordered = drive.files().list(q=f"'{folder['id']}' in parents", orderBy="folder,name desc", fields="files(name)").execute()["files"]
    expected = [f"page-{i}" for i in reversed(range(5))] + ["small.txt", "big.bin"]
    check([f["name"] for f in ordered] == expected, f"orderBy folder,name desc: {ordered}")
    refused(drive.files().list(orderBy="size"), 400, "an unknown orderBy key")

    buffer = io.BytesIO()
    download = MediaIoBaseDownload(buffer, drive.files().get_media(fileId=response["id"]), chunksize=300 * 1024)
    done = False
    while not done:
        _, done = download.next_chunk()
    check(buffer.getvalue() == big, "ranged download in chunks")

    start = drive.changes().getStartPageToken().execute()["startPageToken"]
    renamed = drive.files().update(fileId=created["id"], body={"name": "renamed.txt"}, addParents=other["id"],
                                   removeParents=folder["id"], fields="id,name,parents").execute()
    check(renamed["name"] == "renamed.txt" and renamed["parents"] == [other["id"]], f"rename and move: {renamed}")
    refused(drive.files().update(fileId=created["id"], addParents=folder["id"]), 403, "a second parent")
    changes = drive.changes().list(pageToken=start, fields="newStartPageToken,nextPageToken,changes(fileId,removed,file(name,parents))").execute()
    check(any(c["fileId"] == created["id"] for c in changes["changes"]), f"changes: {changes}")

    copy = drive.files().copy(fileId=renamed["id"], body={"name": "copy.txt"}, fields="id,name,md5Checksum").execute()
    check(copy["id"] != renamed["id"] and copy["md5Checksum"] == hashlib.md5(small).hexdigest(), f"copy: {copy}")
    ids = drive.files().generateIds(count=3, space="drive").execute()
    check(len(ids["ids"]) == 3, f"generateIds: {ids}")

    drive.files().update(fileId=copy["id"], body={"trashed": True}).execute()
    drive.files().emptyTrash().execute()
    refused(drive.files().get(fileId=copy["id"]), 404, "an item removed with the trash")
    drive.files().delete(fileId=folder["id"]).execute()
    refused(drive.files().get(fileId=response["id"]), 404, "an item deleted with its folder")

    # A refused token: the library meets the 401 and, holding no refresh token, gives up with RefreshError.
    try:
        client(root, "not-a-token").files().list().execute()
        raise SystemExit("failed: a refused token was accepted")
    except RefreshError:
        pass
    print("ok")


if __name__ == "__main__":
    main()
