#!/usr/bin/env bash
# Runs the whole test suite (unit, integration, end-to-end over HTTP, property tests).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/prereqs.sh
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/lantau-target}"
# The house rules enforce themselves: formatting (rustfmt.toml), and lints (clippy.toml's
# determinism bans, the workspace lints, each state-machine crate's deny list) with every
# warning an error.
cargo fmt --all --check
cargo clippy --workspace --all-targets --locked -- -D warnings
# Property tests: bounded case counts (PROPTEST_CASES), so CI time stays bounded.
export PROPTEST_CASES="${PROPTEST_CASES:-256}"
# The proofs that a module cannot move a stablecoin around the gate chain are compile_fail
# doctests (nextest does not run doctests).
cargo test --locked --doc --workspace
# The network test of an upgrade resumes with a second build of this tree.
bash scripts/build-upgrade-test.sh
exec cargo nextest run --locked --workspace --no-fail-fast --test-threads 2 "$@"
