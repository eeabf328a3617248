#!/usr/bin/env bash
# Installs the Debian packages Haul builds, runs and tests with, if any is missing.
# Idempotent and quiet when everything is there. Needs root (or sudo) on Debian.
set -euo pipefail
packages=(libpq-dev libcurl4-openssl-dev zlib1g-dev libssl-dev libmicrohttpd-dev postgresql nginx-light openssl
          ca-certificates media-types zip unzip tar python3 python3-venv iproute2 aria2 time pkg-config util-linux
          pgbouncer curl chromium chromium-driver libarchive-tools rclone)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "installing: ${missing[*]}" >&2
  sudo=""; [[ $(id -u) == 0 ]] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -qq >/dev/null
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
# Debian's postgresql package may start a cluster of its own; Haul does not need it.
if ! command -v swift >/dev/null 2>&1; then
  echo "swift is not on PATH: install the Swift 6.3 toolchain (this machine kind ships it at /opt/swift)" >&2
  exit 1
fi
