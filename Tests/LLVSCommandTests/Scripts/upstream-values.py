"""An independent reader of an LLVS zip-v1 snapshot's value files, by upstream's rule (not this package's code).

Reads the chunk files given (in order) as one zip and prints, for each file under values/, its path and the SHA-256
of the bytes an LLVS app would read from it: upstream decompresses a file longer than 4 bytes that starts with LLZF
as an LZFSE stream. This reader decodes stored blocks (bvx-) and the end of stream (bvx$); a stream with compressed
blocks (bvxn, bvx1, bvx2) is reported as COMPRESSED, because upstream would turn it into other bytes than stored.
"""
import hashlib
import io
import struct
import sys
import zipfile


def upstream_bytes(data):
    if len(data) <= 4 or data[:4] != b"LLZF":
        return data
    out = bytearray()
    position = 4
    while position + 4 <= len(data):
        magic = data[position:position + 4]
        if magic == b"bvx$":
            return bytes(out)
        if magic == b"bvx-":
            (length,) = struct.unpack_from("<I", data, position + 4)
            out += data[position + 8:position + 8 + length]
            position += 8 + length
            continue
        if magic in (b"bvxn", b"bvx1", b"bvx2"):
            return None
        break
    return data  # not a valid stream: upstream keeps the file as it is


archive = b"".join(open(name, "rb").read() for name in sys.argv[1:])
with zipfile.ZipFile(io.BytesIO(archive)) as z:
    for info in z.infolist():
        if info.filename.startswith("values/") and not info.is_dir():
            read = upstream_bytes(z.read(info))
            print(info.filename, "COMPRESSED" if read is None else hashlib.sha256(read).hexdigest())
