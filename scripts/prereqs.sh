#!/usr/bin/env bash
# Installs what a fresh Debian machine lacks to build and test Lantau: libclang (bindgen for
# librocksdb-sys), cargo-nextest (the test runner), the client tests' npm packages (viem, solc-js,
# CosmJS) and Python packages (grpcio, cosmpy; schemathesis, openapi-spec-validator), and
# CometBFT (go install). Idempotent; quiet when all is present.
#
# `prereqs.sh node` installs only what building and running a node needs (libclang): the dev
# chain's command (scripts/dev.sh) asks for that much. Without an argument, everything the tests
# need too (scripts/test.sh).
set -euo pipefail
WHAT="${1:-test}"
case "$WHAT" in node | test) ;; *)
  echo "usage: prereqs.sh [node|test]" >&2
  exit 2
  ;;
esac

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

if [ "$WHAT" = node ]; then
  exit 0
fi

# rustfmt and clippy: the test command checks formatting and lints (rustup's default profile
# has both; a minimal one does not).
if ! cargo fmt --version >/dev/null 2>&1 || ! cargo clippy --version >/dev/null 2>&1; then
  echo "prereqs: installing the rustfmt and clippy components" >&2
  rustup component add rustfmt clippy
fi

if ! cargo nextest --version >/dev/null 2>&1; then
  echo "prereqs: installing cargo-nextest" >&2
  cargo install cargo-nextest --locked
fi

# The real-client tests' npm packages: viem, ethers and solc-js (tests/evm-client), CosmJS
# (tests/cosmos-client), playwright-core and viem (tests/browser), Hardhat 2 with
# hardhat-toolbox and OpenZeppelin (tests/hardhat); each installed outside the
# work tree (a cache keyed by its lock file) and linked in as node_modules.
ROOT_DIR="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  echo "prereqs: installing nodejs and npm (for the client tests)" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq nodejs npm >/dev/null
fi
for CLIENT in evm-client cosmos-client browser hardhat; do
  CLIENT_DIR="$ROOT_DIR/tests/$CLIENT"
  LOCK_SUM="$(sha256sum "$CLIENT_DIR/package-lock.json" | cut -c1-16)"
  NPM_CACHE_DIR="${LANTAU_CACHE:-$HOME/.cache}/lantau-$CLIENT-$LOCK_SUM"
  if [ ! -f "$NPM_CACHE_DIR/.installed" ]; then
    echo "prereqs: installing the $CLIENT test packages into $NPM_CACHE_DIR" >&2
    mkdir -p "$NPM_CACHE_DIR"
    cp "$CLIENT_DIR/package.json" "$CLIENT_DIR/package-lock.json" "$NPM_CACHE_DIR/"
    (cd "$NPM_CACHE_DIR" && npm ci --no-audit --no-fund --loglevel=error >/dev/null)
    touch "$NPM_CACHE_DIR/.installed"
  fi
  ln -sfn "$NPM_CACHE_DIR/node_modules" "$CLIENT_DIR/node_modules"
done

# Debian's chromium for the browser tests of the portal and the reviewers' console
# (playwright-core drives it through executablePath; no test tool downloads a browser).
if ! command -v chromium >/dev/null 2>&1; then
  echo "prereqs: installing chromium (Debian) for the browser tests" >&2
  SUDO=""
  if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq chromium >/dev/null
fi

# The Python test packages, each in a virtualenv outside the work tree (keyed by its
# requirements), linked in as tests/<client>/.venv: the gRPC client test's grpcio with the
# Cosmos SDK's stubs from cosmpy (tests/grpc-client/requirements.txt), and the REST server's
# OpenAPI check, schemathesis and openapi-spec-validator (tests/openapi/requirements.txt), and
# web3.py for the Ethereum filters test (tests/web3-client/requirements.txt).
for CLIENT in grpc-client openapi web3-client; do
  CLIENT_DIR="$ROOT_DIR/tests/$CLIENT"
  REQ_SUM="$(sha256sum "$CLIENT_DIR/requirements.txt" | cut -c1-16)"
  VENV_DIR="${LANTAU_CACHE:-$HOME/.cache}/lantau-$CLIENT-$REQ_SUM"
  if [ ! -f "$VENV_DIR/.installed" ]; then
    echo "prereqs: installing the $CLIENT test packages ($(grep -v -e '^#' -e '^$' "$CLIENT_DIR/requirements.txt" | cut -d= -f1 | paste -sd' ')) into $VENV_DIR" >&2
    rm -rf "$VENV_DIR"
    # Debian's python3 creates virtualenvs only with python3-venv (its ensurepip); try first, so
    # a python3 that has it (pyenv, another distribution) needs nothing.
    if ! python3 -m venv "$VENV_DIR" >/dev/null 2>&1; then
      echo "prereqs: installing python3-venv (for the $CLIENT test)" >&2
      SUDO=""
      if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
      $SUDO apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq python3-venv >/dev/null
      rm -rf "$VENV_DIR"
      python3 -m venv "$VENV_DIR"
    fi
    "$VENV_DIR/bin/pip" install -q --disable-pip-version-check -r "$CLIENT_DIR/requirements.txt"
    touch "$VENV_DIR/.installed"
  fi
  ln -sfn "$VENV_DIR" "$CLIENT_DIR/.venv"
done

# CometBFT (v0.38, the consensus engine of validator networks) for the testnet tests: built
# from the Go module proxy with `go install`, cached outside the work tree. The tests find it
# there (lantau-node's `testnet::find_cometbft`), as `lantaud testnet` does.
COMETBFT_VERSION="v0.38.26"
COMETBFT_DIR="${LANTAU_CACHE:-$HOME/.cache}/lantau-cometbft-$COMETBFT_VERSION"
if [ ! -x "$COMETBFT_DIR/cometbft" ]; then
  if ! command -v go >/dev/null 2>&1; then
    echo "prereqs: installing golang-go (to build CometBFT)" >&2
    SUDO=""
    if [ "$(id -u)" != "0" ]; then SUDO="sudo"; fi
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq golang-go >/dev/null
  fi
  echo "prereqs: building cometbft $COMETBFT_VERSION into $COMETBFT_DIR (go install)" >&2
  mkdir -p "$COMETBFT_DIR"
  GOBIN="$COMETBFT_DIR" GOFLAGS=-mod=mod go install "github.com/cometbft/cometbft/cmd/cometbft@$COMETBFT_VERSION"
fi
