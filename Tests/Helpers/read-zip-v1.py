#!/usr/bin/env python3
"""An independent reader of zip-v1 snapshots (no LLVS code): prints every version's values as JSON.

usage: read-zip-v1.py ARCHIVE

Uses only Python's zipfile and json, and upstream LLVS's layout as docs/remote-format.md and the
zip fixture's README describe it: versions/<split(id,2)>.json, maps/__llvs_values/<split(safeKey,2)>/<split(version.json,1)>
(root node "__llvs_root" -> sub-nodes -> value references), values/<split(safeKey(id),2)>/<split(version.json,1)>.
Entries are indexed by their components (the last two are the version, the ones before are the safe key), so no
path is computed from an id. Names are compared in NFD. LLZF (LZFSE) files are refused with a message.
Output: {"VERSION": {"predecessors": [...], "values": {"ID": {"data": base64, "storedVersionId": "V"}}}}
"""
import base64
import json
import sys
import unicodedata
import zipfile


def nfd(text):
    return unicodedata.normalize("NFD", text)


def main():
    archive = zipfile.ZipFile(sys.argv[1])
    zones = {"values": {}, "maps/__llvs_values": {}}
    versions = {}
    for info in archive.infolist():
        name = info.filename
        if name.endswith("/"):
            continue
        if name.startswith("versions/"):
            version = json.loads(archive.read(info))
            versions[version["identifier"]] = version
            continue
        for root in zones:
            if name.startswith(root + "/"):
                parts = name[len(root) + 1:].split("/")
                version = "".join(parts[-2:])
                assert version.endswith(".json"), name
                zones[root][(nfd("".join(parts[:-2])), nfd(version[:-5]))] = info

    def read(root, key, version):
        safe = key.replace("/", "LLVSSLASH").replace(":", "LLVSCOLON")
        data = archive.read(zones[root][(nfd(safe), nfd(version))])
        if len(data) > 4 and data[:4] == b"LLZF":
            sys.exit("read-zip-v1: an LLZF file needs an LZFSE decoder, which this reader does not have")
        return data

    result = {}
    for version_id, version in versions.items():
        root = json.loads(read("maps/__llvs_values", "__llvs_root", version_id))
        values = {}
        for node_ref in root["children"]["nodes"]:
            node = json.loads(read("maps/__llvs_values", node_ref["key"], node_ref["version"]))
            for entry in node["children"]["values"]:
                reference = entry["valueReference"]
                data = read("values", reference["valueId"], reference["storedVersionId"])
                values[reference["valueId"]] = {"data": base64.b64encode(data).decode(), "storedVersionId": reference["storedVersionId"]}
        predecessors = version.get("predecessors") or {}
        result[version_id] = {"predecessors": [p for p in (predecessors.get("idOfFirst"), predecessors.get("idOfSecond")) if p],
                              "values": values}
    json.dump(result, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main()
