#!/usr/bin/env bash
# Upload benchmark: `curl -F file=@…` against `haul upload` sending the same file to the
# multipart receiver of the tests (strict parser, file parts hashed and discarded), plus the
# peak RSS of haul's uploader.
#
#   bench/upload.sh [HAUL_BINARY]        default .build/release/haul
#
# Environment: SIZE_MIB (default 1024), RUNS (default 3, best run counts), UPLOAD_FILE (an
# existing file to send instead of generating SIZE_MIB random MiB; bench/run passes bench/data's),
# HAUL_TEST_PYTHON (default: the test venv's python, `HAUL_VENV` or /tmp/haul-venv, as the test
# services make it, else python3; needs `pip install multipart`). Needs /usr/bin/time
# (apt package `time`) and curl.
set -euo pipefail

haul=${1:-.build/release/haul}
root=$(cd "$(dirname "$0")/.." && pwd)
receiver=$root/Tests/HaulUploadTests/Receivers/multipart_receiver.py
venv_python=${HAUL_VENV:-/tmp/haul-venv}/bin/python3
[ -x "$venv_python" ] || venv_python=python3
python=${HAUL_TEST_PYTHON:-$venv_python}
size_mib=${SIZE_MIB:-1024}
runs=${RUNS:-3}

[ -x "$haul" ] || { echo "no executable at $haul; build it or pass its path" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "/usr/bin/time missing: apt-get install time" >&2; exit 2; }

work=$(mktemp -d)
receiver_pid=
cleanup() {
    [ -n "$receiver_pid" ] && kill -9 "$receiver_pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT

if [ -n "${UPLOAD_FILE:-}" ]; then
    ln -s "$(readlink -f "$UPLOAD_FILE")" "$work/bench.bin"
    size_mib=$(( $(stat -L -c %s "$work/bench.bin") >> 20 ))
else
    echo "generating $size_mib MiB..."
    head -c $((size_mib << 20)) /dev/urandom >"$work/bench.bin"
fi
sha=$(sha256sum <"$work/bench.bin" | cut -c1-64)

"$python" "$receiver" >"$work/port" &
receiver_pid=$!
disown "$receiver_pid"
for _ in $(seq 100); do grep -q PORT "$work/port" && break; sleep 0.1; done
grep -q PORT "$work/port" || {
    echo "the multipart receiver did not start under $python: install its parser (pip install multipart) or set HAUL_TEST_PYTHON" >&2
    exit 2
}
url="http://127.0.0.1:$(awk '/PORT/ {print $2}' "$work/port")/upload"

# Runs "$@" under /usr/bin/time -v; prints "seconds peak_rss_kib"; fails unless the
# receiver's answer carries the file's sha256.
measure() {
    /usr/bin/time -v -o "$work/time" "$@" >"$work/out" 2>"$work/err" || { cat "$work/err" >&2; return 1; }
    grep -q "$sha" "$work/out" || { echo "answer lacks sha256 $sha:" >&2; head -c 2000 "$work/out" >&2; return 1; }
    awk -F': ' '
        /Elapsed \(wall clock\)/ { n = split($2, t, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + t[i] }
        /Maximum resident set size/ { rss = $2 }
        END { printf "%.3f %d\n", s, rss }' "$work/time"
}

best() { sort -n | head -1; }

echo "uploading to $url, best of $runs runs each..."
: >"$work/curl_runs"
: >"$work/haul_runs"
for _ in $(seq "$runs"); do
    measure curl -sS --fail -H 'Expect:' -F "file=@$work/bench.bin" "$url" >>"$work/curl_runs"
    measure "$haul" upload "$work/bench.bin" "$url" >>"$work/haul_runs"
done
read -r curl_s curl_rss < <(best <"$work/curl_runs")
read -r haul_s haul_rss < <(best <"$work/haul_runs")
haul_peak=$(sort -k2 -n "$work/haul_runs" | tail -1 | cut -d' ' -f2)

mib_s() { awk -v s="$1" -v m="$size_mib" 'BEGIN { printf "%.0f", (s > 0 ? m / s : 0) }'; }
printf 'file            %d MiB, sha256 %s verified by the receiver\n' "$size_mib" "${sha:0:16}…"
printf 'curl -F         %7.2f s  %5s MiB/s  peak RSS %6.1f MiB\n' "$curl_s" "$(mib_s "$curl_s")" "$(awk -v k="$curl_rss" 'BEGIN{print k/1024}')"
printf 'haul upload     %7.2f s  %5s MiB/s  peak RSS %6.1f MiB (max over runs %.1f MiB)\n' "$haul_s" "$(mib_s "$haul_s")" \
    "$(awk -v k="$haul_rss" 'BEGIN{print k/1024}')" "$(awk -v k="$haul_peak" 'BEGIN{print k/1024}')"
printf 'time ratio      %.2f (haul / curl; below 1 is faster)\n' "$(awk -v h="$haul_s" -v c="$curl_s" 'BEGIN { print (c > 0 ? h / c : 0) }')"
