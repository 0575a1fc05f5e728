#!/usr/bin/env bash
# The static build: one file that runs on any Linux of its architecture,
# with nothing to install (copy it to the board and run it). It has the
# bindings written in Rust (udp, tcp, uds, intra, shm, iceoryx2, zenoh, and
# the mock) and SQLite compiled in; the C and C++ stacks (cyclonedds,
# fastdds, iceoryx) link shared libraries and are not in it.
#
#   scripts/static.sh              x86-64 (x86_64-unknown-linux-musl, Debian's musl-tools)
#   scripts/static.sh aarch64      64-bit ARM (aarch64-unknown-linux-musl; zig from PyPI compiles SQLite)
#   scripts/static.sh --prepare [TARGET]   no build: installs what the build needs
#
# Prints the binary's path: target/<triple>/release/pubsubperf.
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="$HOME/.cargo/bin:$PATH"
prepare=0
if [ "${1:-}" = "--prepare" ]; then
  prepare=1
  shift
fi

case "${1:-x86_64}" in
  x86_64 | amd64)
    triple=x86_64-unknown-linux-musl
    if ! command -v musl-gcc >/dev/null 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends musl-tools >/dev/null
    fi
    export CC_x86_64_unknown_linux_musl=musl-gcc ;;
  aarch64 | arm64)
    triple=aarch64-unknown-linux-musl
    # No musl cross compiler in Debian 12: zig's C compiler targets musl.
    if ! python3 -c 'import ziglang' 2>/dev/null; then
      python3 -m pip install -q ziglang==0.17.1 >&2
    fi
    # The same path from every clone (./target may link to a build cache):
    # the compiler's path is in the build's fingerprint.
    zigcc="$(realpath -m target)/zig-cc-aarch64-musl"
    mkdir -p target
    # cc-rs adds clang's --target=<rust triple>, which zig does not know.
    cat >"$zigcc" <<'ZIG'
#!/bin/sh
for a do
  shift
  case "$a" in --target=*) ;; *) set -- "$@" "$a" ;; esac
done
exec python3 -m ziglang cc -target aarch64-linux-musl "$@"
ZIG
    chmod +x "$zigcc"
    export CC_aarch64_unknown_linux_musl="$zigcc"
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_LINKER="$zigcc"
    # zig brings musl's start files and libc itself, not Rust's copies.
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C link-self-contained=no" ;;
  *)
    echo "static.sh: TARGET must be x86_64 or aarch64 (got '$1')" >&2
    exit 2 ;;
esac
grep -qx "$triple" <<<"$(rustup target list --installed)" || rustup target add "$triple" >&2
if [ $prepare = 1 ]; then
  exit 0
fi
# A file to copy to a board: no debug info, symbols stripped.
CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols \
  cargo build --release --locked --target "$triple" -p pubsubperf --no-default-features --features rust-only >&2
echo "target/$triple/release/pubsubperf"
