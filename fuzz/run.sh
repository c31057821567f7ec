#!/usr/bin/env bash
# Runs each cargo-fuzz target (the wire decoders, the TagNet header, management elements, the
# INFO format and nfd.conf, the TOML configuration) for a fixed number of executions.
#   fuzz/run.sh [RUNS]        (default 1000000 per target)
# Needs the nightly toolchain (for the sanitizer flags) and cargo-fuzz; installs cargo-fuzz from
# crates.io when it is missing. Each target starts from its seed corpus in fuzz/corpus/<target>.
set -euo pipefail
cd "$(dirname "$0")"
runs=${1:-1000000}
command -v cargo-fuzz >/dev/null || cargo install --locked cargo-fuzz
for target in interest data lp_packet tag_header control_parameters info config; do
  work=$(mktemp -d)
  cp corpus/"$target"/* "$work"/
  echo "== $target: $runs executions"
  cargo +nightly fuzz run "$target" "$work" -- -runs="$runs" -max_len=4096 2>&1 | grep -E "^(#[0-9]+ +DONE|Done|==[0-9]+==ERROR)|panicked" || true
  rm -rf "$work"
done
