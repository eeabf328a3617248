#!/usr/bin/env bash
# Times Haul's zip creation and extraction against Info-ZIP on a generated tree and prints ours/theirs.
#
# usage: bench/archive.sh [HAUL_BINARY]   (default .build/release/haul; it must offer
#        `haul zip OUT.zip PATH...` and `haul extract ARCHIVE DEST`)
# env:   BENCH_SIZE_MIB (default 500) total size of the tree; BENCH_RUNS (default 2) best of N runs;
#        BENCH_SMALL_FILES (default 20000) files of a second tree, a few dozen bytes each in three
#        levels of folders, for the per-entry cost of extraction (0: skip it).
# needs: zip, unzip, coreutils. The tree lives in a temporary directory removed at exit.
set -euo pipefail

haul=${1:-.build/release/haul}
size_mib=${BENCH_SIZE_MIB:-500}
small_files=${BENCH_SMALL_FILES:-20000}
runs=${BENCH_RUNS:-2}
[[ -x $haul ]] || { echo "bench: '$haul' is not an executable; build it first (swift build -c release)" >&2; exit 2; }
for tool in zip unzip; do command -v "$tool" >/dev/null || { echo "bench: $tool is missing (apt-get install -y zip unzip)" >&2; exit 2; }; done

work=$(mktemp -d "${TMPDIR:-/tmp}/haul-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT

# 360 files of 1..8 units (a third random, a third text, a third base64 of random) and 200 small files.
generate() {
    local tree=$work/tree unit=$(( size_mib * 1024 * 1024 / 1620 ))
    mkdir -p "$tree"
    seq 1 800000 | sed 's/$/ the quick brown fox jumps over the lazy dog/' > "$work/text"
    head -c 64M /dev/urandom > "$work/random"
    base64 -w 76 "$work/random" > "$work/base64"
    for i in $(seq 0 359); do
        local dir=$tree/group-$(( i % 20 ))/sub-$(( i % 3 )) bytes=$(( (i % 8 + 1) * unit ))
        mkdir -p "$dir"
        case $(( i % 3 )) in
            0) head -c "$bytes" /dev/urandom > "$dir/file-$i.bin" ;;
            1) head -c "$bytes" "$work/text" > "$dir/file-$i.txt" ;;
            2) dd if="$work/base64" of="$dir/file-$i.b64" bs=1K skip=$(( i * 13 % 4096 )) count=$(( bytes / 1024 )) status=none ;;
        esac
    done
    mkdir -p "$tree/small" "$tree/empty-dir"
    for i in $(seq 0 199); do head -c $(( (i % 8 + 1) * 1024 )) "$work/base64" > "$tree/small/s-$i.txt"; done
    rm -f "$work/text" "$work/random" "$work/base64"
}

# Prints the best wall-clock seconds of `runs` runs of the command; `$cleanup` runs before each.
best() {
    local best_time=
    for _ in $(seq "$runs"); do
        eval "$cleanup"
        local start end
        start=$(date +%s.%N)
        "$@" >/dev/null
        end=$(date +%s.%N)
        best_time=$(awk -v a="$start" -v b="$end" -v c="$best_time" 'BEGIN { t = b - a; if (c == "" || t < c) c = t; printf "%.3f", c }')
    done
    echo "$best_time"
}

generate
total=$(du -sm "$work/tree" | cut -f1)
cat "$work"/tree/*/*/* "$work"/tree/small/* > /dev/null
echo "tree: $(find "$work/tree" -type f | wc -l) files, ${total} MiB; best of $runs runs, $(nproc) cores"

cleanup='rm -f "$work/theirs.zip"'
zip_theirs=$(cd "$work/tree" && best zip -q -6 -r "$work/theirs.zip" .)
cleanup='rm -f "$work/ours.zip"'
zip_ours=$(best "$haul" zip "$work/ours.zip" "$work/tree")
cleanup='rm -rf "$work/out-theirs"'
unzip_theirs=$(best unzip -q "$work/theirs.zip" -d "$work/out-theirs")
cleanup='rm -rf "$work/out-ours"'
unzip_ours=$(best "$haul" extract "$work/theirs.zip" "$work/out-ours")
diff -r "$work/out-theirs" "$work/out-ours" > /dev/null || { echo "bench: the two extractions differ" >&2; exit 1; }

# Many small entries: what each entry costs beyond its bytes (folders, names, metadata).
if (( small_files > 0 )); then
    for i in $(seq 0 $(( small_files - 1 ))); do
        echo "$work/small-tree/d$(( i % 10 ))/e$(( i % 7 ))/f$(( i % 5 ))/file$i.txt"
    done | awk '{ d = $0; sub(/\/[^\/]*$/, "", d); if (!(d in made)) { made[d] = 1; system("mkdir -p " d) } printf "content %d\n", NR > $0; close($0) }'
    (cd "$work/small-tree" && zip -q -6 -r "$work/small.zip" .)
    # Alternated (theirs, ours, theirs, …): a shared ext4 disk creates files slowly for a while
    # after mass deletes, which would land on whichever contender ran its rounds first.
    small_theirs= small_ours=
    for _ in $(seq "$runs"); do
        cleanup='rm -rf "$work/small-theirs"'
        t=$(runs=1 best unzip -q "$work/small.zip" -d "$work/small-theirs")
        cleanup='rm -rf "$work/small-ours"'
        o=$(runs=1 best "$haul" extract "$work/small.zip" "$work/small-ours")
        small_theirs=$(awk -v a="$t" -v b="$small_theirs" 'BEGIN { print (b == "" || a < b) ? a : b }')
        small_ours=$(awk -v a="$o" -v b="$small_ours" 'BEGIN { print (b == "" || a < b) ? a : b }')
    done
    diff -r "$work/small-theirs" "$work/small-ours" > /dev/null || { echo "bench: the two extractions of small files differ" >&2; exit 1; }
fi

report() { awk -v n="$1" -v o="$2" -v t="$3" 'BEGIN { printf "%-34s ours %7.2f s  theirs %7.2f s  ratio %.2f\n", n, o, t, o / t }'; }
report "create (zip -6 -r)" "$zip_ours" "$zip_theirs"
report "extract (unzip -q, Info-ZIP's zip)" "$unzip_ours" "$unzip_theirs"
(( small_files > 0 )) && report "extract-small ($small_files files, unzip -q)" "$small_ours" "$small_theirs"
echo "archive sizes: ours $(stat -c %s "$work/ours.zip") bytes, theirs $(stat -c %s "$work/theirs.zip") bytes"
