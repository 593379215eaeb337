#!/usr/bin/env bash
# Runs a dev chain: embedded engine, embedded store, funded and printed demo accounts.
# Extra arguments go to `lantaud start` (e.g. --home /tmp/lantau --block-time 500ms).
set -euo pipefail
cd "$(dirname "$0")/.."
# Only what a node needs (libclang, to build RocksDB's bindings); the test tools are the test
# command's.
bash scripts/prereqs.sh node
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/lantau-target}"
exec cargo run --release --locked -p lantau-cli --bin lantaud -- start "$@"
