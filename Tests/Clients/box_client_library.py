"""Drives the Box mock with Box's own Python SDK (box-sdk-gen), as a user pointing their client at `llvs-mock box`
would: the SDK's base URLs set to the mock (the API, the upload host, OAuth), then the current user, create a
folder (and meet the 409 of a second create), list with marker paging, a multipart upload, a new version, a
preflight, a chunked upload through the SDK's own upload_big_file, a download (a 302 to another host), the file's own
time given with an upload, rename and move, copies of a file and a folder, the trash (list, read, restore, purge), the
event stream, and deletes. Where the SDK and the mock disagree, the mock is wrong.

usage: python box_sdk_client.py BASE_URL TOKEN     (prints "ok" and exits 0 when every step held)
"""
import hashlib
import io
import os
import sys
from datetime import datetime, timezone

from box_sdk_gen import BaseUrls, BoxAPIError, BoxClient, BoxDeveloperTokenAuth, NetworkSession
from box_sdk_gen.managers.files import CopyFileParent, UpdateFileByIdParent
from box_sdk_gen.managers.folders import CopyFolderParent, CreateFolderParent
from box_sdk_gen.managers.uploads import (
    PreflightFileUploadCheckParent,
    UploadFileAttributes,
    UploadFileAttributesParentField,
    UploadFileVersionAttributes,
)


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def main():
    base, token = sys.argv[1].rstrip("/"), sys.argv[2]
    urls = BaseUrls(base_url=base, upload_url=base + "/api", oauth_2_url=base + "/api/oauth2")
    client = BoxClient(BoxDeveloperTokenAuth(token=token), network_session=NetworkSession(base_urls=urls))

    me = client.users.get_user_me()
    check(me.space_amount is not None and me.space_used is not None, f"users/me has space_amount and space_used: {me}")

    start = client.events.get_events(stream_position="now").next_stream_position

    folder = client.folders.create_folder("sdk", CreateFolderParent(id="0"))
    check(folder.name == "sdk" and folder.id, f"create_folder: {folder}")
    try:
        client.folders.create_folder("SDK", CreateFolderParent(id="0"))
        check(False, "a second folder differing only in case should be refused")
    except BoxAPIError as error:
        check(error.response_info.status_code == 409 and error.response_info.code == "item_name_in_use", f"409 item_name_in_use: {error}")

    data = os.urandom(70_000)
    uploaded = client.uploads.upload_file(UploadFileAttributes(name="hello.bin", parent=UploadFileAttributesParentField(id=folder.id)),
                                          io.BytesIO(data))
    file = uploaded.entries[0]
    check(file.sha_1 == hashlib.sha1(data).hexdigest() and file.size == len(data), f"upload_file: {file}")

    try:
        client.uploads.preflight_file_upload_check(name="hello.bin", size=10, parent=PreflightFileUploadCheckParent(id=folder.id))
        check(False, "a preflight for a name in use should be refused")
    except BoxAPIError as error:
        check(error.response_info.status_code == 409, f"preflight 409: {error}")
    client.uploads.preflight_file_upload_check(name="free.bin", size=10, parent=PreflightFileUploadCheckParent(id=folder.id))

    newer = os.urandom(1000)
    version = client.uploads.upload_file_version(file.id, UploadFileVersionAttributes(name="hello.bin"), io.BytesIO(newer)).entries[0]
    check(version.id == file.id and version.sha_1 == hashlib.sha1(newer).hexdigest(), f"upload_file_version: {version}")

    big = os.urandom(int(sys.argv[3]) if len(sys.argv) > 3 else 3 * 1024 * 1024 + 7)
    chunked = client.chunked_uploads.upload_big_file(io.BytesIO(big), "big.bin", len(big), folder.id)
    check(chunked.sha_1 == hashlib.sha1(big).hexdigest() and chunked.size == len(big), f"upload_big_file: {chunked}")

    for i in range(5):
        client.folders.create_folder(f"sub-{i}", CreateFolderParent(id=folder.id))
    seen, marker = [], None
    while True:
        page = client.folders.get_folder_items(folder.id, usemarker=True, marker=marker, limit=3, fields=["name", "sha1", "size"])
        seen += [entry.name for entry in page.entries]
        marker = page.next_marker
        if not marker:
            break
    check(sorted(seen) == sorted(["hello.bin", "big.bin"] + [f"sub-{i}" for i in range(5)]), f"marker paging: {seen}")

    downloaded = client.downloads.download_file(file.id).read()
    check(downloaded == newer, "download_file gives the newest version")
    check(client.downloads.download_file(chunked.id).read() == big, "download of the chunked upload")

    # The file's own time given with the upload; rename and move in one update; copies of a file and a folder.
    when = datetime(2021, 5, 6, 7, 8, 9, tzinfo=timezone.utc)
    timed = client.uploads.upload_file(UploadFileAttributes(name="timed.bin", parent=UploadFileAttributesParentField(id=folder.id),
                                                            content_modified_at=when), io.BytesIO(b"timed")).entries[0]
    check(timed.content_modified_at == when, f"content_modified_at kept: {timed.content_modified_at}")
    moves = client.folders.create_folder("moves", CreateFolderParent(id=folder.id))
    renamed = client.files.update_file_by_id(timed.id, name="renamed.bin", parent=UpdateFileByIdParent(id=moves.id))
    check(renamed.name == "renamed.bin" and renamed.parent.id == moves.id, f"update_file_by_id renames and moves: {renamed.name}")
    check(renamed.content_modified_at == when, "a move keeps the file's own time")
    try:
        client.files.update_file_by_id(renamed.id, name="BIG.bin", parent=UpdateFileByIdParent(id=folder.id))
        check(False, "a move onto a name in use should be refused")
    except BoxAPIError as error:
        check(error.response_info.status_code == 409 and error.response_info.code == "item_name_in_use", f"409 on a move: {error}")
    copied = client.files.copy_file(chunked.id, CopyFileParent(id=moves.id), name="big copy.bin")
    check(copied.id != chunked.id and copied.sha_1 == chunked.sha_1 and copied.size == len(big), f"copy_file: {copied}")
    check(client.downloads.download_file(copied.id).read() == big, "the copy has the same bytes")
    folder_copy = client.folders.copy_folder(moves.id, CopyFolderParent(id=folder.id), name="moves copy")
    inside = sorted(entry.name for entry in client.folders.get_folder_items(folder_copy.id).entries)
    check(inside == ["big copy.bin", "renamed.bin"], f"copy_folder copies what is inside: {inside}")
    check(client.folders.update_folder_by_id(folder_copy.id, name="moves copy 2").name == "moves copy 2", "update_folder_by_id renames")

    # The trash: list it, read a trashed file, restore it, put it back and purge it.
    client.files.delete_file_by_id(renamed.id)
    trash = client.trashed_items.get_trashed_items(limit=100)
    check(renamed.id in [entry.id for entry in trash.entries], f"the trash lists the file: {[entry.name for entry in trash.entries]}")
    check(client.trashed_files.get_trashed_file_by_id(renamed.id).item_status.value == "trashed", "a trashed file reads as trashed")
    restored = client.trashed_files.restore_file_from_trash(renamed.id)
    check(restored.id == renamed.id and restored.item_status.value == "active", f"restore_file_from_trash: {restored}")
    check("renamed.bin" in [entry.name for entry in client.folders.get_folder_items(moves.id).entries], "a restored file is listed again")
    client.files.delete_file_by_id(renamed.id)
    client.trashed_files.delete_trashed_file_by_id(renamed.id)
    check(renamed.id not in [entry.id for entry in client.trashed_items.get_trashed_items().entries], "a purged file leaves the trash")

    client.files.delete_file_by_id(file.id)
    try:
        client.files.delete_file_by_id(file.id)
        check(False, "deleting a trashed file again should be 404")
    except BoxAPIError as error:
        check(error.response_info.status_code == 404 and error.response_info.code == "not_found", f"404 not_found: {error}")
    try:
        client.folders.delete_folder_by_id(folder.id)
        check(False, "a folder with items needs recursive=true")
    except BoxAPIError as error:
        check(error.response_info.code == "folder_not_empty", f"folder_not_empty: {error}")
    client.folders.delete_folder_by_id(folder.id, recursive=True)

    # The file went to the trash on its own before its folder did: purging the folder leaves it in the trash.
    listed = [entry.id for entry in client.trashed_items.get_trashed_items(limit=1000).entries]
    check(file.id in listed and folder.id in listed, f"the trash lists the file and its folder: {listed}")
    client.trashed_folders.delete_trashed_folder_by_id(folder.id)
    listed = [entry.id for entry in client.trashed_items.get_trashed_items(limit=1000).entries]
    check(file.id in listed and folder.id not in listed, f"after purging the folder the file stays in the trash: {listed}")
    check(client.trashed_files.get_trashed_file_by_id(file.id).item_status.value == "trashed", "the file still reads as trashed")
    client.trashed_files.delete_trashed_file_by_id(file.id)
    check(file.id not in [entry.id for entry in client.trashed_items.get_trashed_items(limit=1000).entries], "then it is purged on its own")

    events = client.events.get_events(stream_position=str(start))
    types = [entry.event_type for entry in events.entries]
    check("ITEM_UPLOAD" in [str(t.value if hasattr(t, "value") else t) for t in types], f"events: {types}")
    check(int(events.next_stream_position) > int(start), "the stream position moves on")
    print("ok")


if __name__ == "__main__":
    main()
