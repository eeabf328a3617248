#!/usr/bin/env bash
# Mirrors benchmark (issue 53): the same file on two loopback nginx mirrors, each held to the
# same rate, fetched by `haul get --metalink` (both mirrors), `haul get` of one mirror alone and
# `aria2c -M` with the same Metalink, in alternated rounds of one run (medians); then a
# corrupt-piece case, in which the second mirror serves one bad piece, reporting the bytes the
# mirrors sent (their access logs) over the file's size. Never asserts on timings: it prints a
# Markdown table with each ratio next to its target.
#
#   bench/mirrors.sh [HAUL_BINARY]          default .build/release/haul
#
# Environment (see bench/README.md, row "Mirrors"):
#   SIZE_MIB (256), RATE (each mirror's cap, nginx units: 4m = 4 MiB/s), CONNECTIONS (4: each
#   mirror serves at most this many requests at once, `limit_conn`, each at RATE / CONNECTIONS,
#   `limit_rate`, so more connections do not beat the cap; haul's host limit for each mirror
#   and aria2c's -x are set to it, both get twice as many in all), PIECE_KIB (1024, the
#   Metalink's piece length), ROUNDS (3: every round runs each contender once, in a rotated
#   order), BENCH_HTTP_PORT (18395: mirror A on 127.0.0.1 and B on 127.0.0.2, the next port, so
#   that every tool counts them as two hosts), BENCH_SEGMENT (haul's --segment-size; default
#   SIZE_MIB / (2 × CONNECTIONS) MiB: one segment per connection, see below; a number with
#   KiB, MiB or GiB), DATABASE_URL
#   (a PostgreSQL for haul; default: haul's embedded one, started untimed before the runs and
#   kept up between them).
# Needs nginx, aria2c, curl, python3, /usr/bin/time.
#
# nginx's limit_rate lets every request send one to two seconds' worth at once before it paces
# it, so a request must last far longer than a second for the cap to hold: at the defaults each
# of haul's segments (32 MiB) and each of aria2c's 8 splits takes about 32 s.
set -euo pipefail
haul=$(readlink -f "${1:-.build/release/haul}")
mib=${SIZE_MIB:-256}
rate=${RATE:-4m}
conns=${CONNECTIONS:-4}
piece=$((${PIECE_KIB:-1024} * 1024))
rounds=${ROUNDS:-3}
port_a=${BENCH_HTTP_PORT:-18395}
port_b=$((port_a + 1))
for tool in nginx aria2c curl python3 /usr/bin/time; do command -v "$tool" >/dev/null || { echo "bench: $tool missing" >&2; exit 2; }; done
[[ -x $haul ]] || { echo "bench: $haul is not executable; build it (swift build -c release)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/haul-mirrors-bench.XXXXXX")
cleanup() {
    local -; set +e
    [[ -f $work/nginx.pid ]] && nginx -c "$work/nginx.conf" -s stop 2>/dev/null
    # The embedded PostgreSQL this script started (kept up between runs), by its own pid file.
    local pidfile
    for pidfile in $(find "$work/haul-home" -name postmaster.pid 2>/dev/null); do kill -INT "$(head -1 "$pidfile")" 2>/dev/null; done
    sleep 1
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$work"
mkdir -p "$work/www" "$work/tmp" "$work/out"

segment_mib=${BENCH_SEGMENT:-$((mib / (2 * conns) > 1 ? mib / (2 * conns) : 1))MiB}
segment=(--segment-size "$segment_mib")

# The file, and a copy with one byte changed (served by mirror B in the corrupt case) 100 bytes
# into haul's second segment, the first one haul gives mirror B, so that haul meets the bad piece.
head -c "${mib}M" /dev/urandom >"$work/www/file.bin"
python3 - "$work/www/file.bin" "$work/www/bad.bin" "$segment_mib" <<'PY'
import re, sys
source, bad, segment = sys.argv[1], sys.argv[2], sys.argv[3]
number, unit = re.fullmatch(r"(\d+)(KiB|MiB|GiB)?", segment).groups()
offset = int(number) * {"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, None: 1}[unit] + 100
data = bytearray(open(source, "rb").read())
data[min(offset, len(data) - 1)] ^= 0xFF
open(bad, "wb").write(data)
PY

# Per-connection rate and per-server connection cap: one mirror never serves more than RATE.
per_connection=$(python3 -c "import sys; r = sys.argv[1].lower(); m = {'k': 1024, 'm': 1 << 20}.get(r[-1], 1); print(int(float(r.rstrip('km')) * m) // int(sys.argv[2]))" "$rate" "$conns")
cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  sendfile on; tcp_nopush on; default_type application/octet-stream;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp; uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  log_format sent '\$server_port \$status \$body_bytes_sent';
  access_log $work/access.log sent;
  limit_conn_zone \$server_port zone=mirror:1m;
  server { listen 127.0.0.1:$port_a; root $work/www; limit_conn mirror $conns; limit_rate $per_connection; }
  server { listen 127.0.0.2:$port_b; root $work/www; limit_conn mirror $conns; limit_rate $per_connection; }
}
CONF
nginx -c "$work/nginx.conf"
for _ in $(seq 50); do [[ -s $work/nginx.pid ]] && break; sleep 0.1; done

# metalink NAME SECOND_PATH [whole]: a Metalink of file.bin with its sha-256 and piece digests
# (with "whole": the file's sha-256 alone), mirror A first (priority 1), then mirror B's
# SECOND_PATH.
metalink() {
    python3 - "$work/www/file.bin" "$piece" "http://127.0.0.1:$port_a/file.bin" "http://127.0.0.2:$port_b/$2" "${3:-pieces}" >"$work/$1" <<'PY'
import hashlib, sys
path, piece, first, second, kind = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5]
data = open(path, "rb").read()
pieces = "".join("<hash>%s</hash>" % hashlib.sha256(data[i:i + piece]).hexdigest() for i in range(0, len(data), piece))
pieces = '<pieces length="%d" type="sha-256">%s</pieces>' % (piece, pieces) if kind == "pieces" else ""
print('<?xml version="1.0" encoding="UTF-8"?>\n<metalink xmlns="urn:ietf:params:xml:ns:metalink"><file name="mirrored.bin">'
      '<size>%d</size><hash type="sha-256">%s</hash>%s'
      '<url priority="1">%s</url><url priority="2">%s</url></file></metalink>'
      % (len(data), hashlib.sha256(data).hexdigest(), pieces, first, second))
PY
}
metalink good.meta4 file.bin
metalink corrupt.meta4 bad.bin
# aria2c checks a Metalink's whole-file hash only when it has no piece hashes
# (DownloadContext::isChecksumVerificationNeeded), where haul checks both: this one makes
# both tools read the whole file back once.
metalink whole.meta4 file.bin whole

[[ -n ${DATABASE_URL:-} ]] || export HAUL_HOME=$work/haul-home HAUL_EMBEDDED_LINGER=10m
"$haul" migrate >/dev/null
# Each mirror's host limit is its connection cap, so haul never asks a mirror for more than it serves at once.
"$haul" host-limit set "127.0.0.1:$port_a" "$conns" >/dev/null
"$haul" host-limit set "127.0.0.2:$port_b" "$conns" >/dev/null

aria=(aria2c --quiet --allow-overwrite=true --auto-file-renaming=false -x "$conns" -s $((2 * conns)) -k 1M)
# run_tool NAME MIRRORED_FILE CMD…: one timed run, output checked against the source; appends
# "seconds bytes_sent" to $work/r-NAME (bytes: what both mirrors' logs grew by).
run_tool() {
    local name=$1 saved=$2 t0 t1 sent; shift 2
    rm -rf "$work/out" && mkdir -p "$work/out"
    sync
    : >"$work/access.log"
    t0=$(date +%s.%N)
    /usr/bin/time -f '%U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || echo "bench: $name failed: $(tail -2 "$work/err")" >&2
    t1=$(date +%s.%N)
    cmp -s "$work/out/$saved" "$work/www/file.bin" || echo "bench: $name saved a file that differs from the source" >&2
    sleep 0.2   # nginx logs a request when it ends
    sent=$(awk '{ s += $3 } END { print s + 0 }' "$work/access.log")
    awk -v a="$t0" -v b="$t1" -v s="$sent" 'BEGIN { printf "%.3f %d\n", b - a, s }' >>"$work/r-$name"
}
median() { sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
maximum() { sort -n -k"$2" "$1" | tail -1 | awk -v c="$2" '{ print $c }'; }

names=(metalink one aria2c)
for round in $(seq "$rounds"); do
    for i in 0 1 2; do   # round r starts with contender r mod 3: each leads, follows and ends as often
        case ${names[$(((round + i) % 3))]} in
        metalink) run_tool metalink mirrored.bin "$haul" get --metalink "$work/good.meta4" -o "$work/out/" -x $((2 * conns)) --quiet "${segment[@]}" ;;
        one) run_tool one file.bin "$haul" get "http://127.0.0.1:$port_a/file.bin" -o "$work/out/file.bin" -x "$conns" --quiet "${segment[@]}" ;;
        aria2c) run_tool aria2c mirrored.bin "${aria[@]}" -d "$work/out" -M "$work/good.meta4" ;;
        esac
    done
    for i in 0 1; do   # which of the two goes first alternates by round
        if (((round + i) % 2)); then
            run_tool metalink-whole mirrored.bin "$haul" get --metalink "$work/whole.meta4" -o "$work/out/" -x $((2 * conns)) --quiet "${segment[@]}"
        else
            run_tool aria2c-whole mirrored.bin "${aria[@]}" -d "$work/out" -M "$work/whole.meta4"
        fi
    done
    run_tool corrupt mirrored.bin "$haul" get --metalink "$work/corrupt.meta4" -o "$work/out/" -x $((2 * conns)) --quiet "${segment[@]}"
    run_tool aria2c-corrupt mirrored.bin "${aria[@]}" -d "$work/out" -M "$work/corrupt.meta4"
done

size=$((mib << 20))
one=$(median "$work/r-one" 1) aria=$(median "$work/r-aria2c" 1)
echo "| contender | seconds (median) | MiB/s | vs one mirror | vs aria2c -M | origin bytes / file (worst) | target |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | --- |"
row() {   # row NAME LABEL TARGET
    awk -v t="$2" -v w="$(median "$work/r-$1" 1)" -v b="$(maximum "$work/r-$1" 2)" -v one="$one" -v aria="$aria" -v s="$size" -v g="$3" 'BEGIN {
        printf "| %s | %.2f | %.1f | %.2f× | %.2f× | %.3f | %s |\n", t, w, s / 1048576 / w, one / w, aria / w, b / s, g
    }'
}
row metalink "haul get --metalink (2 mirrors)" "≥ 1.8× one mirror's rate, ≥ aria2c -M"
row one "haul get (mirror A alone)" ""
row aria2c "aria2c -M (2 mirrors)" ""
row metalink-whole "haul get --metalink, whole-file hash only" "(both tools check the whole-file hash)"
row aria2c-whole "aria2c -M, whole-file hash only" ""
row corrupt "haul get --metalink, mirror B serves a bad piece" "origin bytes ≤ 1.10× the file"
row aria2c-corrupt "aria2c -M, mirror B serves a bad piece" ""
echo
echo "$mib MiB, $((piece / 1024)) KiB pieces; each mirror $rate/s at most ($conns connections × $per_connection B/s, nginx limit_conn + limit_rate);" \
    "haul -x $((2 * conns)) (host limit $conns a mirror)${segment[*]:+ ${segment[*]}}, aria2c -x $conns -s $((2 * conns)) -k 1M; median of $rounds alternated round(s)," \
    "speeds relative (× > 1: faster); $(nproc) cores; $(aria2c --version | head -1); $(date -u +%Y-%m-%dT%H:%MZ)"
