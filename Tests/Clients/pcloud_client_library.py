"""Drives the pCloud mock with the `pcloud` client library from PyPI, as a user pointing their client at
`llvs-mock pcloud` would: user info, create a folder, list, upload (multipart, from bytes and from a file),
checksums, download (the library's way: stat, then getzip), an upload under a temporary name renamed over the
final one, moves and copies (`renamefile`, `copyfile`, `renamefolder`) with the times given (`mtime`), the trash
(list, where a restore goes, restore, clear), delete a file and a folder, the diff feed, and a refused token. The library is made for OAuth 2 tokens (`oauth2=True`) and its region's endpoint (`api` or `eapi`),
then pointed at the mock's host for that region. Where the library and the mock disagree, the mock is wrong.

usage: python pcloud_client.py REGION_BASE_URL TOKEN REGION USERNAME PASSWORD     (REGION us|eu; prints "ok" and
exits 0 when every step held)
"""
import hashlib
import os
import sys
import tempfile

from pcloud import PyCloud


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def ok(answer, what):
    check(isinstance(answer, dict) and answer.get("result") == 0, f"{what}: {answer}")
    return answer


def main():
    base, token, region = sys.argv[1], sys.argv[2], sys.argv[3]
    cloud = PyCloud("", token, endpoint="api" if region == "us" else "eapi", oauth2=True)
    cloud.endpoint = base.rstrip("/") + "/"

    info = ok(cloud.userinfo(), "userinfo")
    check(info["locationid"] == (1 if region == "us" else 2), f"userinfo locationid {info.get('locationid')}")
    check(info["quota"] >= info["usedquota"], "quota")

    folder = ok(cloud.createfolder(folderid=0, name="sdk"), "createfolder")["metadata"]
    check(folder["isfolder"] and folder["name"] == "sdk" and folder["id"] == f"d{folder['folderid']}", f"folder metadata {folder}")
    again = cloud.createfolder(folderid=0, name="sdk")
    check(again.get("result") == 2004, f"a second createfolder should be 2004: {again}")
    ok(cloud.createfolderifnotexists(folderid=0, name="sdk"), "createfolderifnotexists on an existing folder")

    root = ok(cloud.listfolder(folderid=0), "listfolder")["metadata"]
    check(any(item["name"] == "sdk" for item in root["contents"]), "the new folder is listed")

    data = os.urandom(70_000)
    uploaded = ok(cloud.uploadfile(data=data, filename="hello.bin", folderid=folder["folderid"]), "uploadfile from bytes")
    file = uploaded["metadata"][0]
    check(file["size"] == len(data) and file["name"] == "hello.bin", f"upload metadata {file}")
    check(uploaded["checksums"][0]["sha1"] == hashlib.sha1(data).hexdigest(), "upload sha1")
    check(isinstance(file["hash"], int) and 0 <= file["hash"] < 2**64, f"hash is a 64-bit number: {file['hash']}")

    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, "from-disk.txt")
        with open(path, "wb") as handle:
            handle.write(b"from a file on disk\n")
        ok(cloud.uploadfile(files=[path], path="/sdk"), "uploadfile from a file")

    sums = ok(cloud.checksumfile(fileid=file["fileid"]), "checksumfile")
    check(sums["sha1"] == hashlib.sha1(data).hexdigest(), "checksumfile sha1")
    if region == "us":
        check(sums["md5"] == hashlib.md5(data).hexdigest(), "checksumfile md5 in the US")
    else:
        check(sums["sha256"] == hashlib.sha256(data).hexdigest(), "checksumfile sha256 in Europe")

    check(cloud.file_download(fileid=file["fileid"]) == data, "file_download gives the bytes uploaded")
    check(cloud.file_exists(path="/sdk/from-disk.txt"), "file_exists")

    listed = ok(cloud.listfolder(path="/sdk"), "listfolder by path")["metadata"]["contents"]
    check(sorted(item["name"] for item in listed) == ["from-disk.txt", "hello.bin"], f"listing {listed}")

    # The usual way to avoid half-written files: upload under a temporary name (keeping the file's own time), then
    # rename over the final name.
    ok(cloud.uploadfile(data=b"old", filename="final.txt", folderid=folder["folderid"]), "uploadfile of the old final.txt")
    temporary = ok(cloud.uploadfile(data=b"new contents", filename="final.txt.partial", folderid=folder["folderid"], mtime="1700000000"),
                   "uploadfile with mtime")["metadata"][0]
    check(temporary["modified"] == "Tue, 14 Nov 2023 22:13:20 +0000", f"mtime kept: {temporary['modified']}")
    renamed = ok(cloud.renamefile(fileid=temporary["fileid"], toname="final.txt"), "renamefile over an existing name")["metadata"]
    check(renamed["name"] == "final.txt" and renamed["fileid"] == temporary["fileid"], f"renamefile metadata {renamed}")
    names = sorted(item["name"] for item in ok(cloud.listfolder(folderid=folder["folderid"]), "listfolder")["metadata"]["contents"])
    check(names == ["final.txt", "from-disk.txt", "hello.bin"], f"the rename replaced the old file: {names}")
    check(cloud.file_download(fileid=renamed["fileid"]) == b"new contents", "the renamed file has the new contents")

    moved = ok(cloud.renamefile(fileid=renamed["fileid"], topath="/moved.txt"), "renamefile to a path")["metadata"]
    check(moved["parentfolderid"] == 0 and moved["name"] == "moved.txt", f"renamefile topath {moved}")
    copied = ok(cloud.copyfile(fileid=moved["fileid"], tofolderid=folder["folderid"], toname="copy.txt", mtime="1600000000"), "copyfile")["metadata"]
    check(copied["fileid"] != moved["fileid"] and copied["size"] == len(b"new contents"), f"copyfile metadata {copied}")
    check(copied["modified"] == "Sun, 13 Sep 2020 12:26:40 +0000", f"copyfile mtime {copied['modified']}")
    check(cloud.copyfile(fileid=moved["fileid"], tofolderid=folder["folderid"], toname="copy.txt", noover=1).get("result") == 2004,
          "copyfile onto a name in use with noover=1 is 2004")
    check(cloud.file_download(fileid=copied["fileid"]) == b"new contents", "the copy has the contents")
    ok(cloud.deletefile(fileid=moved["fileid"]), "deletefile of the moved file")

    inner = ok(cloud.createfolder(folderid=folder["folderid"], name="inner"), "createfolder inner")["metadata"]
    check(cloud.renamefolder(folderid=folder["folderid"], tofolderid=inner["folderid"]).get("result") not in (0, None),
          "a folder cannot move below itself")
    ok(cloud.renamefolder(folderid=inner["folderid"], toname="inner2"), "renamefolder")
    ok(cloud.renamefolder(folderid=inner["folderid"], tofolderid=folder["folderid"], toname="inner"), "renamefolder back")
    check(cloud.renamefolder(folderid=inner["folderid"], toname="copy.txt").get("result") == 2004, "renamefolder onto a name in use is 2004")
    ok(cloud.deletefolder(folderid=inner["folderid"]), "deletefolder of an empty folder")
    ok(cloud.deletefile(fileid=copied["fileid"]), "deletefile of the copy")

    # The trash: the deleted copy is listed there, restored where it was, deleted again and cleared for good.
    trash = ok(cloud.trash_list(), "trash_list")["metadata"]["contents"]
    check(copied["fileid"] in [item.get("fileid") for item in trash], f"the trash lists the deleted file: {trash}")
    where = ok(cloud.trash_restorepath(fileid=copied["fileid"]), "trash_restorepath")["destination"]
    check(where["folderid"] == folder["folderid"], f"it would go back to its folder: {where}")
    back = ok(cloud.trash_restore(fileid=copied["fileid"]), "trash_restore")["metadata"]
    check(back["parentfolderid"] == folder["folderid"] and cloud.file_download(fileid=copied["fileid"]) == b"new contents",
          f"the restored file is back whole: {back}")
    ok(cloud.deletefile(fileid=copied["fileid"]), "deletefile of the restored copy")
    ok(cloud.trash_clear(fileid=copied["fileid"]), "trash_clear")
    check(cloud.trash_restore(fileid=copied["fileid"]).get("result") == 2009, "a cleared file cannot be restored")

    start = ok(cloud.diff(last=0), "diff last=0")["diffid"]
    deleted = ok(cloud.deletefile(fileid=file["fileid"]), "deletefile")["metadata"]
    check(deleted.get("isdeleted") is True, f"deletefile metadata {deleted}")
    check(cloud.deletefile(fileid=file["fileid"]).get("result") == 2009, "deleting it again is 2009")
    check(cloud.deletefolder(folderid=folder["folderid"]).get("result") == 2006, "deletefolder of a non-empty folder is 2006")
    removed = ok(cloud.deletefolderrecursive(folderid=folder["folderid"]), "deletefolderrecursive")
    check(removed["deletedfiles"] == 1 and removed["deletedfolders"] == 1, f"deletefolderrecursive counts {removed}")
    check(cloud.deletefolderrecursive(folderid=0).get("result") == 2007, "the root cannot be deleted")

    changes = ok(cloud.diff(diffid=start), "diff since")
    events = [entry["event"] for entry in changes["entries"]]
    check("deletefile" in events and "deletefolder" in events and changes["diffid"] > start, f"diff entries {events}")

    refused = PyCloud("", "not-a-token", endpoint="api", oauth2=True)
    refused.endpoint = cloud.endpoint
    check(refused.userinfo().get("result") == 2094, "a wrong token is 2094")

    # Signed in with the user name and password, as rclone's cleanup and the library's own constructor do: the
    # library's digest sign-in (getdigest, then userinfo with getauth) gives an auth token the trash is cleared with.
    username, password = sys.argv[4], sys.argv[5]
    signed = PyCloud("", "placeholder", endpoint="api", oauth2=True)
    signed.endpoint = cloud.endpoint
    signed.access_token, signed.username, signed.password = "", username.lower().encode(), password.encode()
    signed.auth_token = signed.get_auth_token()
    check(len(signed.auth_token) > 10, f"getauth gives a token: {signed.auth_token}")
    ok(signed.userinfo(), "userinfo with the auth token")
    ok(signed.trash_clear(folderid=0), "trash_clear signed in with a password")
    plain = signed._do_request("listfolder", authenticate=False, username=username, password=password, folderid=0)
    ok(plain, "a method called with username and password")
    wrong = signed._do_request("userinfo", authenticate=False, username=username, password="wrong", getauth=1)
    check(wrong.get("result") == 2000 and "auth" not in wrong, f"a wrong password is 2000 Log in failed: {wrong}")
    ok(signed.logout(), "logout")
    check(signed.userinfo().get("result") == 2000, "an auth token that logged out is 2000")
    print("ok")


if __name__ == "__main__":
    main()
