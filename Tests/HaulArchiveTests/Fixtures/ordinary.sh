#!/bin/sh
# Writes one ordinary but highly compressible archive with the tool a user would use, and what
# that tool family extracts from it, for the extraction-defaults tests.
#
# usage: ordinary.sh KIND OUTDIR
#   KIND: infozip.zip | python.zip | bsdtar.zip | zeros.tar.gz | zeros.bin.gz | sparse.tar | small-sparse.tar
# Writes OUTDIR/KIND (the archive) and OUTDIR/expected/ (unzip's, GNU tar's or gzip's extraction).
# The zeros are 64 MiB (about 1000:1 under deflate); the sparse file is 1 GiB (64 MiB for
# small-sparse.tar) with a few bytes of data.
set -eu
kind=$1
out=$2
python=${HAUL_TEST_PYTHON:-python3}
mkdir -p "$out/source" "$out/expected"
cd "$out"
case "$kind" in
sparse.tar)
    truncate -s 1G source/disk.img
    printf 'start of the disk' | dd of=source/disk.img conv=notrunc status=none
    printf 'in the middle' | dd of=source/disk.img bs=1 seek=536870912 conv=notrunc status=none
    printf 'at the end' | dd of=source/disk.img bs=1 seek=1073741814 conv=notrunc status=none
    ;;
small-sparse.tar)
    truncate -s 64M source/disk.img
    printf 'start of the disk' | dd of=source/disk.img conv=notrunc status=none
    printf 'at the end' | dd of=source/disk.img bs=1 seek=67108854 conv=notrunc status=none
    ;;
*)
    head -c 64M /dev/zero >source/zeros.bin
    ;;
esac
case "$kind" in
infozip.zip) (cd source && zip -q "../$kind" zeros.bin) ;;
python.zip)
    "$python" -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1], "w", zipfile.ZIP_DEFLATED) as z:
    z.write("source/zeros.bin", "zeros.bin")' "$kind"
    ;;
bsdtar.zip) bsdtar --format zip -cf "$kind" -C source zeros.bin ;;
zeros.tar.gz) tar -czf "$kind" -C source zeros.bin ;;
zeros.bin.gz) gzip -c source/zeros.bin >"$kind" ;;
sparse.tar | small-sparse.tar) tar --sparse -cf "$kind" -C source disk.img ;;
*) echo "unknown kind $kind" >&2 && exit 2 ;;
esac
case "$kind" in
*.zip) unzip -q "$kind" -d expected ;;
*.tar | *.tar.gz) tar -xf "$kind" -C expected ;;
*.gz) gzip -dc "$kind" >expected/zeros.bin ;;
esac
rm -r source
