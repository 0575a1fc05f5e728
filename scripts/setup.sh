#!/usr/bin/env bash
# Installs what pubsubperf needs on a fresh Debian 12 machine (run as root)
# and builds the release binary. Idempotent: installs only what is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

want=()
while read -r p; do
  p="${p%%#*}"; p="${p//[[:space:]]/}"
  [ -z "$p" ] && continue
  dpkg -s "$p" >/dev/null 2>&1 || want+=("$p")
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
cargo build --release --locked -p pubsubperf >&2
