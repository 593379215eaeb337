#!/usr/bin/env bash
# Builds the test build of the upgrade path: this tree with the upgrade `lantau-upgrade-test`,
# which migrates the upgrade module to state version 2 (feature `upgrade-test`; never a
# release). Kept beside lantaud as `lantaud-upgrade-test` for the network test of an upgrade
# (crates/cli/tests/it/testnet.rs); the plain lantaud is rebuilt after it (cached).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/lantau-target}"
cargo build --locked -p lantau-cli --features upgrade-test --bin lantaud
# (a new file: one still running from an earlier test keeps its own)
rm -f "$CARGO_TARGET_DIR/debug/lantaud-upgrade-test"
cp "$CARGO_TARGET_DIR/debug/lantaud" "$CARGO_TARGET_DIR/debug/lantaud-upgrade-test"
cargo build --locked -p lantau-cli --bin lantaud
