"""Drives the Nextcloud mock with nc-py-api (Nextcloud's own Python framework, from PyPI), as a user pointing it at
`llvs-mock nextcloud` would: who the user is and what the server can do (OCS), a folder, a small upload, a chunked
upload (v2: MKCOL with a Destination, numbered chunks, the assembly MOVE), a listing with file IDs and sizes,
downloads, a checksum sent with an upload and listed back (`oc:checksums`) through the library's own WebDAV
session, the checksum of a file LLVS uploaded, moves and copies (which the library looks up again by file ID with
SEARCH), searches by name and size, and removals. Where the library and the mock disagree, the mock is
wrong.

usage: python nextcloud_client_library.py SERVER_URL USER PASSWORD LLVS_FILE LLVS_SHA1
       (LLVS_FILE: a path under the user's files that LLVS's connector uploaded; prints "ok" and exits 0 when every
       step held)
"""
import hashlib
import io
import os
import sys
import xml.etree.ElementTree as ElementTree
from urllib.parse import quote

from nc_py_api import Nextcloud, NextcloudException


def check(condition, what):
    if not condition:
        raise SystemExit(f"failed: {what}")


def listed_checksums(nc, user, path):
    """The `oc:checksums` PROPFIND answers for one file, through the library's authenticated WebDAV session."""
    body = ('<?xml version="1.0"?><d:propfind xmlns:d="DAV:" xmlns:oc="http://owncloud.org/ns">'
            '<d:prop><oc:checksums/></d:prop></d:propfind>')
    response = nc._session.adapter_dav.request("PROPFIND", quote(f"/files/{user}/{path}"), data=body, headers={"Depth": "0"})
    check(response.status_code == 207, f"PROPFIND of {path}: {response.status_code} {response.text[:300]}")
    root = ElementTree.fromstring(response.content)
    return [element.text for element in root.iter("{http://owncloud.org/ns}checksum")]


def main():
    server, user, password, llvs_file, llvs_sha1 = sys.argv[1:6]
    nc = Nextcloud(nextcloud_url=server, nc_auth_user=user, nc_auth_pass=password)
    check(nc.user == user, f"the user is {nc.user}")
    check(nc.srv_version["major"] >= 25, f"server version {nc.srv_version}")
    check(nc.capabilities["files"]["bigfilechunking"], "bigfilechunking capability")

    folder = nc.files.mkdir("sdk")
    check(folder.file_id, f"mkdir answered {folder}")

    small = nc.files.upload("sdk/small.txt", b"hello from nc-py-api")
    check(small.file_id, f"the upload's file ID {small}")

    data = os.urandom(12 * 1024 * 1024 + 12345)
    big = nc.files.upload_stream("sdk/big.bin", io.BytesIO(data), chunk_size=5 * 1024 * 1024)
    check(big.file_id, f"the chunked upload's file ID {big}")

    nodes = {node.name: node for node in nc.files.listdir("sdk")}
    check(set(nodes) == {"small.txt", "big.bin"}, f"listing {sorted(nodes)}")
    check(nodes["big.bin"].info.size == len(data), f"big.bin's size {nodes['big.bin'].info.size}")
    check(nodes["small.txt"].info.fileid > 0 and nodes["small.txt"].info.fileid != nodes["big.bin"].info.fileid, "distinct file IDs")
    check(nodes["big.bin"].etag, "big.bin's etag")
    check(nc.files.by_path("sdk/big.bin").info.size == len(data), "by_path")

    check(nc.files.download("sdk/small.txt") == b"hello from nc-py-api", "small download")
    check(nc.files.download("sdk/big.bin") == data, "chunked upload downloaded whole")

    sha1 = hashlib.sha1(b"checksummed").hexdigest()
    put = nc._session.adapter_dav.put(quote(f"/files/{user}/sdk/checksummed.txt"), data=b"checksummed",
                                      headers={"OC-Checksum": f"SHA1:{sha1}"})
    check(put.status_code in (201, 204), f"PUT with OC-Checksum: {put.status_code}")
    check(listed_checksums(nc, user, "sdk/checksummed.txt") == [f"SHA1:{sha1}"], "the checksum sent is listed back")
    check(any(value and value.lower() == f"sha1:{llvs_sha1}" for value in listed_checksums(nc, user, llvs_file)),
          f"the checksum LLVS sent with {llvs_file}")

    def gone(path):
        try:
            nc.files.by_path(path)
        except NextcloudException as error:
            return error.status_code == 404
        return False

    # Moves and copies, which the library looks up again by file ID (SEARCH), and searches by name and size.
    moved = nc.files.move("sdk/small.txt", "sdk/moved.txt")
    check(moved.name == "moved.txt" and moved.info.fileid == nodes["small.txt"].info.fileid, f"a move keeps the file ID: {moved}")
    copied = nc.files.copy("sdk/moved.txt", "sdk/copy.txt")
    check(copied.name == "copy.txt" and copied.info.fileid != moved.info.fileid, f"a copy has its own file ID: {copied}")
    check(nc.files.download("sdk/copy.txt") == b"hello from nc-py-api", "the copy's contents")
    found = nc.files.find(["like", "name", "%.bin"], path="sdk")
    check([node.name for node in found] == ["big.bin"], f"find by name: {found}")
    found = nc.files.find(["and", "gt", "size", 1024, "like", "name", "%"], path="sdk")
    check([node.name for node in found] == ["big.bin"], f"find by size: {found}")
    check(nc.files.by_id(nodes["big.bin"].info.fileid).name == "big.bin", "by_id")
    nc.files.delete("sdk/copy.txt")
    nc.files.move("sdk/moved.txt", "sdk/small.txt")

    nc.files.delete("sdk/small.txt")
    check(gone("sdk/small.txt"), "deleted")
    check(sorted(node.name for node in nc.files.listdir("sdk")) == ["big.bin", "checksummed.txt"], "the rest is listed")
    nc.files.delete("sdk")
    check(gone("sdk"), "folder deleted")
    print("ok")


main()
