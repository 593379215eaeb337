#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build Lantau: libclang (bindgen for
# librocksdb-sys) and cargo-nextest (the test runner). Idempotent; quiet when all is present.
set -euo pipefail

# What bindgen (through clang-sys) loads: libclang.so, libclang-<n>.so, libclang.so.<n> or
# libclang-<n>.so.<n>, from $LIBCLANG_PATH, llvm-config's libdir or the usual library
# directories; plus clang's builtin headers (stddef.h), which it needs to parse RocksDB's C API.
# libclang-cpp.so.<n> (the C++ interface, present on a bare Debian image) is not libclang.
have_libclang() {
  local dirs=() d f lib="" hdr=""
  [ -n "${LIBCLANG_PATH:-}" ] && dirs+=("$LIBCLANG_PATH")
  if command -v llvm-config >/dev/null 2>&1; then dirs+=("$(llvm-config --libdir)"); fi
  dirs+=(/usr/lib/llvm-*/lib /usr/lib/x86_64-linux-gnu /usr/lib/aarch64-linux-gnu /usr/lib64 /usr/lib /usr/local/lib)
  for d in "${dirs[@]}"; do
    for f in "$d"/libclang.so "$d"/libclang-[0-9]*.so "$d"/libclang.so.[0-9]* "$d"/libclang-[0-9]*.so.[0-9]*; do
      if [ -e "$f" ]; then lib="$f"; break 2; fi
    done
  done
  for f in /usr/lib/llvm-*/lib/clang/*/include/stddef.h /usr/lib/clang/*/include/stddef.h; do
    if [ -e "$f" ]; then hdr="$f"; break; fi
  done
  [ -n "$lib" ] && [ -n "$hdr" ]
}

if ! have_libclang; then
  echo "prereqs: installing libclang-dev (needed by librocksdb-sys)" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq libclang-dev >/dev/null
  have_libclang || { echo "prereqs: libclang still not found after installing libclang-dev" >&2; exit 1; }
fi

if ! cargo nextest --version >/dev/null 2>&1; then
  echo "prereqs: installing cargo-nextest" >&2
  cargo install cargo-nextest --locked
fi
