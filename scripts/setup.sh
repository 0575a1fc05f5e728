#!/usr/bin/env bash
# Installs what pubsubperf needs on a fresh Debian 12 machine (run as root)
# and builds the release binary. Idempotent: installs only what is missing.
#
#   scripts/setup.sh                           packages and the build (target/release/pubsubperf)
#   scripts/setup.sh --install [--prefix DIR]  then installs the binary, its man pages and
#                                              bash/zsh/fish completions (scripts/install.sh;
#                                              DIR defaults to /usr/local)
#   scripts/setup.sh --no-build                only the packages (scripts/test.sh builds next)
#   scripts/setup.sh --with-connext ...        also RTI Connext's libraries for the connext
#                                              binding (opt in: RTI's licence, see
#                                              scripts/connext.sh), before any of the above
set -euo pipefail
cd "$(dirname "$0")/.."

install=0
build=1
connext=0
install_args=()
if [ "${1:-}" = "--with-connext" ]; then
  connext=1
  shift
fi
if [ "${1:-}" = "--no-build" ]; then
  build=0
elif [ "${1:-}" = "--install" ]; then
  shift
  install=1
  install_args=("$@")
elif [ $# -gt 0 ]; then
  echo "setup.sh: unknown argument '$1' (use --with-connext, then --install [--prefix DIR] or --no-build)" >&2
  exit 2
fi

want=()
while read -r p; do
  p="${p%%#*}"; p="${p//[[:space:]]/}"
  [ -z "$p" ] && continue
  # PACKAGE alone is ambiguous to dpkg once the cross builds installed
  # PACKAGE:arm64 beside it (Multi-Arch: same): then ask for this machine's.
  dpkg -s "$p" >/dev/null 2>&1 || dpkg -s "$p:$(dpkg --print-architecture)" >/dev/null 2>&1 ||
    want+=("$p")
done < scripts/apt-packages.txt
if [ ${#want[@]} -gt 0 ]; then
  echo "setup: installing ${want[*]}" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${want[@]}" >/dev/null
fi
if ! command -v cargo >/dev/null 2>&1; then
  if [ -x "$HOME/.cargo/bin/cargo" ]; then
    export PATH="$HOME/.cargo/bin:$PATH"
  else
    echo "setup: Rust (cargo) is missing; install it with rustup (https://rustup.rs)" >&2
    exit 1
  fi
fi
# The programs and libraries the tests need, each from a package above: a
# test fails naming a missing one, so say it here first, before building.
missing=()
for need in ip:iproute2 nft:nftables sysctl:procps iox-roudi:iceoryx chromium:chromium \
  sockperf:sockperf idlc:cyclonedds-tools ddsperf:cyclonedds-tools fastdds:fastdds-tools \
  pkg-config:pkg-config ssh:openssh-client ssh-keygen:openssh-client sshd:openssh-server \
  debootstrap:debootstrap stress-ng:stress-ng ethtool:ethtool; do
  command -v "${need%%:*}" >/dev/null 2>&1 || missing+=("${need%%:*} (${need#*:})")
done
ldconfig=$(command -v ldconfig || echo /sbin/ldconfig)
# Read once, then searched: `ldconfig -p | grep -q` under pipefail fails
# when grep stops reading before a long cache is written (SIGPIPE, 141).
cache=$("$ldconfig" -p)
for need in libddsc.so:cyclonedds-dev libfastrtps.so:libfastrtps-dev \
  libiceoryx_binding_c.so:libiceoryx-binding-c-dev libsqlite3.so:libsqlite3-dev; do
  grep -qF "${need%%:*}" <<<"$cache" || missing+=("${need%%:*} (${need#*:})")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: still missing after installing: ${missing[*]}" >&2
  exit 1
fi
# cargo fmt and cargo clippy (scripts/test.sh) are rustup components.
if command -v rustup >/dev/null 2>&1; then
  for c in rustfmt clippy; do
    grep -q "^$c" <<<"$(rustup component list --installed 2>/dev/null)" || rustup component add "$c" >&2
  done
fi
if [ $connext = 1 ]; then
  scripts/connext.sh
fi
if [ $build = 1 ]; then
  cargo build --release --locked -p pubsubperf >&2
fi
if [ $install = 1 ]; then
  scripts/install.sh "${install_args[@]}"
fi
