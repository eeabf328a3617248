#!/usr/bin/env bash
# What an idle fleet costs PostgreSQL: N `haul worker`s with nothing to do, directly and through
# PgBouncer in transaction mode (which workers detect at connect, and then poll: no flag), measured as the CPU the PostgreSQL server
# processes use over a window, in % of one core. Also counts each worker's connections.
#
#   bench/idle.sh                      # 16 workers at -x 4, 30 s windows
#   HAUL_BIN=/path/to/haul bench/idle.sh
#   BENCH_IDLE_WORKERS=16 BENCH_IDLE_CONCURRENCY=16 BENCH_IDLE_SECONDS=60 bench/idle.sh
#   BENCH_BASELINE_BIN=/path/to/other/haul bench/idle.sh   # the same rows for another build
#
# Runs as root (PostgreSQL and PgBouncer run as `postgres`). Prints a Markdown table; never
# asserts on a figure. Issue 55's target: at most 2 % of a core for 16 idle workers.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
workers=${BENCH_IDLE_WORKERS:-16}
concurrency=${BENCH_IDLE_CONCURRENCY:-4}
seconds=${BENCH_IDLE_SECONDS:-30}
work=${BENCH_WORK:-/tmp/haul-bench-idle}
pgport=${BENCH_PG_PORT:-15632}
bouncer_port=$((pgport + 1))
source "$here/bench/lib/servers.sh"

"$here/scripts/install-deps.sh"
if [[ -z ${HAUL_BIN:-} ]]; then
  HAUL_BIN=$(bench_haul_binary "$here")
fi

pids=()
cleanup() {
  for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
  wait 2>/dev/null || true
  [[ -f $work/bouncer/pgbouncer.pid ]] && kill "$(cat "$work/bouncer/pgbouncer.pid")" 2>/dev/null || true
  bench_pg_stop "$work" immediate
  rm -rf "$work"
}
trap cleanup EXIT

rm -rf "$work" && mkdir -p "$work/pg" "$work/bouncer" "$work/storage" && chown postgres: "$work/pg" "$work/bouncer"
bench_pg_start "$work" "$pgport" /tmp -c max_connections=200
runuser -u postgres -- "$bench_pgbin/psql" -qAt -h 127.0.0.1 -p "$pgport" -U postgres -c "CREATE DATABASE haul" >/dev/null
direct=postgresql://postgres@127.0.0.1:$pgport/haul
DATABASE_URL=$direct "$HAUL_BIN" migrate >/dev/null

cat >"$work/bouncer/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$pgport
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
auth_type = trust
auth_file = $work/bouncer/users.txt
pool_mode = transaction
max_client_conn = 400
default_pool_size = 40
logfile = $work/bouncer/pgbouncer.log
pidfile = $work/bouncer/pgbouncer.pid
INI
echo '"postgres" ""' >"$work/bouncer/users.txt"
chown -R postgres: "$work/bouncer"
runuser -u postgres -- /usr/sbin/pgbouncer -d "$work/bouncer/pgbouncer.ini"
pooled=postgresql://postgres@127.0.0.1:$bouncer_port/haul

# CPU ticks (user + system) of this cluster's server processes now running (its postmaster and
# children; another PostgreSQL on the machine is not counted).
postgres_ticks() {
  local total=0 pid stat postmaster
  postmaster=$(head -1 "$work/pg/postmaster.pid")
  for pid in "$postmaster" $(pgrep -P "$postmaster" || true); do
    stat=$(cat "/proc/$pid/stat" 2>/dev/null) || continue
    stat=${stat##*) }
    # Fields after the command: state is 1, utime 12, stime 13.
    read -r -a fields <<<"$stat"
    total=$((total + fields[11] + fields[12]))
  done
  echo "$total"
}

# Starts the workers of one row, waits for them to settle, measures, stops them.
# Arguments: binary, database URL, extra worker flags. Prints "cpu% connections-per-worker".
measure() {
  local bin=$1 url=$2
  shift 2
  local row=()
  for _ in $(seq "$workers"); do
    DATABASE_URL=$url "$bin" worker --storage "$work/storage" --concurrency "$concurrency" --quiet "$@" 2>>"$work/workers.log" &
    row+=($!)
    pids+=($!)
  done
  sleep 8
  local hz before after connections
  hz=$(getconf CLK_TCK)
  before=$(postgres_ticks)
  sleep "$seconds"
  after=$(postgres_ticks)
  connections=$(runuser -u postgres -- "$bench_pgbin/psql" -qAt -h 127.0.0.1 -p "$pgport" -U postgres -d haul \
    -c "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE 'haul/%'")
  for pid in "${row[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
  for pid in "${row[@]}"; do wait "$pid" 2>/dev/null || true; done
  awk -v d=$((after - before)) -v hz="$hz" -v s="$seconds" -v c="$connections" -v w="$workers" \
    'BEGIN { printf "%.2f %.1f", 100 * d / hz / s, c / w }'
}

rows=("$HAUL_BIN")
[[ -n ${BENCH_BASELINE_BIN:-} ]] && rows+=("$BENCH_BASELINE_BIN")
echo "| build | path | PostgreSQL CPU, % of a core | connections per worker (server side) |"
echo "| --- | --- | --- | --- |"
for bin in "${rows[@]}"; do
  read -r cpu per <<<"$(measure "$bin" "$direct")"
  echo "| $bin | direct, LISTEN | $cpu | $per |"
  read -r cpu per <<<"$(measure "$bin" "$pooled")"
  echo "| $bin | PgBouncer (transaction), detected: polls | $cpu | $per (pooled) |"
done
echo
echo "$workers idle workers at --concurrency $concurrency, ${seconds}s windows after 8 s to settle; $(date -u +%Y-%m-%dT%H:%MZ)"
