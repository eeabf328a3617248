#!/usr/bin/env bash
# How many TCP connections `haul get` opens to an S3 store for a batch of small files (issue 49:
# kept connections, at most a few per lane), counted by a proxy in front of the store.
#
#   bench/s3-connections.sh ENV_FILE HAUL_BINARY [FILES] [haul get options, e.g. -x 4]
#
# ENV_FILE: the file scripts/test-services.sh writes (its PostgreSQL, nginx origin and
# SeaweedFS). FILES (default 200) files of about 1 KB are written under the origin's docroot,
# fetched into a fresh bucket with one `haul get -i`, and the count is printed.
set -euo pipefail
(($# >= 2)) || { echo "usage: bench/s3-connections.sh ENV_FILE HAUL_BINARY [FILES] [haul get options]" >&2; exit 2; }
# shellcheck disable=SC1090
source "$1"
haul=$(readlink -f "$2")
shift 2
files=200
if (($# > 0)) && [[ $1 =~ ^[0-9]+$ ]]; then files=$1; shift; fi
bench=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
proxy=""
tag=conn$RANDOM
cleanup() {
    [[ -n $proxy ]] && kill "$proxy" 2>/dev/null
    psql -X -q "$HAUL_TEST_DATABASE_URL" -c "DROP DATABASE IF EXISTS haul_$tag" 2>/dev/null
    AWS_ENDPOINT_URL=$HAUL_TEST_S3_ENDPOINT "$HAUL_TEST_PYTHON" -c \
        "import boto3, os; b = boto3.resource('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL']).Bucket('$tag'); b.objects.all().delete(); b.delete()" 2>/dev/null || true
    rm -rf "$work" "${HAUL_TEST_DOCROOT:?}/$tag"
}
trap cleanup EXIT
mkdir -p "$HAUL_TEST_DOCROOT/$tag"
for ((i = 0; i < files; i++)); do
    head -c $((1000 + i)) /dev/urandom >"$HAUL_TEST_DOCROOT/$tag/f$i.bin"
    echo "$HAUL_TEST_ORIGIN/$tag/f$i.bin"
done >"$work/urls.txt"
db=haul_$tag
psql -X -q "$HAUL_TEST_DATABASE_URL" -c "CREATE DATABASE $db"
url=${HAUL_TEST_DATABASE_URL%/*}/$db
DATABASE_URL=$url "$haul" migrate >/dev/null
export AWS_ACCESS_KEY_ID=$HAUL_TEST_S3_KEY AWS_SECRET_ACCESS_KEY=$HAUL_TEST_S3_SECRET AWS_REGION=us-east-1
AWS_ENDPOINT_URL=$HAUL_TEST_S3_ENDPOINT "$HAUL_TEST_PYTHON" -c \
    "import boto3, os; boto3.client('s3', endpoint_url=os.environ['AWS_ENDPOINT_URL']).create_bucket(Bucket='$tag')"
port=$((20000 + RANDOM % 20000))
"$HAUL_TEST_PYTHON" "$bench/lib/counting_proxy.py" "${HAUL_TEST_S3_ENDPOINT##*:}" "$port" "$work/count" &
proxy=$!
sleep 1
DATABASE_URL=$url AWS_ENDPOINT_URL=http://127.0.0.1:$port "$haul" get -q -i "$work/urls.txt" -o "s3://$tag/p/" "$@"
echo "$files files, haul get $*: $(cat "$work/count") connections to the store"
