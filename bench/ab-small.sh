#!/usr/bin/env bash
# Before/after comparison of haul binaries on many small files, by hand (not a bench/run section).
#
#   bench/ab-small.sh ROUNDS BINARY...      e.g. bench/ab-small.sh 5 /tmp/old/haul /tmp/new/haul
#
# Each round runs every binary once, in turn (A B A B …), because a shared machine's speed drifts
# over minutes: only alternated runs compare. A run: a fresh database (tables truncated, VACUUM
# ANALYZE) unless AB_KEEP=1 (rows of earlier runs stay, as in bench/run), two `haul worker`s
# (`--concurrency AB_CONCURRENCY`, default 4; host limit AB_HOST_LIMIT, default 8) started
# untimed (AB_WORKER_ARGS: more `haul worker` options, e.g. "--probe-batch 512"), then
# `enqueue --manifest` + `wait --batch` timed, writing AB_FILES (5000) files of 4 KiB into tmpfs.
# Printed per binary, medians: wall seconds, engine seconds (first created_at to last
# finished_at), and the CPU seconds each part of the run spent while it was timed (/proc
# times): PostgreSQL (all its processes), the two workers, nginx, and the two commands. Each
# round first runs the reference, `curl -Z --parallel-max 16` into tmpfs (AB_CURL=0 leaves it
# out): its wall time, its CPU and nginx's, each binary's ratio to it, and the CPU-seconds a
# run may spend on this machine's cores to finish within 2.0× curl. PostgreSQL's CPU is also
# given in microseconds a file, and curl's beside it: this host's speed changes over minutes
# (curl's CPU a file by 2× within the hour), so read a per-file figure against curl's of the
# same run.
# AB_STATEMENTS=1 adds each binary's top statements from
# pg_stat_statements (total times include waiting for the CPU, so read them as shares).
# Each binary has a database of its own (migrated by it), so a schema change is compared too.
# Its own PostgreSQL (AB_PG_PORT, 15800) and nginx (AB_HTTP_PORT, 18800) under AB_WORK.
# AB_S3_BUCKET=NAME stores into that existing bucket of the S3 service the AWS_* variables
# name (AWS_ENDPOINT_URL, keys, AWS_REGION), a fresh prefix per run, instead of tmpfs (and runs
# no curl reference); the files are then checked by their count done, and AB_REMIRROR=1 also
# times the same manifest enqueued again into the same prefix (every file a 304), printed as
# "re-mirror" (the CPU figures then include it, but for the commands').
# AB_HISTORY=N also runs every binary, in each round right after its fresh run, on a second
# database that holds N finished transfers with their segments and state history
# (bench/lib/history.sql, filled once per binary, by SQL: about 3 minutes at 1 000 000 on two
# busy cores; each run's own rows are deleted after it so the history stays N), and prints that
# run's medians and its ratio to the fresh database's: what a fleet's history costs a batch
# (issue 51: at most 1.10x at 1 000 000).
set -euo pipefail
bench=$(cd "$(dirname "$0")" && pwd)
source "$bench/lib/servers.sh"
bench_ab_arguments ab-small "$@"
rounds=$1
shift
files=${AB_FILES:-5000}
work=${AB_WORK:-/tmp/haul-ab-small}
pg_port=${AB_PG_PORT:-15800}
http_port=${AB_HTTP_PORT:-18800}
data=$bench/data/small-$files-4096

bench_random_files "$data" "$files" 4096

stop() {
    bench_pg_stop "$work"
    bench_nginx_stop "$work"
    rm -rf /dev/shm/haul-ab-small-*
    return 0
}
trap stop EXIT
stop
rm -rf "$work" && mkdir -p "$work/runs"
bench_pg_start "$work" "$pg_port" "$work/sock" -c max_connections=200 -c shared_buffers=256MB \
    -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track=all
bench_nginx_start "$work" "server { listen 127.0.0.1:$http_port; root $bench/data; }"
history=${AB_HISTORY:-0}
[[ $history =~ ^[0-9]+$ ]] || { echo "ab-small: AB_HISTORY=$history is not a whole number of transfers" >&2; exit 2; }
for ((i = 1; i <= $#; i++)); do
    for db in small$i $( ((history > 0)) && echo "small${i}h"); do
        psql -X -q "postgresql://postgres@127.0.0.1:$pg_port/postgres" -c "CREATE DATABASE $db"
        psql -X -q "postgresql://postgres@127.0.0.1:$pg_port/$db" -c "CREATE EXTENSION pg_stat_statements"
    done
done
for f in "$data"/f-*; do f=${f##*/}; echo "http://127.0.0.1:$http_port/${data##*/}/$f $f"; done >"$work/manifest.txt"
cat "$data"/f-* >/dev/null

# CPU of processes, in clock ticks: `cpu_of PID...` (own time), PostgreSQL (the postmaster's own
# and its exited children's, and its live backends': a backend's work counts when it is done,
# not when its client exits), nginx (master and workers). A process that ends between two
# readings moves its time from one term to another, within a few ticks.
cpu_of() {
    local pid sum=0
    for pid in "$@"; do sum=$((sum + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0))); done
    echo "$sum"
}
postgres_cpu() {
    local master
    master=$(head -1 "$work/pg/postmaster.pid")
    echo $(($(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$master/stat") + $(cpu_of $(pgrep -P "$master"))))
}
nginx_cpu() {
    local master
    master=$(cat "$work/nginx/nginx.pid")
    cpu_of "$master" $(pgrep -P "$master")
}
hz=$(getconf CLK_TCK)
# check_files DIR WHO: DIR holds exactly the source files, or the run stops saying WHO failed
check_files() { diff -rq -x .complete "$data" "$1" >/dev/null || { echo "ab-small: $2 did not reproduce the files" >&2; exit 1; }; }
awk '{ print "url = \"" $1 "\"\noutput = \"" $2 "\"" }' "$work/manifest.txt" >"$work/curl.cfg"

# run_curl: the reference, `curl -Z --parallel-max 16` into a fresh tmpfs folder; appends
# "wall curl_cpu_s nginx_cpu_s" to $work/runs/curl
run_curl() {
    local out n0 t0 t1
    out=$(mktemp -d /dev/shm/haul-ab-small-XXXX)
    n0=$(nginx_cpu)
    t0=$(date +%s.%N)
    (cd "$out" && /usr/bin/time -f '%U %S' -o "$work/curl.time" curl -sS --fail --parallel --parallel-max 16 -K "$work/curl.cfg" 2>"$work/curl.err") ||
        { echo "ab-small: curl failed: $(tail -1 "$work/curl.err")" >&2; exit 1; }
    t1=$(date +%s.%N)
    check_files "$out" curl
    rm -rf "$out"
    awk -v a="$t0" -v b="$t1" -v n0="$n0" -v n1="$(nginx_cpu)" -v hz="$hz" '{ printf "%.3f %.2f %.2f\n", b - a, $1 + $2, (n1 - n0) / hz }' \
        "$work/curl.time" >>"$work/runs/curl"
}

# run BINARY TAG: one timed run on database small$TAG; appends "wall engine pg_cpu_s workers_cpu_s
# nginx_cpu_s commands_cpu_s [re-mirror wall]" to $work/runs/TAG
run() {
    local haul=$1 tag=$2 out pids="" batch=b$RANDOM$RANDOM w
    local url=postgresql://postgres@127.0.0.1:$pg_port/small$tag
    psqlq() { psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }
    DATABASE_URL=$url "$haul" migrate >/dev/null
    if [[ $tag == *h ]]; then
        if [[ ! -f $work/runs/$tag.filled ]]; then
            psqlq -v n="$history" -f "$bench/lib/history.sql" >/dev/null
            touch "$work/runs/$tag.filled"
        fi
        psqlq -c "SET client_min_messages = warning" \
            -c "DELETE FROM transfer_events e USING transfers t, batches b WHERE e.transfer_id = t.id AND t.batch_id = b.id AND b.name <> 'history'" \
            -c "DELETE FROM transfers WHERE batch_id IN (SELECT id FROM batches WHERE name <> 'history')" \
            -c "DELETE FROM batches WHERE name <> 'history'" -c "UPDATE origin_hosts SET busy = 0" -c "VACUUM ANALYZE"
    elif [[ ${AB_KEEP:-0} != 1 ]]; then
        psqlq -c "SET client_min_messages = warning" -c "TRUNCATE transfers, batches, segments, transfer_events CASCADE" \
            -c "UPDATE origin_hosts SET busy = 0" -c "VACUUM ANALYZE"
    fi
    DATABASE_URL=$url "$haul" host-limit set "127.0.0.1:$http_port" "${AB_HOST_LIMIT:-8}" >/dev/null
    out=$(mktemp -d /dev/shm/haul-ab-small-XXXX)
    local storage=$out
    [[ -n ${AB_S3_BUCKET:-} ]] && storage=s3://$AB_S3_BUCKET/ab-${out##*-}-$RANDOM
    for w in 1 2; do
        DATABASE_URL=$url "$haul" worker --storage "$storage" --concurrency "${AB_CONCURRENCY:-4}" ${AB_WORKER_ARGS:-} >"$work/worker-$w.log" 2>&1 &
        pids="$pids $!"
    done
    sleep 1.5
    [[ ${AB_STATEMENTS:-0} == 1 ]] && psqlq -c "SELECT pg_stat_statements_reset()" >/dev/null
    local cpu0 workers0 nginx0 t0 t1 engine
    cpu0=$(postgres_cpu)
    workers0=$(cpu_of $pids)
    nginx0=$(nginx_cpu)
    t0=$(date +%s.%N)
    DATABASE_URL=$url /usr/bin/time -f '%U %S' -o "$work/commands.time" bash -c \
        '"$1" enqueue --manifest "$2" --batch "$3" >/dev/null && "$1" wait --batch "$3" --timeout 10m 2>/dev/null' _ "$haul" "$work/manifest.txt" "$batch"
    t1=$(date +%s.%N)
    local again=""
    if [[ ${AB_REMIRROR:-0} == 1 ]]; then
        local r0
        r0=$(date +%s.%N)
        DATABASE_URL=$url "$haul" enqueue --manifest "$work/manifest.txt" --batch "$batch-again" >/dev/null
        DATABASE_URL=$url "$haul" wait --batch "$batch-again" --timeout 10m 2>/dev/null
        again=$(awk -v a="$r0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
    fi
    local cpu1 workers1 nginx1
    cpu1=$(postgres_cpu)
    workers1=$(cpu_of $pids)
    nginx1=$(nginx_cpu)
    kill $pids && wait $pids 2>/dev/null || true
    engine=$(psql -X -At "$url" -c "SELECT extract(epoch FROM max(t.finished_at) - min(t.created_at)) FROM transfers t JOIN batches b ON b.id = t.batch_id WHERE b.name = '$batch'")
    if [[ -n ${AB_S3_BUCKET:-} ]]; then
        [[ $(psql -X -At "$url" -c "SELECT count(*) FROM transfers t JOIN batches b ON b.id = t.batch_id WHERE b.name = '$batch' AND t.state = 'done'") == "$files" ]] ||
            { echo "ab-small: $haul did not store every file" >&2; exit 1; }
    else
        check_files "$out" "$haul"
    fi
    rm -rf "$out"
    awk -v a="$t0" -v b="$t1" -v e="$engine" -v c0="$cpu0" -v c1="$cpu1" -v hz="$hz" -v w="$((workers1 - workers0))" -v n="$((nginx1 - nginx0))" -v r="$again" \
        '{ printf "%.3f %.3f %.2f %.2f %.2f %.2f %s\n", b - a, e, (c1 - c0) / hz, w / hz, n / hz, $1 + $2, r }' "$work/commands.time" >>"$work/runs/$tag"
    if [[ ${AB_STATEMENTS:-0} == 1 ]]; then
        psqlq -At -F ' | ' -c "SELECT calls, round(total_exec_time::numeric, 1), left(regexp_replace(query, '\s+', ' ', 'g'), 110)
            FROM pg_stat_statements ORDER BY total_exec_time DESC LIMIT 8" >"$work/runs/$tag.statements"
    fi
}

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
median_of() { cut -d' ' -f"$1" "$2" | median; }   # median_of FIELD FILE
per_file() { awk -v c="$1" -v n="$files" 'BEGIN { printf "%.0f", c / n * 1e6 }'; }   # per_file CPU_SECONDS: microseconds a file
with_curl=${AB_CURL:-1}
[[ -n ${AB_S3_BUCKET:-} ]] && with_curl=0   # the reference writes to tmpfs
for ((r = 1; r <= rounds; r++)); do
    [[ $with_curl == 1 ]] && run_curl
    i=0
    for haul in "$@"; do
        i=$((i + 1))
        run "$haul" "$i"
        ((history > 0)) && run "$haul" "${i}h"
    done
done
cores=$(nproc)
if [[ $with_curl == 1 ]]; then
    curl_wall=$(median_of 1 "$work/runs/curl")
    printf 'curl -Z --parallel-max 16: wall %s s, its CPU %s s (%s us a file: the host'"'"'s speed this run), nginx CPU %s s (medians of %s runs); at 2.0x curl a run may spend %s CPU-seconds on these %s cores\n' \
        "$curl_wall" "$(median_of 2 "$work/runs/curl")" "$(per_file "$(median_of 2 "$work/runs/curl")")" "$(median_of 3 "$work/runs/curl")" \
        "$(wc -l <"$work/runs/curl")" "$(awk -v w="$curl_wall" -v c="$cores" 'BEGIN { printf "%.2f", 2 * w * c }')" "$cores"
fi
i=0
for haul in "$@"; do
    i=$((i + 1))
    f=$work/runs/$i
    wall=$(median_of 1 "$f")
    printf '%s: wall %s s%s, engine %s s, CPU: PostgreSQL %s s (%s us a file), workers %s s, nginx %s s, enqueue + wait %s s%s (medians of %s runs)\n' "$haul" "$wall" \
        "$([[ $with_curl == 1 ]] && awk -v a="$wall" -v b="$curl_wall" 'BEGIN { printf " (%.2fx curl)", a / b }')" \
        "$(median_of 2 "$f")" "$(median_of 3 "$f")" "$(per_file "$(median_of 3 "$f")")" "$(median_of 4 "$f")" "$(median_of 5 "$f")" "$(median_of 6 "$f")" \
        "$([[ ${AB_REMIRROR:-0} == 1 ]] && echo ", re-mirror $(median_of 7 "$f") s")" "$(wc -l <"$f")"
    [[ -f $f.statements ]] && sed 's/^/    /' "$f.statements"
    if ((history > 0)); then
        printf '  on %s finished transfers: wall %s s (%sx the fresh database), engine %s s, CPU: PostgreSQL %s s (%s us a file), workers %s s\n' "$history" \
            "$(median_of 1 "$f"h)" "$(awk -v a="$(median_of 1 "$f"h)" -v b="$wall" 'BEGIN { printf "%.2f", a / b }')" "$(median_of 2 "$f"h)" \
            "$(median_of 3 "$f"h)" "$(per_file "$(median_of 3 "$f"h)")" "$(median_of 4 "$f"h)"
    fi
done
