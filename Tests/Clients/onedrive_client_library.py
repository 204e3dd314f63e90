"""Drives the OneDrive mock with Microsoft's own Graph SDK for Python (msgraph-sdk), as a user pointing their client
at `llvs-mock onedrive` would: list, create a folder, a small upload, an upload session (created by the SDK; its
fragments sent with httpx, the SDK's own HTTP client, without a token, as Graph's documentation describes — the
SDK's LargeFileUploadTask cannot parse the documented `"nextExpectedRanges": ["26-"]` form, a known SDK bug), a
download (a 302 to another host), a PATCH that renames, moves and sets the file's time (`fileSystemInfo`), a
server-side copy read through its monitor, the time given with an upload session, delete and restore from the recycle
bin, and the delta feed. Where
the SDK and the mock disagree, the mock is wrong.

usage: python onedrive_msgraph_sdk.py BASE_URL TOKEN     (prints "ok" and exits 0 when every step held)
"""
import asyncio
import os
import sys

from kiota_abstractions.authentication import AccessTokenProvider, AllowedHostsValidator, BaseBearerTokenAuthenticationProvider
from msgraph import GraphRequestAdapter, GraphServiceClient
from msgraph.generated.drives.item.items.item.create_upload_session.create_upload_session_post_request_body import (
    CreateUploadSessionPostRequestBody,
)
from msgraph.generated.models.drive_item import DriveItem
from msgraph.generated.models.drive_item_uploadable_properties import DriveItemUploadableProperties
from msgraph.generated.models.folder import Folder
import httpx
from datetime import datetime, timezone
from kiota_abstractions.base_request_configuration import RequestConfiguration
from kiota_http.middleware.options import HeadersInspectionHandlerOption
from msgraph.generated.drives.item.items.item.copy.copy_post_request_body import CopyPostRequestBody
from msgraph.generated.drives.item.items.item.restore.restore_post_request_body import RestorePostRequestBody
from msgraph.generated.models.file_system_info import FileSystemInfo
from msgraph.generated.models.item_reference import ItemReference
from msgraph.generated.models.o_data_errors.o_data_error import ODataError


class StaticToken(AccessTokenProvider):
    """A token issued by the mock, sent only to the API's host (the upload and download host is another)."""

    def __init__(self, token, host):
        self.token = token
        self.validator = AllowedHostsValidator([host])

    async def get_authorization_token(self, uri, additional_authentication_context=None):
        # As the SDK's own Azure identity provider does: no token for a host that is not the API's.
        return self.token if self.validator.is_url_host_valid(uri) else ""

    def get_allowed_hosts_validator(self):
        return self.validator


def check(condition, what):
    if not condition:
        raise AssertionError(what)


async def main(base, token):
    host = base.split("//", 1)[1].split("/", 1)[0].split(":")[0]
    adapter = GraphRequestAdapter(BaseBearerTokenAuthenticationProvider(StaticToken(token, host)))
    adapter.base_url = base.rstrip("/") + "/v1.0"
    client = GraphServiceClient(request_adapter=adapter)

    drive = await client.me.drive.get()
    check(drive.id, "GET /me/drive gives the drive's id")
    items = client.drives.by_drive_id(drive.id).items
    root = await client.drives.by_drive_id(drive.id).root.get()
    check(root.id, "GET /drives/{id}/root gives the root item")

    folder = await items.by_drive_item_id(root.id).children.post(
        DriveItem(name="sdk", folder=Folder(), additional_data={"@microsoft.graph.conflictBehavior": "fail"}))
    check(folder.id and folder.name == "sdk" and folder.folder is not None, "POST children makes a folder")

    # A small upload by path relative to the folder's ID: the SDK escapes `:` and `/` inside the segment.
    small = await items.by_drive_item_id(f"{folder.id}:/hello.txt:").content.put(b"hello from the Graph SDK")
    check(small.id and small.size == 24, "PUT content creates the file")
    check(small.file and small.file.hashes and small.file.hashes.quick_xor_hash, "the file reports its QuickXorHash")

    # An upload session through the SDK's own large-file task: 3 fragments of 320 KiB and a short last one.
    data = os.urandom(3 * 327680 + 1234)
    session = await items.by_drive_item_id(f"{folder.id}:/big.bin:").create_upload_session.post(
        CreateUploadSessionPostRequestBody(item=DriveItemUploadableProperties(
            additional_data={"@microsoft.graph.conflictBehavior": "replace"})))
    check(session.upload_url, "createUploadSession gives an uploadUrl")
    check(session.next_expected_ranges == ["0-"], f"a new session expects everything, got {session.next_expected_ranges}")
    async with httpx.AsyncClient() as http:
        offset = 0
        while offset < len(data):
            piece = data[offset:offset + 327680]
            answer = await http.put(session.upload_url, content=piece,
                                    headers={"Content-Range": f"bytes {offset}-{offset + len(piece) - 1}/{len(data)}"})
            last = offset + len(piece) == len(data)
            check(answer.status_code == (201 if last else 202), f"fragment at {offset} answered {answer.status_code}: {answer.text}")
            if not last:
                check(answer.json()["nextExpectedRanges"] == [f"{offset + len(piece)}-"], "202 says where to go on")
            offset += len(piece)
        check(answer.json()["size"] == len(data), "the last fragment answers the item")

    listed = await items.by_drive_item_id(folder.id).children.get()
    names = sorted(item.name for item in listed.value)
    check(names == ["big.bin", "hello.txt"], f"the folder lists both files, got {names}")
    big = next(item for item in listed.value if item.name == "big.bin")
    check(big.size == len(data), f"the uploaded file has {len(data)} bytes, got {big.size}")

    # A download answers a 302 to the other host; the SDK follows it.
    content = await items.by_drive_item_id(big.id).content.get()
    check(content == data, "the download gives back the bytes uploaded")

    delta = await client.drives.by_drive_id(drive.id).items.by_drive_item_id(root.id).delta.get()
    check(any(item.name == "hello.txt" for item in delta.value), "the delta feed has the new file")
    check(delta.odata_delta_link or delta.odata_next_link, "a delta page ends with a link")

    # Rename, move and the client's own times in one PATCH; a PATCH onto a name in use is refused.
    sub = await items.by_drive_item_id(folder.id).children.post(DriveItem(name="sub", folder=Folder()))
    when = datetime(2021, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    patched = await items.by_drive_item_id(small.id).patch(DriveItem(
        name="renamed.txt", parent_reference=ItemReference(id=sub.id), file_system_info=FileSystemInfo(last_modified_date_time=when)))
    check(patched.name == "renamed.txt" and patched.parent_reference.id == sub.id, f"PATCH renames and moves: {patched.name}")
    check(patched.file_system_info.last_modified_date_time == when, f"PATCH keeps the time given: {patched.file_system_info.last_modified_date_time}")
    check(patched.size == 24, "a moved file keeps its contents")
    try:
        await items.by_drive_item_id(patched.id).patch(DriveItem(name="big.bin", parent_reference=ItemReference(id=folder.id)))
        check(False, "a PATCH onto a name in use should be refused")
    except ODataError as error:
        check(error.response_status_code == 409 and error.error.code == "nameAlreadyExists", f"PATCH onto a name in use: {error.error.code}")

    # A server-side copy: 202 with a monitor URL on another host, read without a token.
    inspection = HeadersInspectionHandlerOption(inspect_response_headers=True)
    await items.by_drive_item_id(big.id).copy.post(
        CopyPostRequestBody(parent_reference=ItemReference(drive_id=drive.id, id=sub.id), name="big copy.bin"),
        request_configuration=RequestConfiguration(options=[inspection]))
    monitor = next(iter(inspection.response_headers.get("location")))
    async with httpx.AsyncClient() as http:
        status = (await http.get(monitor)).json()
    check(status["status"] == "completed" and status["resourceId"], f"the copy's monitor: {status}")
    copied = await items.by_drive_item_id(status["resourceId"]).get()
    check(copied.name == "big copy.bin" and copied.size == len(data), f"the copy: {copied.name}, {copied.size}")
    check(await items.by_drive_item_id(copied.id).content.get() == data, "the copy has the same bytes")

    # The time given when an upload session is made is the file's.
    session = await items.by_drive_item_id(f"{sub.id}:/timed.bin:").create_upload_session.post(
        CreateUploadSessionPostRequestBody(item=DriveItemUploadableProperties(
            file_system_info=FileSystemInfo(last_modified_date_time=when),
            additional_data={"@microsoft.graph.conflictBehavior": "replace"})))
    async with httpx.AsyncClient() as http:
        answer = await http.put(session.upload_url, content=b"timed", headers={"Content-Range": "bytes 0-4/5"})
    check(answer.status_code == 201, f"a one-fragment session answers 201, got {answer.status_code}")
    timed = await items.by_drive_item_id(answer.json()["id"]).get()
    check(timed.file_system_info.last_modified_date_time == when, f"the session's time is kept: {timed.file_system_info.last_modified_date_time}")

    # Deleted to the recycle bin, then restored where it was (OneDrive personal), then deleted again.
    await items.by_drive_item_id(patched.id).delete()
    restored = await items.by_drive_item_id(patched.id).restore.post(RestorePostRequestBody())
    check(restored.id == patched.id and restored.parent_reference.id == sub.id, f"restore puts the item back: {restored.name}")
    await items.by_drive_item_id(patched.id).delete()
    quota = (await client.me.drive.get()).quota
    check(quota.deleted == 24 and quota.used >= quota.deleted, f"the recycle bin's bytes are quota.deleted: {quota.deleted}, used {quota.used}")
    listed = await items.by_drive_item_id(sub.id).children.get()
    check(sorted(item.name for item in listed.value) == ["big copy.bin", "timed.bin"], "a deleted file is gone from its folder")
    print("ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
