"""Drives the Dropbox mock with Dropbox's own Python SDK (the `dropbox` package), as a user pointing their client at
`llvs-mock dropbox` would: the SDK speaks only https, so it reaches the mock through a TLS front (tls_proxy.py) named
in its host settings (DROPBOX_API_HOST, DROPBOX_API_CONTENT_HOST, DROPBOX_API_NOTIFY_HOST). Then the current account,
a small upload (a non-ASCII name in Dropbox-API-Arg), an upload session (start, append_v2, an append at a wrong offset
refused with correct_offset, finish), a conflict refused, list_folder with a limit and continue, a cursor and a long
poll woken by a change, download, move, copy, delete and a lookup of what was deleted; every content hash the mock
answers equals the SDK's own. Where the SDK and the mock disagree, the mock is wrong.

usage: python dropbox_client_library.py BASE_URL TOKEN     (prints "ok" and exits 0 when every step held)
"""
import os
import sys
import threading
from urllib.parse import urlparse

from tls_proxy import TLSProxy


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def content_hash(data):
    from dropbox.content_hash import DropboxContentHasher

    hasher = DropboxContentHasher()
    hasher.update(data)
    return hasher.hexdigest()


def main():
    base, token = sys.argv[1], sys.argv[2]
    with TLSProxy(urlparse(base).port) as proxy:
        for name in ("DROPBOX_API_HOST", "DROPBOX_API_CONTENT_HOST", "DROPBOX_API_NOTIFY_HOST"):
            os.environ[name] = proxy.host
        # The SDK asks requests to verify with verify=True, which takes the bundle from here (its own ca_certs is
        # overridden by that on this requests).
        os.environ["REQUESTS_CA_BUNDLE"] = proxy.certificate
        import dropbox  # reads the host settings as it is imported
        from dropbox.exceptions import ApiError
        from dropbox.files import CommitInfo, UploadSessionCursor, WriteMode

        dbx = dropbox.Dropbox(oauth2_access_token=token, ca_certs=proxy.certificate)
        account = dbx.users_get_current_account()
        check(len(account.account_id) == 40 and account.name.display_name, f"get_current_account: {account}")

        small = os.urandom(70_000)
        uploaded = dbx.files_upload(small, "/sdk/ünïcødé 世界.bin")
        check(uploaded.size == len(small) and uploaded.content_hash == content_hash(small), f"files_upload: {uploaded}")
        check(uploaded.path_display == "/sdk/ünïcødé 世界.bin", f"the name as sent: {uploaded.path_display}")

        pieces = [os.urandom(4 * 1024 * 1024), os.urandom(4 * 1024 * 1024), os.urandom(1_000_003)]
        session = dbx.files_upload_session_start(pieces[0])
        cursor = UploadSessionCursor(session_id=session.session_id, offset=len(pieces[0]))
        dbx.files_upload_session_append_v2(pieces[1], cursor)
        try:
            dbx.files_upload_session_append_v2(b"again", cursor)  # the offset is behind what the session holds
            check(False, "an append at a stale offset should be refused")
        except ApiError as error:
            check(error.error.is_incorrect_offset()
                  and error.error.get_incorrect_offset().correct_offset == len(pieces[0]) + len(pieces[1]),
                  f"incorrect_offset with correct_offset: {error}")
        cursor.offset = len(pieces[0]) + len(pieces[1])
        whole = b"".join(pieces)
        big = dbx.files_upload_session_finish(pieces[2], cursor, CommitInfo(path="/sdk/big.bin"))
        check(big.size == len(whole) and big.content_hash == content_hash(whole), f"session finish: {big}")

        try:
            dbx.files_upload(b"different", "/SDK/BIG.bin", mode=WriteMode.add)
            check(False, "an upload onto a different file in add mode should be refused")
        except ApiError as error:
            check(error.error.is_path() and error.error.get_path().reason.is_conflict(), f"path/conflict: {error}")
        replaced = dbx.files_upload(b"different", "/sdk/big.bin", mode=WriteMode.overwrite)
        check(replaced.size == 9 and replaced.rev != big.rev, f"overwrite: {replaced}")

        names, page = [], dbx.files_list_folder("/sdk", limit=1)
        names += [entry.name for entry in page.entries]
        pages = 1
        while page.has_more:
            page = dbx.files_list_folder_continue(page.cursor)
            names += [entry.name for entry in page.entries]
            pages += 1
        check(sorted(names) == ["big.bin", "ünïcødé 世界.bin"] and pages >= 2, f"list_folder and continue: {names}")

        latest = dbx.files_list_folder_get_latest_cursor("/sdk").cursor
        polled = {}
        poller = threading.Thread(target=lambda: polled.update(answer=dbx.files_list_folder_longpoll(latest, timeout=30)))
        poller.start()
        dbx.files_upload(b"wake up", "/sdk/new.txt")
        poller.join(timeout=150)
        check(polled.get("answer") is not None and polled["answer"].changes, f"longpoll: {polled}")
        since = dbx.files_list_folder_continue(latest)
        check([entry.name for entry in since.entries] == ["new.txt"], f"continue after the poll: {since.entries}")

        metadata, response = dbx.files_download("/sdk/ünïcødé 世界.bin")
        check(response.content == small and metadata.content_hash == content_hash(small), "files_download")

        moved = dbx.files_move_v2("/sdk/new.txt", "/sdk/moved/new.txt").metadata
        check(moved.path_lower == "/sdk/moved/new.txt", f"move_v2: {moved}")
        copied = dbx.files_copy_v2("/sdk/moved", "/sdk/copy").metadata
        check(copied.path_lower == "/sdk/copy", f"copy_v2: {copied}")
        check(dbx.files_download("/sdk/copy/new.txt")[1].content == b"wake up", "the copy's file")
        after_moves = dbx.files_list_folder_continue(since.cursor)
        kinds = {(type(entry).__name__, entry.path_lower) for entry in after_moves.entries}
        check(kinds == {("DeletedMetadata", "/sdk/new.txt"), ("FolderMetadata", "/sdk/moved"),
                        ("FolderMetadata", "/sdk/copy")}, f"the feed of /sdk (not recursive) after move and copy: {kinds}")

        deleted = dbx.files_delete_v2("/sdk/moved").metadata
        check(deleted.name == "moved", f"delete_v2: {deleted}")
        try:
            dbx.files_get_metadata("/sdk/moved/new.txt")
            check(False, "what was deleted should not be found")
        except ApiError as error:
            check(error.error.is_path() and error.error.get_path().is_not_found(), f"path/not_found: {error}")
        try:
            dbx.files_delete_v2("/sdk/moved")
            check(False, "a second delete should not find it")
        except ApiError as error:
            check(error.error.is_path_lookup() and error.error.get_path_lookup().is_not_found(), f"path_lookup: {error}")
    print("ok")


main()
