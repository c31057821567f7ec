#!/usr/bin/env bash
# Installs what nexthop's build, tests and experiments need on a fresh machine.
# Idempotent: each step checks first. Called by `make` targets; safe to run by hand.
set -euo pipefail

# Rust toolchain components used by `make test` (rustfmt, clippy).
if command -v rustup >/dev/null; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi
command -v cargo >/dev/null || { echo "cargo not found: install Rust (rustup) first" >&2; exit 1; }

# python-ndn: the NDN library real applications use; the wire interop tests run it.
if ! python3 -c "import ndn.encoding" 2>/dev/null; then
  python3 -m pip install --quiet --disable-pip-version-check 'python-ndn==0.5.2'
fi
