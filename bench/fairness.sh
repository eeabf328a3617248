#!/usr/bin/env bash
# Small files behind a big download from a slow origin, by hand (issue 51's target: done within
# 3 s, the big file still exact). Not a bench/run section; prints a Markdown table, never asserts
# on a figure.
#
#   bench/fairness.sh [HAUL_BINARY]          # ROUNDS=3 SIZE_MIB=512 RATE=4m FILES=200 SMALL_KIB=4
#   ROUNDS=1 SIZE_MIB=64 bench/fairness.sh /tmp/small51-release/release/haul   # a quick smoke
#
# Its own PostgreSQL (FAIR_PG_PORT, 15830) and nginx under FAIR_WORK: one server on 127.0.0.1 at
# FAIR_HTTP_PORT (18830) serves one random SIZE_MIB MiB file, each request held to RATE per
# connection (`limit_rate`); another at the next port (another origin host) serves FILES random
# files of SMALL_KIB KiB; with SAME_ORIGIN=1 the big file's server serves them too, under
# /small/ and at full speed: one origin host, so that the batch waits behind a download of its
# own origin. Two `haul worker`s at their defaults store into a folder. A round:
# enqueue the big file, wait until one of its segments runs (polled every 0.1 s), then time
# `enqueue --manifest` of the small files as a batch + `haul wait --batch` ("small batch"); then
# wait for the big file, time it from its enqueue ("big file") and `cmp` it with the source; the
# small files are compared too; a round whose big file finished before the batch did not test
# fairness (the last row counts those that did: at 4m a connection and the default host limit a
# 128 MiB file takes about 4 s). ROUNDS rounds on a fresh database each (tables truncated),
# medians printed. The same batch alone (no big download) runs first in each round, for scale.
# Without a HAUL_BINARY it builds one (release, scratch /tmp/bench-build).
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${ROUNDS:-3}
size_mib=${SIZE_MIB:-512}
rate=${RATE:-4m}
files=${FILES:-200}
small_kib=${SMALL_KIB:-4}
work=${FAIR_WORK:-/tmp/haul-bench-fairness}
pg_port=${FAIR_PG_PORT:-15830}
big_port=${FAIR_HTTP_PORT:-18830}
small_port=$((big_port + 1))
same_origin=${SAME_ORIGIN:-0}
[[ $same_origin == [01] ]] || { echo "fairness: SAME_ORIGIN=$same_origin is neither 0 nor 1" >&2; exit 2; }
small_base=http://127.0.0.1:$small_port
[[ $same_origin == 1 ]] && small_base=http://127.0.0.1:$big_port/small
source "$here/bench/lib/servers.sh"
for v in rounds size_mib files small_kib; do
    [[ ${!v} =~ ^[1-9][0-9]*$ ]] || { echo "fairness: ${v^^}=${!v} is not a whole number from 1" >&2; exit 2; }
done
[[ $rate =~ ^[1-9][0-9]*[km]?$ ]] || { echo "fairness: RATE=$rate is not an nginx rate such as 4m or 512k" >&2; exit 2; }

if [[ -n ${1:-} ]]; then
    haul=$1
    [[ -x $haul ]] || { echo "fairness: $haul is not executable" >&2; exit 2; }
else
    haul=$(bench_haul_binary "$here")
fi

pids=()
stop() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bench_pg_stop "$work"
    bench_nginx_stop "$work"
    return 0
}
trap stop EXIT
stop
rm -rf "$work/pg" "$work/nginx" "$work/sock" "$work/out" "$work/runs"
mkdir -p "$work/runs" "$work/data/big" "$work/data/small"
big=$work/data/big/big-$size_mib.bin
[[ -f $big ]] || head -c $((size_mib << 20)) /dev/urandom >"$big"
if [[ ! -f $work/data/small/.complete-$files-$small_kib ]]; then
    rm -rf "$work/data/small" && mkdir -p "$work/data/small"
    head -c $((files * small_kib * 1024)) /dev/urandom | split -a 6 -d -b $((small_kib * 1024)) - "$work/data/small/f-"
    touch "$work/data/small/.complete-$files-$small_kib"
fi
for f in "$work"/data/small/f-*; do echo "$small_base/${f##*/} ${f##*/}"; done >"$work/manifest.txt"

bench_pg_start "$work" "$pg_port" "$work/sock" -c max_connections=200
url=postgresql://postgres@127.0.0.1:$pg_port/postgres
bench_nginx_start "$work" "server { listen 127.0.0.1:$big_port; root $work/data/big; limit_rate $rate;
    location /small/ { alias $work/data/small/; limit_rate 0; } }
  server { listen 127.0.0.1:$small_port; root $work/data/small; }"
DATABASE_URL=$url "$haul" migrate >/dev/null
psqlq() { psql -X -q -At -v ON_ERROR_STOP=1 "$url" "$@"; }
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }

# small_batch NAME: times enqueue of the manifest as batch NAME + `wait --batch`, checks the files
small_batch() {
    local t0 took
    t0=$(now)
    DATABASE_URL=$url "$haul" enqueue --manifest "$work/manifest.txt" --batch "$1" >/dev/null
    DATABASE_URL=$url "$haul" wait --batch "$1" --timeout 10m >/dev/null 2>&1
    took=$(since "$t0")
    diff -rq -x '.complete-*' -x 'big.bin*' "$work/data/small" "$work/out" >/dev/null 2>&1 || { echo "fairness: the small files differ from the source" >&2; exit 1; }
    echo "$took"
}

for ((round = 1; round <= rounds; round++)); do
    psqlq -c "SET client_min_messages = warning" -c "TRUNCATE transfers, batches, segments, transfer_events CASCADE" \
        -c "UPDATE origin_hosts SET busy = 0" >/dev/null
    rm -rf "$work/out" && mkdir -p "$work/out"
    pids=()
    for w in 1 2; do
        DATABASE_URL=$url "$haul" worker --storage "$work/out" >"$work/runs/worker-$round-$w.log" 2>&1 &
        pids+=($!)
    done
    sleep 1.5
    alone=$(small_batch "alone-$round")
    rm -rf "$work/out"/f-*
    psqlq -c "DELETE FROM transfers" >/dev/null
    t_big=$(now)
    id=$(DATABASE_URL=$url "$haul" enqueue "http://127.0.0.1:$big_port/${big##*/}" --dest big.bin --json | tr -dc 0-9)
    until [[ $(psqlq -c "SELECT count(*) FROM segments WHERE transfer_id = $id AND state = 'running'") -gt 0 ]]; do
        (($(awk -v a="$t_big" -v b="$(now)" 'BEGIN { print (b - a > 60) }'))) && { echo "fairness: the big file never ran" >&2; exit 1; }
        sleep 0.1
    done
    behind=$(small_batch "behind-$round")
    overlapped=no
    [[ $(psqlq -c "SELECT state FROM transfers WHERE id = $id") == done ]] || overlapped=yes
    DATABASE_URL=$url "$haul" wait "$id" --timeout 60m >/dev/null 2>&1 || true
    big_s=$(since "$t_big")
    state=$(psqlq -c "SELECT state FROM transfers WHERE id = $id")
    exact=no
    [[ $state == done ]] && cmp -s "$big" "$work/out/big.bin" && exact=yes
    echo "$alone $behind $big_s $exact $overlapped" >>"$work/runs/rounds"
    kill "${pids[@]}" && wait "${pids[@]}" 2>/dev/null || true
    pids=()
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
origin="another origin"
[[ $same_origin == 1 ]] && origin="the same origin"
echo "| $files × $small_kib KiB of $origin behind $size_mib MiB at $rate per connection, $rounds rounds (medians) | seconds |"
echo "|---|---:|"
echo "| small batch alone (enqueue → wait --batch) | $(cut -d' ' -f1 "$work/runs/rounds" | median) |"
echo "| small batch behind the big download | $(cut -d' ' -f2 "$work/runs/rounds" | median) |"
echo "| big file (enqueue → done) | $(cut -d' ' -f3 "$work/runs/rounds" | median) |"
echo "| big file exact (cmp), rounds | $(cut -d' ' -f4 "$work/runs/rounds" | grep -c yes || true) of $rounds |"
echo "| big file still running when the batch was done, rounds | $(cut -d' ' -f5 "$work/runs/rounds" | grep -c yes || true) of $rounds |"
