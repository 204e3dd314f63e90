"""Drives the OneDrive mock with Microsoft's own Graph SDK for Python (msgraph-sdk), as a user pointing their client
at `llvs-mock onedrive` would: list, create a folder, a small upload, an upload session (created by the SDK; its
fragments sent with httpx, the SDK's own HTTP client, without a token, as Graph's documentation describes — the
SDK's LargeFileUploadTask cannot parse the documented `"nextExpectedRanges": ["26-"]` form, a known SDK bug), a
download (a 302 to another host), delete, and the delta feed. Where the SDK and the mock disagree, the mock is wrong.

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

    await items.by_drive_item_id(small.id).delete()
    listed = await items.by_drive_item_id(folder.id).children.get()
    check([item.name for item in listed.value] == ["big.bin"], "a deleted file is gone from its folder")
    print("ok")


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
