#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build Lantau: libclang (bindgen for
# librocksdb-sys) and cargo-nextest (the test runner). Idempotent; quiet when all is present.
set -euo pipefail

have_libclang() {
  ldconfig -p 2>/dev/null | grep -q 'libclang\(-[0-9.]*\)\?\.so' && return 0
  ls /usr/lib/llvm-*/lib/libclang*.so* >/dev/null 2>&1
}

if ! have_libclang; then
  echo "prereqs: installing libclang-dev (needed by librocksdb-sys)" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang-dev >/dev/null
fi

if ! cargo nextest --version >/dev/null 2>&1; then
  echo "prereqs: installing cargo-nextest" >&2
  cargo install cargo-nextest --locked
fi
