#!/usr/bin/env bash
# A fleet on PostgreSQL's defaults (issue 55's targets), by hand: small files with 4 workers and
# with 16, whether admin commands connect while 16 run, and how long a finished file waits to be
# published under a backlog.
#
#   bench/fleet.sh                                   # 10 000 files, 3 rounds: about 5 minutes
#   HAUL_BIN=/path/to/haul ROUNDS=1 FILES=300 BACKLOG_BIG=2 BACKLOG_BIG_MIB=8 bench/fleet.sh   # a smoke run
#
# Its own PostgreSQL (BENCH_PG_PORT, 15650) at the server's defaults (max_connections 100) and
# nginx (BENCH_HTTP_PORT, 18850) serving FILES random 4 KiB files; state in BENCH_WORK, outputs
# on tmpfs. Each of ROUNDS (3) rounds runs the fleet sizes of FLEET_SIZES ("4 16") in turn,
# alternated because a shared machine's speed drifts: a run is a fresh database, that many
# `haul worker --concurrency CONCURRENCY` (4) started untimed, then `enqueue --manifest` +
# `wait --batch` timed (wall), with the CPU of PostgreSQL's processes over the same window.
# While it runs, `haul list --limit 1` and `psql -c 'SELECT 1'` are tried every half second:
# "admin connects" says how many of the tries got through, and the peak server connections are
# counted. Then one backlog run per round with the largest fleet size: BACKLOG_BIG (4) files of
# BACKLOG_BIG_MIB (64) MiB in 1 MiB segments enqueued first, then the FILES small files; the
# publish delay of a file is its `published_at` less the last `updated_at` of its segments
# (the moment its last segment was recorded done), the worst over its big files.
# Prints a Markdown table of medians; never asserts on a figure. Issue 55's targets: 16 workers
# take at most 1.10x the time of 4, admin commands connect, a publish delay of at most 5 s.
# HAUL_BIN names the binary; without it a release build is made in /tmp/bench-build.
set -euo pipefail
export PGOPTIONS='-c client_min_messages=warning'
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
rounds=${ROUNDS:-3}
files=${FILES:-10000}
concurrency=${CONCURRENCY:-4}
sizes=(${FLEET_SIZES:-4 16})
big=${BACKLOG_BIG:-4}
big_mib=${BACKLOG_BIG_MIB:-64}
work=${BENCH_WORK:-/tmp/haul-bench-fleet}
pg_port=${BENCH_PG_PORT:-15650}
http_port=${BENCH_HTTP_PORT:-18850}
source "$here/bench/lib/servers.sh"
for n in "$rounds" "$files" "$concurrency" "$big" "$big_mib" "${sizes[@]}"; do
  [[ $n =~ ^[1-9][0-9]*$ ]] || { echo "fleet: '$n' is not a whole number from 1 (ROUNDS, FILES, CONCURRENCY, BACKLOG_BIG, BACKLOG_BIG_MIB, FLEET_SIZES)" >&2; exit 2; }
done

[[ -n ${HAUL_BIN:-} ]] || HAUL_BIN=$(bench_haul_binary "$here")
[[ -x $HAUL_BIN ]] || { echo "fleet: $HAUL_BIN is not executable" >&2; exit 2; }

pids=()
stop() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  bench_pg_stop "$work"
  bench_nginx_stop "$work"
  rm -rf /dev/shm/haul-bench-fleet-*
  return 0
}
trap stop EXIT
stop
rm -rf "$work" && mkdir -p "$work/runs" "$work/data/small" "$work/data/big"
# The server's defaults (max_connections 100 above all), listening on loopback only.
bench_pg_start "$work" "$pg_port" /tmp
server=postgresql://postgres@127.0.0.1:$pg_port
max_connections=$(psql -X -At "$server/postgres" -c "SHOW max_connections")

bench_random_files "$work/data/small" "$files" 4096
for ((i = 0; i < big; i++)); do head -c $((big_mib << 20)) /dev/urandom >"$work/data/big/b-$i"; done
bench_nginx_start "$work" "server { listen 127.0.0.1:$http_port; root $work/data; }"
origin=http://127.0.0.1:$http_port
for f in "$work"/data/small/f-*; do echo "$origin/small/${f##*/} ${f##*/}"; done >"$work/small.txt"
for ((i = 0; i < big; i++)); do echo "$origin/big/b-$i b-$i"; done >"$work/big.txt"
cat "$work"/data/small/f-* "$work"/data/big/b-* >/dev/null

# CPU ticks of this cluster's server processes: the postmaster's own and its exited children's,
# and its live backends'.
postgres_cpu() {
  local master sum
  master=$(head -1 "$work/pg/postmaster.pid")
  sum=$(awk '{ print $14 + $15 + $16 + $17 }' "/proc/$master/stat")
  for pid in $(pgrep -P "$master" || true); do sum=$((sum + $(awk '{ print $14 + $15 }' "/proc/$pid/stat" 2>/dev/null || echo 0))); done
  echo "$sum"
}
hz=$(getconf CLK_TCK)

# fresh NAME: a new migrated database; prints its URL
fresh() {
  psql -X -q "$server/postgres" -c "DROP DATABASE IF EXISTS $1" -c "CREATE DATABASE $1"
  DATABASE_URL=$server/$1 "$HAUL_BIN" migrate >/dev/null
  echo "$server/$1"
}

# workers URL N OUT: starts N workers on URL storing into OUT, waits until all have connected
workers() {
  local url=$1 n=$2 out=$3 w
  for ((w = 0; w < n; w++)); do
    DATABASE_URL=$url "$HAUL_BIN" worker --storage "$out" --concurrency "$concurrency" --quiet 2>>"$work/workers.log" &
    pids+=($!)
  done
  for _ in $(seq 100); do
    (($(psql -X -At "$url" -c "SELECT count(*) FROM workers WHERE stopped_at IS NULL" 2>/dev/null || echo 0) >= n)) && break
    sleep 0.2
  done
  sleep 1
}

# stop_workers: stops every worker started so far
stop_workers() {
  for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
  pids=()
}

# admin URL FILE: until FILE.stop exists, tries `haul list` and psql every half second and
# appends "list_ok psql_ok connections" lines to FILE
admin() {
  local url=$1 file=$2 list psql_ok connections
  while [[ ! -e $file.stop ]]; do
    list=0 psql_ok=0
    DATABASE_URL=$url timeout 10 "$HAUL_BIN" list --limit 1 >/dev/null 2>>"$file.err" && list=1
    connections=$(timeout 10 psql -X -At "$url" -c "SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'" 2>>"$file.err") && psql_ok=1
    echo "$list $psql_ok ${connections:-0}" >>"$file"
    sleep 0.5
  done
}

# run N ROUND: one timed run of N workers; appends "wall pg_cpu_s list_ok list_tries psql_ok peak_connections" to runs/N
run() {
  local n=$1 round=$2 url out cpu0 t0 t1 cpu1 admin_pid
  url=$(fresh "fleet_${n}_$round")
  out=$(mktemp -d /dev/shm/haul-bench-fleet-XXXX)
  workers "$url" "$n" "$out"
  rm -f "$work/admin" "$work/admin.stop"
  admin "$url" "$work/admin" &
  admin_pid=$!
  cpu0=$(postgres_cpu)
  t0=$(date +%s.%N)
  DATABASE_URL=$url "$HAUL_BIN" enqueue --manifest "$work/small.txt" --batch small >/dev/null
  DATABASE_URL=$url "$HAUL_BIN" wait --batch small --timeout 15m 2>/dev/null
  t1=$(date +%s.%N)
  cpu1=$(postgres_cpu)
  touch "$work/admin.stop" && wait "$admin_pid"
  stop_workers
  [[ $(find "$out" -maxdepth 1 -name 'f-*' | wc -l) == "$files" ]] || { echo "fleet: $n workers did not store every file" >&2; exit 1; }
  rm -rf "$out"
  awk -v a="$t0" -v b="$t1" -v c="$((cpu1 - cpu0))" -v hz="$hz" \
    '{ l += $1; p += $2; t++; if ($3 > m) m = $3 } END { printf "%.3f %.2f %d %d %d %d\n", b - a, c / hz, l, t, p, m }' "$work/admin" >>"$work/runs/$n"
  psql -X -q "$server/postgres" -c "DROP DATABASE fleet_${n}_$round"
}

# backlog ROUND: the big files and the small ones at once on the largest fleet; appends
# "worst_delay_s big_files_measured wall" to runs/backlog
backlog() {
  local round=$1 n=${sizes[-1]} url out t0 t1
  url=$(fresh "fleet_backlog_$round")
  out=$(mktemp -d /dev/shm/haul-bench-fleet-XXXX)
  workers "$url" "$n" "$out"
  t0=$(date +%s.%N)
  DATABASE_URL=$url "$HAUL_BIN" enqueue --manifest "$work/big.txt" --batch big --segment-size 1MiB >/dev/null
  DATABASE_URL=$url "$HAUL_BIN" enqueue --manifest "$work/small.txt" --batch small >/dev/null
  DATABASE_URL=$url "$HAUL_BIN" wait --batch big --timeout 15m 2>/dev/null
  DATABASE_URL=$url "$HAUL_BIN" wait --batch small --timeout 15m 2>/dev/null
  t1=$(date +%s.%N)
  stop_workers
  for ((i = 0; i < big; i++)); do cmp -s "$work/data/big/b-$i" "$out/b-$i" || { echo "fleet: big file b-$i differs from its origin" >&2; exit 1; }; done
  rm -rf "$out"
  psql -X -At -F ' ' "$url" -c "
    SELECT coalesce(round(max(extract(epoch FROM t.published_at - s.last_done))::numeric, 3), 0), count(*), round(($t1 - $t0)::numeric, 3)
    FROM transfers t
    JOIN LATERAL (SELECT max(updated_at) AS last_done FROM segments s WHERE s.transfer_id = t.id AND s.generation = t.generation AND s.state = 'done') s ON true
    WHERE t.state = 'done' AND s.last_done IS NOT NULL AND t.published_at IS NOT NULL" >>"$work/runs/backlog"
  psql -X -q "$server/postgres" -c "DROP DATABASE fleet_backlog_$round"
}

for ((r = 1; r <= rounds; r++)); do
  for n in "${sizes[@]}"; do run "$n" "$r"; done
  backlog "$r"
done

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
median_of() { cut -d' ' -f"$1" "$2" | median; }   # median_of FIELD FILE
first=${sizes[0]} last=${sizes[-1]}
echo "| fleet | wall, enqueue → wait (s) | PostgreSQL CPU (s) | ratio to $first workers | admin connects (haul list, psql) | peak server connections |"
echo "| --- | --- | --- | --- | --- | --- |"
for n in "${sizes[@]}"; do
  f=$work/runs/$n
  ratio=$(awk -v a="$(median_of 1 "$f")" -v b="$(median_of 1 "$work/runs/$first")" 'BEGIN { printf "%.2f", a / b }')
  connects=$(awk '{ l += $3; t += $4; p += $5 } END { printf "%s (%d/%d, %d/%d)", (l == t && p == t) ? "yes" : "no", l, t, p, t }' "$f")
  echo "| $n workers at -x $concurrency | $(median_of 1 "$f") | $(median_of 2 "$f") | $ratio | $connects | $(cut -d' ' -f6 "$f" | sort -n | tail -1) of $max_connections |"
done
worst=$(cut -d' ' -f1 "$work/runs/backlog" | sort -n | tail -1)
echo "| publish delay under a backlog, $last workers | worst $worst s (median of rounds' worst $(median_of 1 "$work/runs/backlog") s) | | | | |"
echo
echo "$files files of 4 KiB into tmpfs, medians of $rounds alternated rounds; target: $last/$first ≤ 1.10, admin commands connect, publish delay ≤ 5 s."
echo "Backlog: $big files of $big_mib MiB in 1 MiB segments enqueued, then the $files small files; delay = published_at − the last segment's updated_at, over $(median_of 2 "$work/runs/backlog") big files a round (wall $(median_of 3 "$work/runs/backlog") s)."
echo "$HAUL_BIN; PostgreSQL max_connections $max_connections; $(nproc) cores; $(date -u +%Y-%m-%dT%H:%MZ)"
