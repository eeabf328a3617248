#!/usr/bin/env bash
# Offline validation of deploy/ (run by CI; needs no Docker, no cluster).
#
#   bash deploy/validate.sh
#
# Installs the pinned tools of deploy/ci/requirements.txt into a virtualenv at
# ${HAUL_VENV:-/tmp/haul-venv} (re-used while the requirements are unchanged),
# then checks, reporting every failure before exiting non-zero:
#   - yamllint (deploy/.yamllint, strict) on every YAML file under deploy/
#   - hadolint on deploy/Dockerfile: no finding at any level
#   - kubernetes-validate --strict on the Kubernetes manifests, against the
#     newest and the oldest supported Kubernetes version; a missing schema is
#     an error for every kind but KEDA's CRDs
#   - KEDA ScaledObject / TriggerAuthentication, kustomization.yaml and
#     compose.yaml structure (deploy/ci/checks.py)
#   - systemd-analyze verify on the worker unit (skipped without systemd)
#   - shellcheck on the shell scripts (this one, Tests/multihost/*.sh)
#   - example credentials are recognisably fake
# Needs: python3 with the venv module (Debian: python3-venv), network access
# to PyPI on the first run only.
set -uo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$HERE/.." && pwd)
VENV=${HAUL_VENV:-/tmp/haul-venv}
REQS=$HERE/ci/requirements.txt
K8S_DIR=$HERE/kubernetes
# Newest schema kubernetes-validate ships, and the oldest release we support
# (CronJob.spec.timeZone is GA since 1.27).
K8S_VERSIONS=${HAUL_K8S_VERSIONS:-"1.37.0 1.29.0"}

failures=()
step() { printf '==> %s\n' "$*"; }
ok() { printf '    ok: %s\n' "$*"; }
bad() { printf '    FAIL: %s\n' "$*"; failures+=("$*"); }

# ------------------------------------------------------------------ toolchain
step "tools (virtualenv $VENV)"
stamp="$VENV/.haul-deploy-requirements"
if [[ ! -x $VENV/bin/python || ! -f $stamp ]] || ! cmp -s "$REQS" "$stamp"; then
  PY=${PYTHON:-python3}
  if ! command -v "$PY" >/dev/null; then
    echo "validate.sh: $PY not found (install python3 and python3-venv)" >&2
    exit 2
  fi
  if [[ ! -x $VENV/bin/python ]] && ! "$PY" -m venv "$VENV"; then
    echo "validate.sh: cannot create a virtualenv at $VENV (Debian: apt-get install python3-venv)" >&2
    exit 2
  fi
  if ! "$VENV/bin/python" -m pip install --quiet --disable-pip-version-check -r "$REQS"; then
    echo "validate.sh: pip install -r $REQS failed (is PyPI reachable?)" >&2
    exit 2
  fi
  cp "$REQS" "$stamp"
  ok "installed $(grep -cv '^#' "$REQS") pinned packages"
else
  ok "up to date"
fi
BIN=$VENV/bin

# ------------------------------------------------------------------- yamllint
step "yamllint"
if out=$("$BIN/yamllint" --strict -c "$HERE/.yamllint" -f parsable "$HERE" 2>&1); then
  ok "all YAML under deploy/"
else
  printf '%s\n' "$out" | sed 's/^/    /'
  bad "yamllint"
fi

# ------------------------------------------------------------------- hadolint
step "hadolint deploy/Dockerfile"
if out=$("$BIN/hadolint" --failure-threshold style "$HERE/Dockerfile" 2>&1) && [[ -z $out ]]; then
  ok "clean"
else
  printf '%s\n' "$out" | sed 's/^/    /'
  bad "hadolint"
fi

# hadolint does not notice a missing USER: the runtime stage must not run as root.
last_user=$(grep -E '^USER ' "$HERE/Dockerfile" | tail -n 1 | awk '{print $2}')
if [[ -z $last_user || $last_user == root || $last_user == 0 || $last_user == 0:* ]]; then
  bad "Dockerfile: the final stage must set a non-root USER"
fi

# ------------------------------------------------------- kubernetes-validate
manifests=()
for f in "$K8S_DIR"/*.yaml; do
  [[ $(basename "$f") == kustomization.yaml ]] || manifests+=("$f")
done
for v in $K8S_VERSIONS; do
  step "kubernetes-validate --strict (Kubernetes $v)"
  out=$("$BIN/kubernetes-validate" --strict -k "$v" "${manifests[@]}" 2>&1)
  rc=$?
  # Unknown kinds only warn; that is fine for KEDA's CRDs alone (checked
  # below), anything else is a typo in kind or apiVersion.
  unknown=$(printf '%s\n' "$out" | grep "Couldn't find schema" |
    grep -vE "kind (ScaledObject|TriggerAuthentication) with api version keda\.sh/v1alpha1" || true)
  errors=$(printf '%s\n' "$out" | grep -vE '^INFO|Couldn.t find schema' | grep -v '^$' || true)
  if [[ $rc -eq 0 && -z $unknown && -z $errors ]]; then
    ok "$(printf '%s\n' "$out" | grep -c '^INFO .* passed') resources"
  else
    printf '%s\n' "$unknown" "$errors" | grep -v '^$' | sed 's/^/    /'
    bad "kubernetes-validate (Kubernetes $v)"
  fi
done

# ------------------------------------------------------- structural checks
for check in "keda $K8S_DIR" "kustomize $K8S_DIR" "compose $HERE/compose.yaml"; do
  step "checks.py $check"
  # shellcheck disable=SC2086 # two words on purpose
  if out=$("$BIN/python" "$HERE/ci/checks.py" $check 2>&1); then
    ok "${check%% *}"
  else
    printf '%s\n' "$out" | sed 's/^/    /'
    bad "checks.py ${check%% *}"
  fi
done

# -------------------------------------------------------------------- systemd
step "systemd-analyze verify haul-worker@.service"
if command -v systemd-analyze >/dev/null; then
  tmp=$(mktemp -d)
  # Verify the directives, not this machine: the binary, the haul user and
  # /etc/haul need not exist here.
  sed -e 's#^ExecStart=/usr/local/bin/haul #ExecStart=/bin/true #' \
      -e '/^User=/d' -e '/^Group=/d' \
      -e 's#^EnvironmentFile=/#EnvironmentFile=-/#' \
      "$HERE/systemd/haul-worker@.service" >"$tmp/haul-worker@.service"
  if out=$(cd "$tmp" && systemd-analyze verify --man=no "$tmp/haul-worker@ci.service" 2>&1) && [[ -z $out ]]; then
    ok "no warnings"
  else
    printf '%s\n' "$out" | sed 's/^/    /'
    bad "systemd-analyze verify"
  fi
  rm -rf "$tmp"
  grep -q '^ExecStart=/usr/local/bin/haul worker ' "$HERE/systemd/haul-worker@.service" ||
    bad "haul-worker@.service: ExecStart must run 'haul worker'"
else
  ok "skipped (systemd-analyze not installed)"
fi

# ------------------------------------------------------------------ shellcheck
step "shellcheck"
scripts=("$HERE/validate.sh")
for f in "$REPO"/Tests/multihost/*.sh; do [[ -f $f ]] && scripts+=("$f"); done
if out=$("$BIN/shellcheck" -x "${scripts[@]}" 2>&1); then
  ok "${#scripts[@]} scripts"
else
  printf '%s\n' "$out" | sed 's/^/    /'
  bad "shellcheck"
fi

# ---------------------------------------------------------- fake credentials
step "example credentials"
# Any password inside a postgresql:// URL under deploy/ must be an obvious
# placeholder or a ${VAR} reference.
leaks=$(grep -rnoE 'postgres(ql)?://[^:@/ ]+:[^@ ]+@' "$HERE" |
  awk '{ m = $0; sub(/^[^:]*:[^:]*:/, "", m); if (tolower(m) !~ /example|[$][{]|:[.][.][.]@|:[*]+@/) print }')
if [[ -z $leaks ]]; then
  ok "only placeholders"
else
  printf '%s\n' "$leaks" | sed 's/^/    /'
  bad "credentials that do not look like examples"
fi

echo
if ((${#failures[@]})); then
  echo "deploy/validate.sh: FAIL (${#failures[@]}): ${failures[*]}"
  exit 1
fi
echo "deploy/validate.sh: PASS"
