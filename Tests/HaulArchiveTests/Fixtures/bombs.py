#!/usr/bin/env python3
"""Writes decompression bombs with Python's tarfile, zipfile and gzip as independent writers.

usage: bombs.py OUTDIR MIB   (each bomb expands to MIB MiB of zeros)
"""
import gzip
import io
import os
import sys
import tarfile
import zipfile


class Zeros(io.RawIOBase):
    """MIB MiB of zeros, read in pieces, so no bomb is ever held in memory."""

    def __init__(self, size):
        self.left = size

    def readable(self):
        return True

    def readinto(self, buffer):
        count = min(len(buffer), self.left)
        buffer[:count] = bytes(count)
        self.left -= count
        return count


def write_all(out, size):
    chunk = bytes(1 << 20)
    while size > 0:
        out.write(chunk[: min(size, len(chunk))])
        size -= min(size, len(chunk))


def main(directory, mib):
    size = mib << 20
    os.makedirs(directory, exist_ok=True)
    with tarfile.open(os.path.join(directory, "zeros.tar.gz"), "w:gz", compresslevel=9) as archive:
        info = tarfile.TarInfo("zeros")
        info.size = size
        archive.addfile(info, io.BufferedReader(Zeros(size)))
    with zipfile.ZipFile(os.path.join(directory, "zeros.zip"), "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        with archive.open("zeros", "w", force_zip64=True) as out:
            write_all(out, size)
    with gzip.open(os.path.join(directory, "zeros.gz"), "wb", compresslevel=9) as out:
        write_all(out, size)
    # Pax records that are each under 1 MiB but, spread over several extended headers, pile up before
    # one entry: 4 × 768 KiB.
    out = io.BytesIO()
    for index in range(4):
        out.write(tarfile.TarInfo._create_pax_generic_header({f"HAUL.flood{index}": "x" * (768 << 10)}, tarfile.XHDTYPE, "utf-8"))
    info = tarfile.TarInfo("small")
    info.size = 5
    out.write(info.tobuf(tarfile.USTAR_FORMAT))
    out.write(b"hello".ljust(512, b"\0"))
    out.write(bytes(1024))
    with open(os.path.join(directory, "pax-flood.tar"), "wb") as file:
        file.write(out.getvalue())


if __name__ == "__main__":
    main(sys.argv[1], int(sys.argv[2]))
