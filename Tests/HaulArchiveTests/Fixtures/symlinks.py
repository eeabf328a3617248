#!/usr/bin/env python3
"""Writes archives whose symlinks are each harmless when created but lead out of the destination
once every link is in place, with Python's tarfile and zipfile as independent writers.

usage: symlinks.py OUTDIR
"""
import io
import os
import sys
import tarfile
import zipfile


def links_tar(links):
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w", format=tarfile.PAX_FORMAT) as archive:
        info = tarfile.TarInfo("file")
        info.size = 1
        archive.addfile(info, io.BytesIO(b"x"))
        for name, target in links:
            info = tarfile.TarInfo(name)
            info.type = tarfile.SYMTYPE
            info.linkname = target
            archive.addfile(info)
    return out.getvalue()


def links_zip(links):
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as archive:
        archive.writestr("file", b"x")
        for name, target in links:
            info = zipfile.ZipInfo(name)
            info.create_system = 3
            info.external_attr = 0o120777 << 16
            archive.writestr(info, target.encode())
    return out.getvalue()


# `a → b/..` is inside while b does not exist; once `b → .` is written, a is the destination's parent.
REVERSED = [("a", "b/.."), ("b", ".")]
# Then every `uN → u(N-1)/..` climbs one more level, up to the root of the file system.
CLIMB = REVERSED + [("u1", "a/..")] + [(f"u{n}", f"u{n - 1}/..") for n in range(2, 41)] + [("etc", "u40/etc")]
# The same escape one level down, from a subdirectory.
NESTED = [("d/x", "y/../.."), ("d/y", ".")]
# Two links that point at each other: neither resolves.
LOOP = [("p", "q"), ("q", "p")]

CASES = {
    "reversed.tar": links_tar(REVERSED),
    "reversed.zip": links_zip(REVERSED),
    "climb.tar": links_tar(CLIMB),
    "climb.zip": links_zip(CLIMB),
    "nested.tar": links_tar(NESTED),
    "loop.tar": links_tar(LOOP),
}

if __name__ == "__main__":
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, data in CASES.items():
        with open(os.path.join(sys.argv[1], name), "wb") as out:
            out.write(data)
