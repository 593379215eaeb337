#!/usr/bin/env bash
# Writes the golden store of this release: a dev home with data in every module and the
# answers its queries give (crates/node/tests/fixtures/golden/<release>.{tar.gz,answers.json}).
# The next release's test opens it, applies its upgrade and checks every answer
# (crates/node/tests/it/golden.rs). Run once per release, on the release's commit.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/lantau-target}"
exec cargo nextest run --locked --workspace --run-ignored only -E 'test(golden::write_the_golden_store_of_this_release)' "$@"
