#!/usr/bin/env bash
# How the cost of a file grows with the length of its list (issue 51: cheap per file at any size),
# by hand (not a bench/run section).
#
#   bench/long-list.sh ROUNDS BINARY...      e.g. bench/long-list.sh 2 /tmp/old/haul /tmp/new/haul
#
# Lists of each length of LENGTHS ("5000 15000 50000") random 4 KiB files, served by nginx
# (BENCH_HTTP_PORT, 18870) and written into tmpfs. Each round runs, for each length, every binary
# in turn (A B A B …: a shared machine's speed drifts), each in two ways, on a fresh database of its
# own PostgreSQL (BENCH_PG_PORT, 15670; state under BENCH_WORK): tables truncated, then VACUUM
# ANALYZE, so that the statistics are a young database's, older than every row the run writes.
#   get    `haul get -q -i LIST` in an empty folder (one process, DATABASE_URL), with its peak RSS;
#   fleet  two `haul worker`s started untimed, then `enqueue --manifest` + `wait --batch` timed,
#          with the enqueue's peak RSS.
# Prints medians per binary: seconds and microseconds a file at each length, with the growth:
# the microseconds a file at that length over those at the first (1.00: a file costs the same
# in a longer list); and the get's and the enqueue's peak RSS. Never asserts on a figure. The middle length
# matters: a plan made from a young database's statistics may read the whole table for each
# batch while the table is small enough to look cheap to read, and not once it is larger.
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
source "$bench/lib/servers.sh"
bench_ab_arguments long-list "$@"
rounds=$1
shift
lengths=(${LENGTHS:-5000 15000 50000})
for n in "${lengths[@]}"; do [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "long-list: '$n' is not a whole number from 1 (LENGTHS)" >&2; exit 2; }; done
long=$(printf '%s\n' "${lengths[@]}" | sort -n | tail -1)
work=${BENCH_WORK:-/tmp/haul-bench-long-list}
pg_port=${BENCH_PG_PORT:-15670}
http_port=${BENCH_HTTP_PORT:-18870}
export PGOPTIONS='-c client_min_messages=warning'
data=$bench/data/list-$long-4096

bench_random_files "$data" "$long" 4096

pids=()
stop() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
    bench_pg_stop "$work"
    bench_nginx_stop "$work"
    rm -rf /dev/shm/haul-long-list-*
    return 0
}
trap stop EXIT
stop
rm -rf "$work" && mkdir -p "$work/runs"
bench_pg_start "$work" "$pg_port" "$work/sock" -c max_connections=200 -c shared_buffers=256MB
bench_nginx_start "$work" "server { listen 127.0.0.1:$http_port; root $bench/data; }"
for n in "${lengths[@]}"; do
    ls "$data" | awk -v n="$n" -v base="http://127.0.0.1:$http_port/${data##*/}/" '/^f-/ && taken++ < n { print base $1 " " $1 }' >"$work/manifest-$n.txt"
    cut -d' ' -f1 "$work/manifest-$n.txt" >"$work/urls-$n.txt"
done
find "$data" -name 'f-*' -exec cat {} + >/dev/null   # into the page cache
for ((i = 1; i <= $#; i++)); do psql -X -q "postgresql://postgres@127.0.0.1:$pg_port/postgres" -c "CREATE DATABASE list$i"; done

# fresh URL: empties the database at URL, takes its statistics anew, and writes out what the
# runs before left to write (a checkpoint after a long list's run took the next run's time)
fresh() {
    psql -X -q -v ON_ERROR_STOP=1 "$1" -c "TRUNCATE transfers, batches, segments, transfer_events CASCADE" \
        -c "UPDATE origin_hosts SET busy = 0" -c "VACUUM ANALYZE" -c "CHECKPOINT"
    sync
}
(cd "$data" && ls | grep '^f-' | xargs sha1sum) >"$work/sums"
# check OUT N WHO: OUT holds the first N files, each as served, or the run stops saying WHO failed
check() {
    [[ $(ls "$1" | wc -l) == "$2" ]] && (cd "$1" && head -n "$2" "$work/sums" | sha1sum -c --quiet >/dev/null 2>&1) ||
        { echo "long-list: $3 did not reproduce the $2 files" >&2; exit 1; }
}

# get BINARY TAG N: appends "seconds peak_rss_kib" to $work/runs/get-TAG-N
get() {
    local haul=$1 url=postgresql://postgres@127.0.0.1:$pg_port/list$2 out t0 t1
    fresh "$url"
    out=$(mktemp -d /dev/shm/haul-long-list-XXXX)
    t0=$(date +%s.%N)
    (cd "$out" && DATABASE_URL=$url /usr/bin/time -f '%M' -o "$work/get.time" "$haul" get -q -i "$work/urls-$3.txt" 2>"$work/get.err") ||
        { echo "long-list: $haul get failed: $(tail -1 "$work/get.err")" >&2; exit 1; }
    t1=$(date +%s.%N)
    check "$out" "$3" "$haul get"
    rm -rf "$out"
    awk -v a="$t0" -v b="$t1" '{ printf "%.3f %d\n", b - a, $1 }' "$work/get.time" >>"$work/runs/get-$2-$3"
}

# fleet BINARY TAG N: appends "seconds enqueue_peak_rss_kib" to $work/runs/fleet-TAG-N
fleet() {
    local haul=$1 url=postgresql://postgres@127.0.0.1:$pg_port/list$2 out batch=b$RANDOM$RANDOM t0 t1 w
    fresh "$url"
    out=$(mktemp -d /dev/shm/haul-long-list-XXXX)
    pids=()
    for w in 1 2; do
        DATABASE_URL=$url "$haul" worker --storage "$out" >"$work/worker-$w.log" 2>&1 &
        pids+=($!)
    done
    sleep 1.5
    t0=$(date +%s.%N)
    DATABASE_URL=$url /usr/bin/time -f '%M' -o "$work/enqueue.time" "$haul" enqueue --manifest "$work/manifest-$3.txt" --batch "$batch" >/dev/null
    DATABASE_URL=$url "$haul" wait --batch "$batch" --timeout 30m 2>/dev/null || { echo "long-list: $haul's fleet did not finish the batch" >&2; exit 1; }
    t1=$(date +%s.%N)
    kill "${pids[@]}" && wait "${pids[@]}" 2>/dev/null || true
    pids=()
    check "$out" "$3" "$haul's fleet"
    rm -rf "$out"
    awk -v a="$t0" -v b="$t1" '{ printf "%.3f %d\n", b - a, $1 }' "$work/enqueue.time" >>"$work/runs/fleet-$2-$3"
}

for ((i = 1; i <= $#; i++)); do DATABASE_URL=postgresql://postgres@127.0.0.1:$pg_port/list$i "${!i}" migrate >/dev/null; done
for ((r = 1; r <= rounds; r++)); do
    for n in "${lengths[@]}"; do
        for ((i = 1; i <= $#; i++)); do
            get "${!i}" "$i" "$n"
            fleet "${!i}" "$i" "$n"
        done
    done
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
# cell SECONDS N FIRST_SECONDS FIRST_N: "S s, µs a file (growth)"
cell() { awk -v s="$1" -v n="$2" -v s0="$3" -v n0="$4" 'BEGIN { printf "%.3f s, %.0f µs a file (%.2f)", s, s / n * 1e6, (s / n) / (s0 / n0) }'; }
header="| binary | way |"
rule="| --- | --- |"
for n in "${lengths[@]}"; do header+=" $n files |"; rule+=" --- |"; done
echo "$header peak RSS |"
echo "$rule --- |"
for ((i = 1; i <= $#; i++)); do
    for way in get fleet; do
        line="| ${!i} | $way |"
        first=""
        for n in "${lengths[@]}"; do
            t=$(cut -d' ' -f1 "$work/runs/$way-$i-$n" | median)
            [[ -n $first ]] || first="$t $n"
            line+=" $(cell "$t" "$n" $first) |"
        done
        rss=""
        for n in "${lengths[@]}"; do rss+="${rss:+ / }$(($(cut -d' ' -f2 "$work/runs/$way-$i-$n" | sort -n | tail -1) / 1024))"; done
        rss+=" MiB"
        echo "$line $rss |"
    done
done
echo "(medians of $rounds rounds; in brackets, µs a file over the first length's; peak RSS: the largest, at each length, of the get or of the enqueue)"
