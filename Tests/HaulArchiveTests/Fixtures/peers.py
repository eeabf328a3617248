"""Independent archive peers for the tests: Python's zipfile, tarfile and gzip.

usage: peers.py COMMAND ARGS...  (see the functions below)
"""
import gzip
import os
import struct
import sys
import tarfile
import zipfile
import zlib


def walk(src):
    """Yields (path, arcname) for every directory and file under src, relative to it."""
    for root, dirs, files in os.walk(src):
        dirs.sort()
        for name in sorted(dirs):
            path = os.path.join(root, name)
            yield path, os.path.relpath(path, src) + "/"
        for name in sorted(files):
            path = os.path.join(root, name)
            yield path, os.path.relpath(path, src)


def zip_tree(src, out, force_zip64=False):
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, arcname in walk(src):
            if arcname.endswith("/") or not force_zip64:
                archive.write(path, arcname)
            else:
                info = zipfile.ZipInfo.from_file(path, arcname)
                info.compress_type = zipfile.ZIP_DEFLATED
                with open(path, "rb") as source, archive.open(info, "w", force_zip64=True) as target:
                    target.write(source.read())


def zip_stream(src):
    """Writes to stdout, which the caller makes a pipe: zipfile then uses data descriptors."""
    with zipfile.ZipFile(sys.stdout.buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, arcname in walk(src):
            archive.write(path, arcname)


def zip_many(out, count):
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as archive:
        for index in range(int(count)):
            archive.writestr(f"d{index % 100:02d}/f{index}", str(index))


def extract(archive, dest):
    with zipfile.ZipFile(archive) as source:
        bad = source.testzip()
        if bad is not None:
            sys.exit(f"bad entry {bad}")
        source.extractall(dest)
        for info in source.infolist():
            mode = info.external_attr >> 16
            if mode and not info.is_dir():
                os.chmod(os.path.join(dest, info.filename), mode & 0o777)


def count(archive):
    with zipfile.ZipFile(archive) as source:
        print(len(source.infolist()))


def zip_unsigned_descriptors(out):
    """Two deflated entries whose sizes and CRC follow the data in 12-byte descriptors without a signature
    (APPNOTE 4.3.9.3 allows leaving it out; zipfile cannot write this, so the bytes are laid out here)."""
    body, central = bytearray(), bytearray()
    for name, content in ((b"first.txt", b"first entry\n" * 50), (b"dir/second.txt", b"second entry\n" * 70)):
        packer = zlib.compressobj(6, zlib.DEFLATED, -15)
        data = packer.compress(content) + packer.flush()
        crc, offset = zlib.crc32(content), len(body)
        body += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0x808, 8, 0, 0x21, 0, 0, 0, len(name), 0) + name + data
        body += struct.pack("<III", crc, len(data), len(content))
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, 3 << 8 | 30, 20, 0x808, 8, 0, 0x21, crc, len(data), len(content),
            len(name), 0, 0, 0, 0, 0o100644 << 16, offset) + name
    end = struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, 2, 2, len(central), len(body), 0)
    with open(out, "wb") as target:
        target.write(bytes(body + central + end))


def tar_pax(src, out):
    with tarfile.open(out, "w:gz", format=tarfile.PAX_FORMAT) as archive:
        archive.add(src, arcname=".")


def gzip_file(src, out):
    with open(src, "rb") as source, gzip.open(out, "wb") as target:
        target.write(source.read())


if __name__ == "__main__":
    command, *arguments = sys.argv[1:]
    {
        "zip": zip_tree,
        "zip64": lambda src, out: zip_tree(src, out, force_zip64=True),
        "zip-stream": zip_stream,
        "zip-many": zip_many,
        "zip-unsigned-descriptors": zip_unsigned_descriptors,
        "extract": extract,
        "count": count,
        "tar-pax": tar_pax,
        "gzip": gzip_file,
    }[command](*arguments)
