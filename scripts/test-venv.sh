#!/usr/bin/env bash
# Makes the Python venv the tests and benchmarks use (HAUL_VENV, default /tmp/haul-venv) and
# brings it up to scripts/test-requirements.txt: the upload receivers, the tus server, Selenium
# and `weed` (SeaweedFS). Idempotent: pip runs only when the requirements changed since the
# venv last installed them. Prints the venv's path.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
venv=${HAUL_VENV:-/tmp/haul-venv}
[[ -x $venv/bin/python ]] || python3 -m venv "$venv" >&2
if ! cmp -s "$here/scripts/test-requirements.txt" "$venv/.haul-test-requirements" 2>/dev/null; then
  "$venv/bin/pip" install --quiet --disable-pip-version-check -r "$here/scripts/test-requirements.txt" >&2
  cp "$here/scripts/test-requirements.txt" "$venv/.haul-test-requirements"
fi
echo "$venv"
