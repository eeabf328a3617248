"""Writes the hostile archive corpus into OUTDIR: one file per case, built byte by byte.

usage: hostile.py OUTDIR
Every case must be refused as a whole by Haul's extractor; HostileArchiveTests says with which code.
"""
import io
import os
import struct
import sys
import tarfile
import zlib

UNIX_FILE = 0o100644 << 16
UNIX_LINK = 0o120777 << 16


def deflate(data):
    packer = zlib.compressobj(6, zlib.DEFLATED, -15)
    return packer.compress(data) + packer.flush()


def entry(name, content=b"", method=0, **overrides):
    """One entry; overrides patch fields of either header (local_name, local_method, offset, csize, ...)."""
    fields = dict(
        name=name, data=deflate(content) if method == 8 else content, method=method, flags=0x800,
        crc=zlib.crc32(content), usize=len(content), attr=UNIX_FILE, made_by=(3 << 8) | 30)
    fields.update(overrides)
    return fields


def build(entries, comment=b"", trailing=b""):
    out, central = bytearray(), bytearray()
    for e in entries:
        offset = len(out)
        local_name = e.get("local_name", e["name"])
        out += struct.pack(
            "<IHHHHHIIIHH", 0x04034B50, 20, e["flags"], e.get("local_method", e["method"]), 0, 0x21, e.get("local_crc", e["crc"]),
            e.get("local_csize", len(e["data"])), e.get("local_usize", e["usize"]), len(local_name), 0)
        out += local_name + e["data"]
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII", 0x02014B50, e["made_by"], 20, e["flags"], e["method"], 0, 0x21, e["crc"],
            e.get("csize", len(e["data"])), e["usize"], len(e["name"]), 0, 0, 0, 0, e["attr"], e.get("offset", offset))
        central += e["name"]
    start = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(entries), len(entries), len(central), start, len(comment))
    return bytes(out + comment + trailing)


def tar(members, compressed=False):
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz" if compressed else "w", format=tarfile.USTAR_FORMAT) as archive:
        for info, data in members:
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


def tar_member(name, kind=tarfile.REGTYPE, link=""):
    info = tarfile.TarInfo(name)
    info.type, info.linkname, info.mode = kind, link, 0o644
    return info


def cases():
    ok = entry(b"ok.txt", b"fine\n")
    bomb = deflate(b"\0" * 1_000_000)
    yield "absolute.zip", build([ok, entry(b"/tmp/haul-evil", b"x")])
    yield "dotdot.zip", build([entry(b"../evil", b"x")])
    yield "dotdot-inner.zip", build([ok, entry(b"a/../../evil", b"x")])
    # A "/" then a combining mark (U+0301) is one Character in Swift, but the kernel cuts at the "/".
    yield "dotdot-combining.zip", build([ok, entry("../\u0301evil".encode(), b"x")])
    yield "absolute-combining.zip", build([ok, entry("/\u0301tmp/haul-evil".encode(), b"x")])
    yield "backslash.zip", build([entry(b"a\\..\\evil", b"x")])
    yield "drive.zip", build([entry(b"C:/evil", b"x")])
    yield "nul.zip", build([entry(b"a\0b", b"x")])
    yield "empty-name.zip", build([entry(b"", b"x")])
    yield "duplicate.zip", build([ok, entry(b"ok.txt", b"other")])
    yield "duplicate-dotted.zip", build([ok, entry(b"./ok.txt", b"other")])
    yield "file-then-child.zip", build([entry(b"a", b"x"), entry(b"a/b", b"y")])
    yield "symlink.zip", build([ok, entry(b"link", b"/etc/passwd", attr=UNIX_LINK)])
    yield "symlink-absolute.zip", build([entry(b"link", b"/etc", attr=UNIX_LINK)])
    yield "symlink-chain.zip", build([entry(b"b", b".", attr=UNIX_LINK), entry(b"a", b"b/..", attr=UNIX_LINK)])
    yield "symlink-chain-file.zip", build([
        entry(b"b", b".", attr=UNIX_LINK), entry(b"a", b"b/..", attr=UNIX_LINK), entry(b"a/f", b"escaped")])
    yield "symlink-dotdot.zip", build([entry(b"d/", b""), entry(b"d/up", b"../..", attr=UNIX_LINK)])
    yield "symlink-combining.zip", build([entry(b"d/", b""), entry(b"d/up", "../../\u0301x".encode(), attr=UNIX_LINK)])
    yield "overlap-shared.zip", build([ok, entry(b"twin.txt", b"fine\n", local_name=b"ok.txt", offset=0)])
    second = entry(b"second.txt", b"0123456789")
    yield "overlap-spans.zip", build([entry(b"first.txt", b"A" * 10, csize=10 + 30 + 10 + 10, usize=60), second])
    yield "overlap-directory.zip", build([entry(b"big.txt", b"A" * 10, csize=30, usize=30)])
    yield "name-mismatch.zip", build([entry(b"ok.txt", b"fine\n", local_name=b"ko.txt")])
    yield "method-mismatch.zip", build([entry(b"ok.txt", b"fine\n", local_method=8)])
    yield "size-mismatch.zip", build([entry(b"ok.txt", b"fine\n", local_usize=4, local_csize=4)])
    yield "dot-with-data.zip", build([ok, entry(b".", b"hidden data")])
    yield "inflates-past-size.zip", build([entry(b"bomb.bin", b"", method=8, data=bomb, usize=1000, crc=0)])
    # Declares three times what its ~1 KiB of deflate data could hold at deflate's ceiling (1032:1).
    yield "declares-past-deflate.zip", build([entry(b"bomb.bin", b"", method=8, data=bomb, usize=3_000_000, crc=0)])
    yield "crc-mismatch.zip", build([entry(b"ok.txt", b"fine\n", crc=1234)])
    yield "unsupported-method.zip", build([entry(b"x.bz2", b"data", method=12)])
    yield "encrypted.zip", build([entry(b"secret.txt", b"data", flags=0x801)])
    yield "large.zip", build([entry(b"big.bin", b"\0" * 10_000, method=8)])
    yield "many.zip", build([entry(b"f%d" % index, b"x") for index in range(5)])
    yield "trailing-junk.zip", build([ok], trailing=b"JUNK" * 8)
    valid = build([ok, entry(b"more.txt", b"more data " * 100, method=8)])
    yield "truncated.zip", valid[: len(valid) // 2]
    yield "pk-garbage.zip", b"PK\x03\x04" + bytes(range(256)) * 4
    yield "garbage.bin", bytes((index * 7919) % 251 for index in range(4096))
    yield "dotdot.tar", tar([(tar_member("../evil"), b"x")])
    yield "dotdot-combining.tar", tar([(tar_member("ok.txt"), b"fine"), (tar_member("../\u0301evil"), b"x")])
    yield "absolute.tar.gz", tar([(tar_member("/tmp/haul-evil"), b"x")], compressed=True)
    yield "symlink.tar", tar([(tar_member("link", tarfile.SYMTYPE, "/etc/passwd"), b"")])
    yield "symlink-chain.tar", tar([
        (tar_member("b", tarfile.SYMTYPE, "."), b""), (tar_member("a", tarfile.SYMTYPE, "b/.."), b""),
        (tar_member("a/f"), b"escaped")])
    yield "hardlink.tar", tar([(tar_member("ok.txt"), b"fine"), (tar_member("hard", tarfile.LNKTYPE, "ok.txt"), b"")])
    yield "fifo.tar", tar([(tar_member("pipe", tarfile.FIFOTYPE), b"")])
    yield "dot-with-data.tar", tar([(tar_member("ok.txt"), b"fine"), (tar_member("."), b"hidden data")])
    yield "duplicate.tar.gz", tar([(tar_member("a.txt"), b"1"), (tar_member("a.txt"), b"2")], compressed=True)
    full = tar([(tar_member("ok.txt"), b"fine" * 1000)], compressed=True)
    yield "truncated.tar.gz", full[: len(full) - 12]
    yield "trailing-garbage.gz", full + b"not gzip"


if __name__ == "__main__":
    os.makedirs(sys.argv[1], exist_ok=True)
    for name, data in cases():
        with open(os.path.join(sys.argv[1], name), "wb") as out:
            out.write(data)
